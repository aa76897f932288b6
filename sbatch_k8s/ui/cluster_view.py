"""The Cluster page: partitions as ``sinfo`` lists them, and each node's CPUs and GPUs
(allocated and idle, drawn by the page) with the jobs running on it."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Sequence

from parsers.formats.scontrol_nodes import gpu_count
from parsers.formats.sinfo_format import format_sinfo
from parsers.formats.sinfo_fields import NodeInfo, PartitionInfo


def node_json(node: NodeInfo, jobs: Sequence[str]) -> Dict[str, Any]:
    """One node: its state, CPUs and GPUs (total, allocated), memory, the jobs on it.
    Nodes sharing one pool (the local machine's) show the pool's allocation."""
    allocated = node.pool_alloc_cpus if node.pool_alloc_cpus is not None else node.alloc_cpus
    return {"name": node.name, "state": node.state + node.state_suffix,
            "cpus": node.cpus, "alloc_cpus": allocated, "gpus": gpu_count(node.gres),
            "alloc_gpus": node.alloc_gpus, "memory_mb": node.memory_mb,
            "alloc_memory_mb": node.alloc_memory_mb, "reason": node.reason,
            "pooled": node.pool_alloc_cpus is not None, "jobs": list(jobs)}


def cluster_json(partitions: Sequence[PartitionInfo], jobs_on: Mapping[str, Sequence[str]],
                 now: int) -> Dict[str, Any]:
    """The sinfo listing and each partition's nodes."""
    listed: List[Dict[str, Any]] = []
    for partition in partitions:
        listed.append({"name": partition.name, "default": partition.default,
                       "avail": partition.avail, "max_time_min": partition.max_time_min,
                       "nodes": [node_json(n, jobs_on.get(n.name, ()))
                                 for n in partition.nodes]})
    return {"sinfo": format_sinfo(partitions, now=now), "partitions": listed}
