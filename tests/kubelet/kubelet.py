"""The test kubelet: nodes registered, pods bound to them run as local processes.

One watch on all pods (re-listed after any watch error, and every :data:`RELIST_S` seconds)
feeds everything: pods bound to this kubelet's nodes get a :class:`PodWorker`; every pod with
a ``subdomain`` gets an address and an entry in its group's hosts files, whichever node it is
bound to, so names resolve as soon as a pod exists. An Indexed Job pod also reserves the
names of all its Job's indexes (``<job>-0 … <job>-<completions-1>``), so the first pod can
name peers the Job controller has not created yet.
"""

from __future__ import annotations

import logging
import os
import random
import re
import shutil
import tempfile
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from tests.kubelet.addresses import AddressPool, HostsRegistry
from tests.kubelet.api import KubeApi, items, owner_job
from tests.kubelet.lifecycle import PodServices
from tests.kubelet.log_server import LogServer
from tests.kubelet.nodes import NodeKeeper, NodeShape, node_address
from tests.kubelet.podspec import pod_hostname
from tests.kubelet.volumes import refresh_pod_volumes
from tests.kubelet.worker import PodWorker

RELIST_S = 30.0
WATCH_READ_TIMEOUT_S = 2.0
STOP_TIMEOUT_S = 10.0
INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
#: A pod's name resolves for its peers this long after the pod appears, by default: a real
#: cluster DNS is never there first (seen on real nodes: a second or more), so no test may
#: pass only because names resolve at once.
DNS_DELAY_S = 0.3
#: Up to this long between a pod's deletion and its SIGTERM (seen on real nodes: tens of ms).
SIGTERM_JITTER_S = 0.1
log = logging.getLogger("tests.kubelet")


