"""Which cluster nodes a partition's pods may land on, in the scheduler's terms.

A partition selects a node when the node's labels match its ``node_selector``, every
``NoSchedule``/``NoExecute`` taint on the node is one of its tolerations allow, and — for a GPU
partition — the node offers the partition's GPU resource. Taints the node lifecycle controller
sets for conditions (``node.kubernetes.io/unschedulable``, ``…/not-ready``, ``…/unreachable``,
the pressure taints) do not take a node out of its partitions: they are node *states*
(``drain``, ``down``), which sinfo shows, as Slurm keeps a drained or down node in its
partitions.

A partition is a GPU partition when its configuration says so: ``node_gpus`` of one or more,
or a toleration keyed by its GPU resource (GPU nodes are commonly tainted
``nvidia.com/gpu:NoSchedule`` so that only pods asking for GPUs land there).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any, Iterable, Mapping

from translators.config import PartitionConfig

#: Kubernetes quantity suffixes → multipliers.
SUFFIXES: Mapping[str, Decimal] = {
    "Ki": Decimal(2) ** 10, "Mi": Decimal(2) ** 20, "Gi": Decimal(2) ** 30,
    "Ti": Decimal(2) ** 40, "Pi": Decimal(2) ** 50, "Ei": Decimal(2) ** 60,
    "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "k": Decimal(10) ** 3,
    "M": Decimal(10) ** 6, "G": Decimal(10) ** 9, "T": Decimal(10) ** 12,
    "P": Decimal(10) ** 15, "E": Decimal(10) ** 18,
}
#: Prefix of the taints Kubernetes itself sets from node conditions and cordoning.
CONDITION_TAINT_PREFIX = "node.kubernetes.io/"
#: Taint effects that keep pods off a node (``PreferNoSchedule`` only discourages).
BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


def quantity(text: Any) -> Decimal:
    """A Kubernetes quantity (``500m``, ``16Gi``, ``2``, ``1e3``) as a number; 0 when
    unreadable."""
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


def tolerated(taint: Mapping[str, Any], tolerations: Iterable[Mapping[str, str]]) -> bool:
    """Whether one of ``tolerations`` allows ``taint`` (the scheduler's matching rule: same
    effect or none, same key or an empty key with ``Exists``, same value or ``Exists``)."""
    for toleration in tolerations:
        if toleration.get("effect") not in (None, "", taint.get("effect")):
            continue
        if toleration.get("operator") == "Exists" and not toleration.get("key"):
            return True
        if toleration.get("key") != taint.get("key"):
            continue
        if toleration.get("operator") == "Exists" or \
                (toleration.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def is_gpu_partition(partition: PartitionConfig) -> bool:
    """True when the configuration makes ``partition`` a GPU partition (module docstring)."""
    if partition.node_gpus:
        return True
    return any(dict(t).get("key") == partition.gpu_resource for t in partition.tolerations)


def allocatable(node: Mapping[str, Any], resource: str) -> Decimal:
    """The node's allocatable amount of ``resource`` (0 when it has none)."""
    return quantity(((node.get("status") or {}).get("allocatable") or {}).get(resource))


def selects(partition: PartitionConfig, node: Mapping[str, Any]) -> bool:
    """True when ``partition``'s pods may run on ``node`` (whatever its state)."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    if any(labels.get(k) != v for k, v in partition.node_selector):
        return False
    tolerations = [dict(t) for t in partition.tolerations]
    for taint in (node.get("spec") or {}).get("taints") or []:
        if str(taint.get("key", "")).startswith(CONDITION_TAINT_PREFIX):
            continue
        if taint.get("effect") in BLOCKING_EFFECTS and not tolerated(taint, tolerations):
            return False
    return not is_gpu_partition(partition) or allocatable(node, partition.gpu_resource) > 0
