"""sinfo and ``scontrol show node|partition`` on a cluster: each partition's nodes, in Slurm's
terms.

The partitions are the configuration's; their nodes are those :mod:`.node_selection` says each
selects. A node as Slurm shows it: CPUs, memory and temporary disk from its allocatable
resources (whole CPUs and MiB, rounded down), ``Gres=gpu:N`` from the partition's GPU
resource, features from its labels under the partition's ``feature_label_prefix`` (what
``--constraint`` selects on), and a state from what our jobs' pods request there and from the
node's own condition (:data:`STATE_RULES`). Two kinds of request, whatever the cluster's size:
one LIST of nodes, one LIST of our pods (by label) per namespace the partitions use.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from parsers.formats.sinfo_fields import NodeInfo
from sbatch_k8s.backends.kubernetes.api.client import KubeClient
from sbatch_k8s.backends.kubernetes.api.kinds import NODE, POD
from sbatch_k8s.backends.kubernetes.read.node_selection import allocatable, quantity, selects
from sbatch_k8s.backends.kubernetes.read.pod_view import epoch
from translators.config import ClusterConfig, PartitionConfig

#: Label every object we create carries (our jobs' pods are listed by it).
OUR_PODS = "app.kubernetes.io/managed-by=sbatch-k8s"
#: ``nodeInfo.architecture`` (Go's GOARCH) → what ``uname -m`` prints, as Slurm's ``Arch``.
MACHINES: Mapping[str, str] = {"amd64": "x86_64", "arm64": "aarch64", "386": "i686",
                               "arm": "armv7l"}
#: The reason a drained (cordoned) node shows, and a down (not Ready) one: Slurm's words for
#: a node whose slurmd stopped answering.
CORDONED_REASON = "cordoned"
NOT_RESPONDING_REASON = "Not responding"
#: Node state rules, first match wins: (cordoned, Ready, some CPUs held, all CPUs held) →
#: sinfo's long state and suffix. ``None`` matches either value. Slurm: a drained node with
#: jobs still running is ``draining``; a node that stopped answering gets ``*``.
STATE_RULES: Tuple[Tuple[Optional[bool], Optional[bool], Optional[bool], Optional[bool],
                         str, str], ...] = (
    (True, True, True, None, "draining", ""),
    (True, True, False, None, "drained", ""),
    (True, False, None, None, "drained", "*"),
    (False, False, None, None, "down", "*"),
    (False, True, False, None, "idle", ""),
    (False, True, True, True, "allocated", ""),
    (False, True, True, False, "mixed", ""),
)


@dataclass
class NodeUsage:
    """What our jobs' pods hold on one node: whole CPUs (each pod's request rounded up, as
    Slurm allocates whole CPUs), MiB of memory, extended resources, and when the node was
    last busy (now while a pod is active, else when the last one ended)."""

    cpus: int = 0
    memory_mb: int = 0
    extended: Dict[str, int] = field(default_factory=dict)
    last_busy: Optional[int] = None


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def pod_requests(pod: Mapping[str, Any]) -> Dict[str, Decimal]:
    """A pod's effective requests as the scheduler counts them: the larger of its containers'
    sum (with sidecars) and any one init container's; a resource given only as a limit (as
    extended resources often are) requests that limit."""
    def requests_of(container: Mapping[str, Any]) -> Dict[str, Decimal]:
        resources = container.get("resources") or {}
        merged = dict(resources.get("limits") or {})
        merged.update(resources.get("requests") or {})
        return {k: quantity(v) for k, v in merged.items()}

    spec = pod.get("spec") or {}
    total: Dict[str, Decimal] = {}
    inits = []
    for container in spec.get("initContainers") or []:
        if container.get("restartPolicy") == "Always":
            for k, v in requests_of(container).items():
                total[k] = total.get(k, Decimal(0)) + v
        else:
            inits.append(requests_of(container))
    for container in spec.get("containers") or []:
        for k, v in requests_of(container).items():
            total[k] = total.get(k, Decimal(0)) + v
    for init in inits:
        for k, v in init.items():
            total[k] = max(total.get(k, Decimal(0)), v)
    return total


def _ended_at(pod: Mapping[str, Any]) -> Optional[int]:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    ends = [epoch(((s.get("state") or {}).get("terminated") or {}).get("finishedAt"))
            for s in statuses]
    return max((e for e in ends if e is not None), default=None)


def node_usage(pods: Iterable[Mapping[str, Any]], now: int) -> Dict[str, NodeUsage]:
    """What our pods hold, per node name (pods not yet bound hold nothing; finished ones only
    tell when the node was last busy)."""
    usage: Dict[str, NodeUsage] = {}
    for pod in pods:
        node = (pod.get("spec") or {}).get("nodeName")
        if not node:
            continue
        held = usage.setdefault(node, NodeUsage())
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            ended = _ended_at(pod)
            if ended is not None and held.last_busy != now:
                held.last_busy = max(held.last_busy or 0, ended)
            continue
        requests = pod_requests(pod)
        held.cpus += math.ceil(requests.pop("cpu", Decimal(0)))
        held.memory_mb += math.ceil(requests.pop("memory", Decimal(0)) / 2 ** 20)
        for name, amount in requests.items():
            held.extended[name] = held.extended.get(name, 0) + math.ceil(amount)
        held.last_busy = now
    return usage


def _ready_condition(node: Mapping[str, Any]) -> Mapping[str, Any]:
    conditions = (node.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c.get("type") == "Ready"), {})


def node_state(cordoned: bool, ready: bool, used: int, cpus: int) -> Tuple[str, str]:
    """sinfo's long state and suffix by :data:`STATE_RULES`."""
    facts = (cordoned, ready, used > 0, used >= cpus)
    for *wanted, state, suffix in STATE_RULES:
        if all(w is None or w == f for w, f in zip(wanted, facts)):
            return str(state), str(suffix)
    raise AssertionError(f"no state rule for {facts}")   # the table is total


