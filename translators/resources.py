"""Container resources of a job's pods, from its allocation (every pod is sized alike).

* CPU: a request of the most CPUs any node holds, and no CPU limit: a limit means CFS quota
  throttling, which stalls collective operations; Slurm's task cgroup confines a job to its
  CPUs without throttling, which a request (plus the kubelet's CPU manager, where sites use
  it) matches more closely.
* Memory: request = limit (Slurm's cgroup memory limit is a hard limit); ``--mem=0`` means
  "all the node's memory" to Slurm and no request or limit here.
* GPUs: the partition's GPU resource in requests and limits; a GPU type (``--gres=gpu:a100:4``,
  ``--gpus-per-node=a100:8``) selects nodes by the partition's GPU label.
* Other ``--gres`` names: extended resources named by the partition's ``gres_resources``.
* ``--tmp``: an ephemeral-storage request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple

from parsers.allocation import Allocation
from parsers.input_errors import submission_failed
from parsers.jobspec import JobSpec
from translators.config import PartitionConfig

_NOT_AVAILABLE = "Requested node configuration is not available"
_BAD_GRES = "Invalid generic resource (gres) specification"


@dataclass(frozen=True)
class PodResources:
    """``resources`` of the main container, the node selector GPU types add, and warnings."""

    requests: Mapping[str, Any]
    limits: Mapping[str, Any]
    node_selector: Tuple[Tuple[str, str], ...]
    warnings: Tuple[str, ...]

    def to_manifest(self) -> Dict[str, Any]:
        """The container's ``resources`` field."""
        out: Dict[str, Any] = {"requests": dict(self.requests)}
        if self.limits:
            out["limits"] = dict(self.limits)
        return out


def requested_gpu_types(job: JobSpec) -> Tuple[str, ...]:
    """The distinct GPU types named by ``--gpus*`` and ``--gres=gpu:…``, in first-seen order."""
    types: List[str] = []
    counts = job.gpus + job.gpus_per_node + job.gpus_per_task
    named = [c.type for c in counts] + [g.type for g in job.gres if g.name == "gpu"]
    for gpu_type in named:
        if gpu_type and gpu_type not in types:
            types.append(gpu_type)
    return tuple(types)


def gpu_type_to_node_selector(
    job: JobSpec, partition: PartitionConfig
) -> Tuple[Tuple[Tuple[str, str], ...], Tuple[str, ...]]:
    """The node selector a GPU type asks for, and a warning when the partition cannot say."""
    types = requested_gpu_types(job)
    if not types:
        return (), ()
    if len(types) > 1:
        raise submission_failed(_NOT_AVAILABLE)
    gpu_type = types[0]
    if partition.gpu_types and gpu_type not in dict(partition.gpu_types):
        raise submission_failed(_NOT_AVAILABLE)
    if not partition.gpu_type_label:
        return (), (f"GPU type {gpu_type} is not selected: partition {partition.name} has no "
                    "gpu_type_label, so pods may get any GPU model",)
    return ((partition.gpu_type_label, partition.gpu_label_value(gpu_type)),), ()


def gres_to_extended_resources(job: JobSpec, partition: PartitionConfig) -> Dict[str, int]:
    """Extended resources for the ``--gres`` names other than ``gpu`` (per node)."""
    table = dict(partition.gres_resources)
    out: Dict[str, int] = {}
    for gres in job.gres:
        if gres.name == "gpu" or gres.count == 0:
            continue
        typed = f"{gres.name}:{gres.type}" if gres.type else None
        resource = table.get(typed) if typed else None
        resource = resource or table.get(gres.name)
        if resource is None:
            raise submission_failed(_BAD_GRES)
        out[resource] = out.get(resource, 0) + gres.count
    return out


def allocation_to_resources(
    job: JobSpec, allocation: Allocation, partition: PartitionConfig
) -> PodResources:
    """The pod resources of ``job`` given its ``allocation`` on ``partition``."""
    requests: Dict[str, Any] = {"cpu": allocation.max_cpus_per_node}
    limits: Dict[str, Any] = {}
    if job.mem_per_node_mb != 0 and allocation.mem_per_node_mb:
        requests["memory"] = limits["memory"] = f"{allocation.mem_per_node_mb}Mi"
    if job.tmp_mb:
        requests["ephemeral-storage"] = f"{job.tmp_mb}Mi"
    if allocation.gpus_per_node:
        requests[partition.gpu_resource] = limits[partition.gpu_resource] = (
            allocation.gpus_per_node)
    for resource, count in gres_to_extended_resources(job, partition).items():
        requests[resource] = limits[resource] = count
    selector, warnings = gpu_type_to_node_selector(job, partition)
    limit_mb = allocation.mem_per_node_mb if "memory" in limits else None
    return PodResources(requests, limits, selector, warnings + shm_cap_warnings(limit_mb,
                                                                               partition))


def shm_cap_warnings(memory_limit_mb: Optional[int], partition: PartitionConfig
                     ) -> Tuple[str, ...]:
    """``/dev/shm`` as the kubelet sizes a memory-backed emptyDir: the least of its
    ``sizeLimit`` (the partition's ``shm_size``) and the pod's memory limit (kubelet
    ``calculateEmptyDirMemorySize``); and what it holds counts against that limit. A warning
    when the limit is what caps it."""
    from translators.exports import quantity_mb

    if not memory_limit_mb:
        return ()
    shm_mb = quantity_mb(partition.shm_size) if partition.shm_size else None
    if shm_mb is not None and shm_mb <= memory_limit_mb:
        return ()
    size = f"the partition's shm_size, {partition.shm_size}" if partition.shm_size else \
        "the node's memory"
    return (f"/dev/shm holds at most {memory_limit_mb}Mi, the pod's memory limit, not "
            f"{size}: the kubelet caps a memory-backed volume at the pod's limit, and what "
            "/dev/shm holds counts against the job's memory",)
