"""sinfo on a cluster: the nodes each partition selects, in Slurm's terms.

A partition's nodes are the cluster's nodes whose labels match its ``node_selector`` and
whose ``NoSchedule``/``NoExecute`` taints its tolerations allow. A node's state: cordoned →
``drained``, not Ready → ``down`` (not responding, ``*``), otherwise from the CPUs our jobs'
pods request on it: none → ``idle``, all → ``allocated``, some → ``mixed``. One LIST of nodes and
one of our pods per namespace, whatever the cluster's size.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any, Dict, Iterable, List, Mapping, Sequence, Tuple

from parsers.formats.sinfo_fields import NodeInfo
from sbatch_k8s.backends.kubernetes.client import KubeClient
from sbatch_k8s.backends.kubernetes.kinds import NODE, POD
from translators.config import ClusterConfig, PartitionConfig

#: Kubernetes quantity suffixes → multipliers.
SUFFIXES: Mapping[str, Decimal] = {
    "Ki": Decimal(2) ** 10, "Mi": Decimal(2) ** 20, "Gi": Decimal(2) ** 30,
    "Ti": Decimal(2) ** 40, "Pi": Decimal(2) ** 50, "Ei": Decimal(2) ** 60,
    "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "k": Decimal(10) ** 3,
    "M": Decimal(10) ** 6, "G": Decimal(10) ** 9, "T": Decimal(10) ** 12,
    "P": Decimal(10) ** 15, "E": Decimal(10) ** 18,
}


def quantity(text: Any) -> Decimal:
    """A Kubernetes quantity (``500m``, ``16Gi``, ``2``) as a number; 0 when unreadable."""
    value = str(text or "0").strip()
    for suffix in sorted(SUFFIXES, key=len, reverse=True):
        if value.endswith(suffix):
            try:
                return Decimal(value[: -len(suffix)]) * SUFFIXES[suffix]
            except InvalidOperation:
                return Decimal(0)
    try:
        return Decimal(value)
    except InvalidOperation:
        return Decimal(0)


def _tolerated(taint: Mapping[str, Any], tolerations: Iterable[Mapping[str, str]]) -> bool:
    for toleration in tolerations:
        if toleration.get("effect") not in (None, "", taint.get("effect")):
            continue
        if toleration.get("operator") == "Exists" and not toleration.get("key"):
            return True
        if toleration.get("key") != taint.get("key"):
            continue
        if toleration.get("operator") == "Exists" or \
                toleration.get("value") == taint.get("value"):
            return True
    return False


def selects(partition: PartitionConfig, node: Mapping[str, Any]) -> bool:
    """True when ``partition``'s pods may run on ``node``."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    if any(labels.get(k) != v for k, v in partition.node_selector):
        return False
    tolerations = [dict(t) for t in partition.tolerations]
    taints = (node.get("spec") or {}).get("taints") or []
    return all(_tolerated(t, tolerations) for t in taints
               if t.get("effect") in ("NoSchedule", "NoExecute"))


def _ready(node: Mapping[str, Any]) -> bool:
    conditions = (node.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def node_info(node: Mapping[str, Any], used_cpus: int, gpu_resource: str) -> NodeInfo:
    """One node as sinfo shows it."""
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    cpus = max(int(quantity(allocatable.get("cpu"))), 1)
    memory_mb = max(int(quantity(allocatable.get("memory")) / (2 ** 20)), 1)
    gpus = int(quantity(allocatable.get(gpu_resource)))
    used = min(used_cpus, cpus)
    if (node.get("spec") or {}).get("unschedulable"):
        state, suffix = "drained", ""
    elif not _ready(node):
        state, suffix = "down", "*"
    else:
        state = "idle" if used == 0 else "allocated" if used >= cpus else "mixed"
        suffix = ""
    name = node["metadata"]["name"]
    return NodeInfo(name, state, cpus, used, memory_mb, gres=f"gpu:{gpus}" if gpus else "",
                    state_suffix=suffix, hostname=name)


def _cpus_in_use(pods: Sequence[Mapping[str, Any]]) -> Dict[str, int]:
    """CPUs our live pods request, per node (rounded up, as Slurm counts whole CPUs)."""
    used: Dict[str, Decimal] = {}
    for pod in pods:
        node = (pod.get("spec") or {}).get("nodeName")
        if not node or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        for container in (pod.get("spec") or {}).get("containers") or []:
            requests = (container.get("resources") or {}).get("requests") or {}
            used[node] = used.get(node, Decimal(0)) + quantity(requests.get("cpu"))
    return {node: int(-(-value // 1)) for node, value in used.items()}


def partition_nodes(client: KubeClient, config: ClusterConfig, namespaces: Iterable[str]
                    ) -> Dict[str, Tuple[NodeInfo, ...]]:
    """The nodes of every partition of ``config`` (our pods read from ``namespaces``)."""
    nodes, _ = client.list(NODE, None)
    pods: List[Dict[str, Any]] = []
    for namespace in sorted(set(namespaces)):
        pods += client.list(POD, namespace, "app.kubernetes.io/managed-by=sbatch-k8s")[0]
    used = _cpus_in_use(pods)
    out: Dict[str, Tuple[NodeInfo, ...]] = {}
    for partition in config.partitions:
        chosen: List[NodeInfo] = [
            node_info(n, used.get(n["metadata"]["name"], 0), partition.gpu_resource)
            for n in sorted(nodes, key=lambda n: n["metadata"]["name"]) if selects(partition, n)]
        out[partition.name] = tuple(chosen)
    return out
