"""Whole-node requests on a cluster: the size of a partition's nodes, read from the cluster.

``--exclusive`` gives a job whole nodes. A partition that configures ``node_cpus`` (and
``node_gpus``) says how big a node is; one that does not gets the size from the cluster at
submission: the allocatable CPUs and GPUs of the nodes the partition selects that can take
pods now (Ready, not cordoned), the smallest of them, so that every pod fits on any of them.
A node without GPUs among them leaves the GPU count open (an exclusive job then takes no GPUs
it did not ask for). Allocatable CPUs are rounded down to whole CPUs; what daemon pods
already request on a node is not subtracted (sbatch-k8s may not read other namespaces).

The answer is cached for :data:`CACHE_S` seconds in the state directory (``node-shapes.json``,
keyed by API server and partition), so that a burst of submissions makes one LIST of nodes.
When the cluster cannot be asked (no permission to list nodes, no usable node), the job is
placed as before and sbatch says that only its own request is asked for.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional

from parsers.allocation import NodeShape
from sbatch_k8s.backends.kubernetes.api.client import KubeClient, KubeError
from sbatch_k8s.backends.kubernetes.api.kinds import NODE
from sbatch_k8s.backends.kubernetes.read.node_selection import allocatable, selects
from translators.config import PartitionConfig

if TYPE_CHECKING:
    from sbatch_k8s.submission_plan import SubmissionPlan

#: How long a partition's node size read from the cluster is reused.
CACHE_S = 60
CACHE_FILE = "node-shapes.json"


@dataclasses.dataclass(frozen=True)
class ClusterShape:
    """The smallest usable node of a partition: CPUs, GPUs (None: open) and how many nodes
    it was read from."""

    cpus: int
    gpus: Optional[int]
    nodes: int


def _usable(node: Mapping[str, Any]) -> bool:
    if (node.get("spec") or {}).get("unschedulable"):
        return False
    conditions = (node.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def shape_of_nodes(partition: PartitionConfig, nodes: List[Mapping[str, Any]]
                   ) -> Optional[ClusterShape]:
    """The size of ``partition``'s usable nodes among ``nodes`` (None when it has none)."""
    usable = [n for n in nodes if selects(partition, n) and _usable(n)]
    cpus = [int(allocatable(n, "cpu")) for n in usable]
    gpus = [int(allocatable(n, partition.gpu_resource)) for n in usable]
    if not usable or min(cpus) < 1:
        return None
    return ClusterShape(min(cpus), min(gpus) or None, len(usable))


def _cache_path(environ: Mapping[str, str]) -> str:
    from sbatch_k8s.paths import state_dir

    return os.path.join(state_dir(environ), CACHE_FILE)


def _read_cache(environ: Mapping[str, str]) -> Dict[str, Any]:
    try:
        with open(_cache_path(environ)) as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _write_cache(environ: Mapping[str, str], data: Dict[str, Any]) -> None:
    """Best effort: a state directory that cannot be written only costs a LIST next time."""
    from sbatch_k8s.paths import make_state_dir

    try:
        make_state_dir(environ)
        path = _cache_path(environ)
        temporary = f"{path}.{os.getpid()}"
        with open(temporary, "w") as f:
            json.dump(data, f)
        os.replace(temporary, path)
    except Exception:   # noqa: BLE001 - a cache, never a reason to fail a submission
        return


def cluster_shape(client: KubeClient, partition: PartitionConfig, environ: Mapping[str, str],
                  now: Optional[float] = None) -> Optional[ClusterShape]:
    """``partition``'s node size from the cluster (cached, see the module docstring); None
    when the cluster cannot tell."""
    now = time.time() if now is None else now
    key = f"{client.target.server}|{partition.name}"
    cache = _read_cache(environ)
    entry = cache.get(key)
    if isinstance(entry, dict) and now - float(entry.get("time", 0)) < CACHE_S:
        return ClusterShape(**entry["shape"]) if entry.get("shape") else None
    try:
        nodes, _ = client.list(NODE, None)
    except KubeError:
        return None
    shape = shape_of_nodes(partition, nodes)
    cache = {k: v for k, v in cache.items()
             if isinstance(v, dict) and now - float(v.get("time", 0)) < CACHE_S}
    cache[key] = {"time": now, "shape": dataclasses.asdict(shape) if shape else None}
    _write_cache(environ, cache)
    return shape


def _count(n: int, what: str) -> str:
    return f"{n} {what}" if n == 1 else f"{n} {what}s"


def plan_on_cluster(plan: "SubmissionPlan", client: KubeClient, environ: Mapping[str, str]
                    ) -> "SubmissionPlan":
    """``plan`` on the cluster: an ``--exclusive`` job on a partition without
    ``node_cpus``/``node_gpus`` is sized by the nodes read from the cluster, and sbatch says
    what each pod then requests."""
    from sbatch_k8s.submission_plan import node_shape

    job, partition = plan.job, plan.partition
    configured = node_shape(partition)
    if job.exclusive != "node" or (configured.cpus is not None and configured.gpus is not None):
        return plan
    found = cluster_shape(client, partition, environ)
    if found is None:
        return plan
    shape = NodeShape(configured.cpus or found.cpus,
                      configured.gpus if configured.gpus is not None else found.gpus,
                      configured.memory_mb)
    allocation = plan.on_nodes(shape).allocation
    note = (f"--exclusive: partition {partition.name} does not configure its node size "
            f"(node_cpus, node_gpus); its smallest Ready node of {found.nodes} offers "
            f"{_count(shape.cpus or 0, 'CPU')}"
            + (f" and {_count(shape.gpus, 'GPU')}" if shape.gpus else "")
            + f" (read from the cluster), so each pod requests "
            f"{_count(max(allocation.cpus_per_node), 'CPU')} and "
            f"{_count(allocation.gpus_per_node, 'GPU')}")
    return plan.on_nodes(shape, note)
