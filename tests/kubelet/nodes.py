"""Node registration and heartbeats, as a kubelet keeps its Node object alive.

Each node is registered with its capacity (= allocatable), the standard labels and a Ready
condition, then renewed every :data:`HEARTBEAT_S` seconds: the node's Lease in
``kube-node-lease`` (what the node lifecycle controller watches) and the conditions'
``lastHeartbeatTime``. A server without the coordination API or the namespace just gets no
Lease. The InternalIP addresses are fake non-loopback ones (``10.11.0.<i+1>``, the pods'
``hostIP``), like the pods' IPs; the Hostname address, ``localhost``, and the kubelet port
(``daemonEndpoints``) are where the API server reaches the log endpoint (:mod:`.log_server`).
The nodes report the API server's own version as their kubelet's (a kubelet newer than its
server is outside the version skew policy), :data:`DEFAULT_KUBELET_VERSION` when the server
does not say.
"""

from __future__ import annotations

import logging
import platform
import threading
import time
from typing import Any, Dict, List, NamedTuple

from tests.kubelet.api import KubeApi
from tests.kubelet.log_server import ADVERTISED_HOST
from tests.kubelet.status import rfc3339

HEARTBEAT_S = 5.0
LEASE_NAMESPACE = "kube-node-lease"
LEASE_DURATION_S = 40
GPU_RESOURCE = "nvidia.com/gpu"
DEFAULT_KUBELET_VERSION = "v1.29.0"
log = logging.getLogger("tests.kubelet")


class NodeShape(NamedTuple):
    """What every node of this kubelet offers."""

    cpus: str = "4"
    memory: str = "16Gi"
    gpus: int = 0
    pods: int = 110
    kubelet_port: int = 10250


def node_address(index: int) -> str:
    """The address node ``index`` reports (``status.hostIP`` of its pods)."""
    return f"10.11.{index // 250}.{index % 250 + 1}"


def node_conditions(now: float, since: float) -> List[Dict[str, Any]]:
    """A healthy node's conditions."""
    healthy = [("MemoryPressure", "False", "KubeletHasSufficientMemory"),
               ("DiskPressure", "False", "KubeletHasNoDiskPressure"),
               ("PIDPressure", "False", "KubeletHasSufficientPID"),
               ("Ready", "True", "KubeletReady")]
    return [{"type": kind, "status": status, "reason": reason,
             "message": "test kubelet", "lastHeartbeatTime": rfc3339(now),
             "lastTransitionTime": rfc3339(since)} for kind, status, reason in healthy]


def node_manifest(name: str, index: int, shape: NodeShape, now: float,
                  kubelet_version: str = DEFAULT_KUBELET_VERSION) -> Dict[str, Any]:
    """The Node object a kubelet registers."""
    resources = {"cpu": shape.cpus, "memory": shape.memory, "pods": str(shape.pods),
                 "ephemeral-storage": "100Gi"}
    if shape.gpus:
        resources[GPU_RESOURCE] = str(shape.gpus)
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
            "beta.kubernetes.io/arch": "amd64", "node.kubernetes.io/instance-type": "test",
            "sbatch-k8s.io/test-kubelet": "true"},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"}},
        "spec": {},
        "status": node_status(index, resources, now, now, shape.kubelet_port,
                              kubelet_version),
    }


def node_status(index: int, resources: Dict[str, str], now: float, since: float,
                kubelet_port: int = 10250,
                kubelet_version: str = DEFAULT_KUBELET_VERSION) -> Dict[str, Any]:
    """The status a kubelet reports for its node."""
    return {
        "capacity": dict(resources), "allocatable": dict(resources),
        "conditions": node_conditions(now, since),
        "addresses": [{"type": "InternalIP", "address": node_address(index)},
                      {"type": "Hostname", "address": ADVERTISED_HOST}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": kubelet_port}},
        "nodeInfo": {"machineID": "", "systemUUID": "", "bootID": "",
                     "kernelVersion": platform.release(), "osImage": "sbatch-k8s test kubelet",
                     "containerRuntimeVersion": "test-kubelet://1",
                     "kubeletVersion": kubelet_version,
                     "kubeProxyVersion": "", "operatingSystem": "linux",
                     "architecture": "amd64"},
    }


def lease_manifest(name: str, now: float) -> Dict[str, Any]:
    """The node's Lease, renewed at ``now``."""
    micro = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + \
        ".%06dZ" % int((now % 1) * 1e6)
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name, "namespace": LEASE_NAMESPACE},
            "spec": {"holderIdentity": name, "leaseDurationSeconds": LEASE_DURATION_S,
                     "renewTime": micro}}


class NodeKeeper:
    """Registers the nodes, keeps them Ready from a thread, unregisters them on stop."""

    def __init__(self, api: KubeApi, names: List[str], shape: NodeShape) -> None:
        self.api = api
        self.names = names
        self.shape = shape
        self._since = time.time()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="kubelet-heartbeat",
                                        daemon=True)
        self._leases = True

    def register(self) -> None:
        """Create the Node objects (status included) and start the heartbeat."""
        now = time.time()
        version = self.api.server_version() or DEFAULT_KUBELET_VERSION
        for index, name in enumerate(self.names):
            node = node_manifest(name, index, self.shape, now, version)
            self.api.create_node(node)
            self.api.patch_node_status(name, node["status"])   # servers may drop it on create
        self._renew(now)
        self._thread.start()

    def _renew(self, now: float) -> None:
        for index, name in enumerate(self.names):
            try:
                self.api.patch_node_status(name, {"conditions": node_conditions(now,
                                                                                 self._since)})
            except Exception as e:
                log.warning("heartbeat of node %s failed: %s", name, e)
            if self._leases:
                try:
                    self.api.renew_lease(lease_manifest(name, now))
                except Exception as e:
                    log.info("no node leases on this server (%s); heartbeats only", e)
                    self._leases = False

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            self._renew(time.time())

    def unregister(self) -> None:
        """Stop the heartbeat and delete the nodes and their Leases."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(HEARTBEAT_S + 30)
        for name in self.names:
            try:
                self.api.delete_node(name)
                if self._leases:
                    self.api.delete_lease(LEASE_NAMESPACE, name)
            except Exception as e:
                log.warning("could not unregister node %s: %s", name, e)