def _cordon_time(node: Mapping[str, Any]) -> Optional[int]:
    """When the node was cordoned, where the cluster recorded it: the unschedulable taint's
    ``timeAdded``, else the time of the managed-fields entry that set
    ``spec.unschedulable``."""
    for taint in (node.get("spec") or {}).get("taints") or []:
        if taint.get("key") == "node.kubernetes.io/unschedulable" and taint.get("timeAdded"):
            return epoch(taint["timeAdded"])
    for entry in _meta(node).get("managedFields") or []:
        if "f:unschedulable" in ((entry.get("fieldsV1") or {}).get("f:spec") or {}):
            return epoch(entry.get("time"))
    return None


def _address(node: Mapping[str, Any], kind: str) -> str:
    addresses = (node.get("status") or {}).get("addresses") or []
    return next((str(a.get("address")) for a in addresses if a.get("type") == kind), "")


def node_info(node: Mapping[str, Any], usage: NodeUsage, partition: PartitionConfig
              ) -> NodeInfo:
    """One node as sinfo and ``scontrol show node`` show it in ``partition``."""
    name = str(_meta(node)["name"])
    cpus = max(int(allocatable(node, "cpu")), 1)
    used = min(usage.cpus, cpus)
    cordoned = bool((node.get("spec") or {}).get("unschedulable"))
    ready = _ready_condition(node)
    is_ready = ready.get("status") == "True"
    state, suffix = node_state(cordoned, is_ready, used, cpus)
    if cordoned:
        reason, reason_time = CORDONED_REASON, _cordon_time(node)
    elif not is_ready:
        reason, reason_time = NOT_RESPONDING_REASON, epoch(ready.get("lastTransitionTime"))
    else:
        reason, reason_time = "", None
    gpus = int(allocatable(node, partition.gpu_resource))
    labels = _meta(node).get("labels") or {}
    prefix = partition.feature_label_prefix
    features = ",".join(sorted(k[len(prefix):] for k in labels if k.startswith(prefix)
                               and len(k) > len(prefix)))
    machine = ((node.get("status") or {}).get("nodeInfo") or {})
    system = str(machine.get("operatingSystem") or "")
    kernel = str(machine.get("kernelVersion") or "")
    arch = str(machine.get("architecture") or "")
    return NodeInfo(
        name, state, cpus, used, max(int(allocatable(node, "memory") / 2 ** 20), 1),
        sockets=cpus, cores=1, threads=1, gres=f"gpu:{gpus}" if gpus else "",
        features=features, reason=reason,
        tmp_disk_mb=int(allocatable(node, "ephemeral-storage") / 2 ** 20),
        state_suffix=suffix, hostname=_address(node, "Hostname") or name,
        alloc_memory_mb=usage.memory_mb,
        alloc_gpus=min(usage.extended.get(partition.gpu_resource, 0), gpus),
        arch=MACHINES.get(arch, arch), address=_address(node, "InternalIP"),
        os=f"{system.capitalize()} {kernel}".strip(),
        version=str(machine.get("kubeletVersion") or ""),
        start_time=epoch(ready.get("lastTransitionTime")) if is_ready else None,
        last_busy=usage.last_busy, reason_time=reason_time)


def list_our_pods(client: KubeClient, namespaces: Iterable[str]) -> List[Dict[str, Any]]:
    """Our jobs' pods in ``namespaces`` (one LIST by label each)."""
    pods: List[Dict[str, Any]] = []
    for namespace in sorted(set(namespaces)):
        pods += client.list(POD, namespace, OUR_PODS)[0]
    return pods


def nodes_by_partition(config: ClusterConfig, nodes: Sequence[Mapping[str, Any]],
                       pods: Iterable[Mapping[str, Any]], now: int
                       ) -> Dict[str, Tuple[NodeInfo, ...]]:
    """Every partition of ``config`` → its nodes (by name), from the listed objects."""
    usage = node_usage(pods, now)
    ordered = sorted(nodes, key=lambda n: str(_meta(n).get("name")))
    empty = NodeUsage()
    return {p.name: tuple(node_info(n, usage.get(str(_meta(n)["name"]), empty), p)
                          for n in ordered if selects(p, n))
            for p in config.partitions}


def partition_nodes(client: KubeClient, config: ClusterConfig, namespaces: Iterable[str]
                    ) -> Dict[str, Tuple[NodeInfo, ...]]:
    """The nodes of every partition of ``config`` (our pods read from ``namespaces``)."""
    nodes, _ = client.list(NODE, None)
    return nodes_by_partition(config, nodes, list_our_pods(client, namespaces),
                              int(time.time()))