class TestKubelet:
    """Registers ``nodes`` Ready nodes and runs the pods bound to them; a context manager.

    ``volume_dir``: where ``persistentVolumeClaim``/``nfs``/``hostPath`` volumes map (pods
    that use them fail without it). ``root_dir``: where pod files and logs go (a new
    temporary directory by default, removed on stop). ``dns_delay_s``: how long after a pod
    appears its name resolves for its peers (and its own ``<host>.<subdomain>``), as a
    cluster DNS lags behind the kubelet (:mod:`tests.kubelet.addresses`). A deleted pod gets
    its SIGTERM after a random delay up to ``sigterm_jitter_s``, plus ``sigterm_delay(pod)``
    when given: as each real node's kubelet sends its own, a job's pods get theirs at
    different times, in either order. ``memory_cgroups``: containers with a memory limit
    run in a memory cgroup of their own where this machine allows it (the kernel kills
    what goes over, the container ends ``OOMKilled``: :mod:`tests.kubelet.memory_cgroups`).
    """

    __test__ = False          # not a pytest test class

    def __init__(self, kubeconfig: str, nodes: int = 1, name_prefix: str = "kubelet-",
                 cpus: str = "4", memory: str = "16Gi", gpus: int = 0,
                 volume_dir: Optional[str] = None, root_dir: Optional[str] = None,
                 dns_delay_s: float = DNS_DELAY_S,
                 sigterm_delay: Optional[Callable[[Dict[str, Any]], float]] = None,
                 sigterm_jitter_s: float = SIGTERM_JITTER_S,
                 memory_cgroups: bool = False) -> None:
        self.kubeconfig = kubeconfig
        self.node_names = [f"{name_prefix}{i}" for i in range(nodes)]
        self.shape = NodeShape(cpus=str(cpus), memory=str(memory), gpus=int(gpus))
        self.volume_dir = volume_dir
        self._own_root = root_dir is None
        self.root_dir = root_dir or tempfile.mkdtemp(prefix="sbatch-k8s-kubelet-")
        shm = "/dev/shm" if os.path.isdir("/dev/shm") else self.root_dir
        self.memory_dir = tempfile.mkdtemp(prefix="sbatch-k8s-kubelet-", dir=shm)
        self.api: Optional[KubeApi] = None
        self.pool = AddressPool()
        self.hosts = HostsRegistry(self.pool, dns_delay_s)
        self.sigterm_delay = sigterm_delay
        self.sigterm_jitter_s = sigterm_jitter_s
        self.memory_cgroups = memory_cgroups
        self._workers: Dict[str, PodWorker] = {}
        self._groups: Dict[str, Tuple[str, str]] = {}      # uid -> (namespace, subdomain)
        self._jobs: Dict[Tuple[str, str, str], Tuple[str, ...]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._watcher = threading.Thread(target=self._watch_loop, name="kubelet-watch",
                                         daemon=True)
        self._nodes: Optional[NodeKeeper] = None
        self._services: Optional[PodServices] = None
        self.log_server: Optional[LogServer] = None

    # life
    def start(self) -> "TestKubelet":
        """Register the nodes and start running pods; returns once the nodes exist."""
        self.api = KubeApi(self.kubeconfig)
        allocatable = {"cpu": self.shape.cpus, "memory": self.shape.memory,
                       "nvidia.com/gpu": str(self.shape.gpus)}
        self._services = PodServices(
            api=self.api, hosts=self.hosts, root_dir=self.root_dir,
            memory_dir=self.memory_dir, volume_dir=self.volume_dir,
            server=self.api.server_address(), host_ip=self.host_ip,
            allocatable=allocatable, on_worker_done=self._worker_done,
            sigterm_delay_s=self._sigterm_delay_s, memory_cgroups=self.memory_cgroups)
        self.log_server = LogServer(self.worker_of, self.root_dir).start()
        self._nodes = NodeKeeper(self.api, self.node_names,
                                 self.shape._replace(kubelet_port=self.log_server.port))
        self._nodes.register()
        self._watcher.start()
        return self

    def _sigterm_delay_s(self, pod: Dict[str, Any]) -> float:
        fixed = self.sigterm_delay(pod) if self.sigterm_delay is not None else 0.0
        return fixed + random.uniform(0.0, self.sigterm_jitter_s)

    def stop(self) -> None:
        """Kill every container, unregister the nodes, remove the kubelet's files."""
        self._stop.set()
        with self._lock:
            workers = list(self._workers.values())
        for worker in workers:
            worker.shutdown()
        for worker in workers:
            worker.join(STOP_TIMEOUT_S)
        if self._watcher.is_alive():
            self._watcher.join(STOP_TIMEOUT_S)
        if self._nodes is not None:
            self._nodes.unregister()
        if self.api is not None:
            self.api.close()
        if self.log_server is not None:
            self.log_server.stop()
        self.pool.close()
        shutil.rmtree(self.memory_dir, ignore_errors=True)
        if self._own_root:
            shutil.rmtree(self.root_dir, ignore_errors=True)

    def __enter__(self) -> "TestKubelet":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # what tests ask
    def host_ip(self, node_name: str) -> str:
        """The address node ``node_name`` reports."""
        index = self.node_names.index(node_name) if node_name in self.node_names else 0
        return node_address(index)

    def worker_of(self, namespace: str, name: str) -> Optional[PodWorker]:
        """The worker of pod ``name`` if it runs here."""
        with self._lock:
            return next((w for w in self._workers.values()
                         if (w.namespace, w.name) == (namespace, name)), None)

    def pod_address(self, namespace: str, name: str) -> Optional[str]:
        """The loopback address pod ``name`` really uses (``127.10.x.y``), if it runs here."""
        worker = self.worker_of(namespace, name)
        return None if worker is None else worker.address

    def log_path(self, namespace: str, name: str, container: Optional[str] = None
                 ) -> Optional[str]:
        """The log file of a container (the first one by default) of pod ``name`` — also
        after the pod is gone, until the kubelet stops."""
        logs = os.path.join(self.root_dir, "logs")
        prefix = f"{namespace}_{name}_"
        for entry in sorted(os.listdir(logs)) if os.path.isdir(logs) else []:
            if entry.startswith(prefix) and "_" not in entry[len(prefix):]:
                files = sorted(os.listdir(os.path.join(logs, entry)))
                wanted = f"{container}.log" if container else (files[0] if files else "")
                if wanted in files:
                    return os.path.join(logs, entry, wanted)
        return None

    def logs(self, namespace: str, name: str, container: Optional[str] = None) -> str:
        """What a container of pod ``name`` wrote to stdout and stderr (``kubectl logs``)."""
        path = self.log_path(namespace, name, container)
        if path is None:
            return ""
        with open(path, errors="replace") as f:
            return f.read()

    # the watch
    def _watch_loop(self) -> None:
        version: Optional[str] = None
        listed_at = 0.0
        while not self._stop.is_set():
            try:
                if version is None or time.monotonic() - listed_at > RELIST_S:
                    listing = self.api.list_pods()
                    version = (listing.get("metadata") or {}).get("resourceVersion")
                    listed_at = time.monotonic()
                    self._sync(items(listing))
                for event in self.api.watch_pods(version, int(RELIST_S),
                                                 WATCH_READ_TIMEOUT_S):
                    if self._stop.is_set():
                        break
                    pod = event.get("object") or {}
                    if event.get("type") == "ERROR":       # 410 Gone: list again
                        version = None
                        break
                    version = (pod.get("metadata") or {}).get("resourceVersion") or version
                    if event.get("type") != "BOOKMARK":
                        self._on_pod(event["type"], pod)
            except Exception as e:
                if getattr(e, "status", None) is not None:      # an API error: list again
                    version = None
                    self._stop.wait(0.2)
                elif "timed out" not in str(e).lower():
                    log.debug("pod watch interrupted: %s", e)
                    self._stop.wait(0.2)

    def _sync(self, pods: List[Dict[str, Any]]) -> None:
        """Bring the kubelet in line with a full listing (catches missed events)."""
        present = {p["metadata"]["uid"] for p in pods}
        with self._lock:
            missing = [uid for uid in self._groups if uid not in present]
        for uid in missing:
            self._on_pod("DELETED", {"metadata": {"uid": uid}})
        for pod in pods:
            self._on_pod("MODIFIED", pod)

    def _on_pod(self, kind: str, pod: Dict[str, Any]) -> None:
        meta = pod.get("metadata") or {}
        uid = meta.get("uid", "")
        if kind == "DELETED":
            with self._lock:
                group = self._groups.pop(uid, None)
                worker = self._workers.get(uid)
            if worker is not None:
                worker.vanish()
            if group is not None:
                self.hosts.remove_pod(group[0], group[1], uid)
            return
        spec = pod.get("spec") or {}
        namespace = meta.get("namespace", "default")
        subdomain = spec.get("subdomain") or ""
        ours = spec.get("nodeName") in self.node_names
        if not (subdomain or ours):
            return
        with self._lock:
            self._groups[uid] = (namespace, subdomain)
        address = self.hosts.add_pod(namespace, subdomain, uid, pod_hostname(pod),
                                     self._peer_names(pod) if subdomain else ())
        if ours:
            self._run_or_update(pod, address)

    def _run_or_update(self, pod: Dict[str, Any], address: str) -> None:
        uid = pod["metadata"]["uid"]
        with self._lock:
            worker = self._workers.get(uid)
            if worker is None and not self._stop.is_set():
                phase = (pod.get("status") or {}).get("phase")
                if phase in ("Succeeded", "Failed"):
                    if pod["metadata"].get("deletionTimestamp"):
                        self.api.delete_pod_now(pod["metadata"]["namespace"],
                                                pod["metadata"]["name"], uid)
                    return
                worker = PodWorker(self._services, pod, address)
                self._workers[uid] = worker
                worker.start()
                return
        if worker is not None:
            worker.update(pod)
            refresh_pod_volumes(self._services, worker, pod)

    def _worker_done(self, worker: PodWorker) -> None:
        with self._lock:
            if self._workers.get(worker.uid) is worker and worker.vanished:
                del self._workers[worker.uid]

    def _peer_names(self, pod: Dict[str, Any]) -> Tuple[str, ...]:
        """Hostnames of every index of the pod's Indexed Job (cached per Job)."""
        meta = pod["metadata"]
        job = owner_job(pod)
        if job is None or INDEX_ANNOTATION not in (meta.get("annotations") or {}):
            return ()
        hostname = (pod.get("spec") or {}).get("hostname") or ""
        if not re.fullmatch(re.escape(job) + r"-[0-9]+", hostname):
            return ()
        owner_uid = next((ref.get("uid", "") for ref in meta.get("ownerReferences") or []
                          if ref.get("name") == job), "")
        key = (meta.get("namespace", "default"), job, owner_uid)
        if key not in self._jobs:
            try:
                manifest = self.api.get_job(key[0], job) or {}
            except Exception as e:
                log.warning("cannot read Job %s/%s: %s", key[0], job, e)
                return ()
            count = int((manifest.get("spec") or {}).get("completions") or 0)
            self._jobs[key] = tuple(f"{job}-{i}" for i in range(count))
        return self._jobs[key]
