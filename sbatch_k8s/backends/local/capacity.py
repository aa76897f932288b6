"""The local machine as a one-partition cluster: how much it offers and who holds what.

Capacity (``[local]`` in the configuration): ``cpus`` (default: 4 per core, at least 16 — the
local backend oversubscribes like an emulated cluster), ``gpus`` (default 0; ids
``0..gpus-1``, handed out as ``CUDA_VISIBLE_DEVICES``), ``memory_mb`` (default: none enforced).
Running jobs hold what their rows say (``cpus``, ``gpu_ids``, memory); the one scheduler
(:mod:`~sbatch_k8s.backends.local.scheduler`) adds up the RUNNING rows before it decides, so
nothing is ever overbooked. A job that asked for no memory counts none.
"""

from __future__ import annotations

import os
from typing import Any, Iterable, List, Mapping, Optional, Tuple

from parsers.allocation import Allocation, NodeShape
from parsers.input_errors import EXIT_SUBMIT_ERROR, SlurmInputError
from parsers.jobspec import JobSpec
from translators.config import LocalConfig


def local_cpus(config: LocalConfig) -> int:
    """CPUs the local backend hands out."""
    if config.cpus:
        return config.cpus
    return max(4 * (os.cpu_count() or 1), 16)


def machine_memory_mb() -> int:
    """This machine's memory in MB (what sinfo shows of a local node when ``memory_mb`` sets
    no limit; 1, Slurm's RealMemory default, where the system does not say)."""
    try:
        return max(1, os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2**20)
    except (ValueError, OSError):
        return 1


def local_shape(config: LocalConfig) -> NodeShape:
    """One local "node" can hold the whole machine. Without pretend GPUs the GPU count is
    left open, so that a GPU job is refused by :func:`check_fits`, which says why."""
    return NodeShape(cpus=local_cpus(config), gpus=config.gpus or None,
                     memory_mb=config.memory_mb)


#: The ``exclusive`` column of a job that has its nodes to itself.
EXCLUSIVE_NODES = "node"


def pooled(row: Mapping[str, Any]) -> bool:
    """Whether a job holds the machine's whole pool: an ``--exclusive`` job has its nodes to
    itself, and every local node is the whole pool (what sinfo shows of each), so however
    many nodes it has it holds every CPU and GPU once — ``-N2 --exclusive`` fits wherever
    ``-N1 --exclusive`` does, with each node all its CPUs, as sinfo describes them."""
    return row["exclusive"] == EXCLUSIVE_NODES


def held_cpus(row: Mapping[str, Any], config: LocalConfig) -> int:
    """CPUs of the pool a job holds: its own, or the whole pool (:func:`pooled`)."""
    return local_cpus(config) if pooled(row) else int(row["cpus"] or 1)


def job_memory_mb(row: Mapping[str, Any]) -> int:
    """Memory a job holds on this machine: the ``mem_mb`` column (Slurm's MinMemoryCPU or
    MinMemoryNode, as ``mem_per_cpu`` says) times its CPUs or its nodes; 0 when it asked for
    none (not counted)."""
    count = row["cpus"] if row["mem_per_cpu"] else row["node_count"]
    return int(row["mem_mb"] or 0) * int(count or 1)


class Capacity:
    """What running jobs leave free: CPUs, GPU ids and (when configured) memory.

    Built from the RUNNING rows; :meth:`take` hands a job its share or says it does not fit
    now. Only the scheduler starts jobs, so this view stays true while it decides."""

    def __init__(self, config: LocalConfig, running: Iterable[Mapping[str, Any]]) -> None:
        used_gpus = set()
        used_cpus = used_mem = 0
        self.config = config
        for row in running:
            used_cpus += held_cpus(row, config) if row["cpus"] else 0
            used_mem += job_memory_mb(row)
            ids = row["gpu_ids"] or ""
            used_gpus.update(int(x) for x in ids.replace(";", ",").split(",") if x)
        self.free_cpus = local_cpus(config) - used_cpus
        self.free_gpus = [i for i in range(config.gpus) if i not in used_gpus]
        self.free_memory_mb = (config.memory_mb - used_mem) if config.memory_mb else None

    def take(self, row: Mapping[str, Any]) -> Optional[List[List[int]]]:
        """Reserve the job's CPUs, GPUs and memory if they fit now; its GPU ids per node,
        or None (nothing reserved)."""
        cpus = held_cpus(row, self.config)
        if cpus > self.free_cpus:
            return None
        per_node, nodes = row["gpus"] or 0, row["node_count"] or 1
        # a pooled job's nodes all show the pool's GPUs, held once
        wanted = per_node if pooled(row) else per_node * nodes
        if wanted > len(self.free_gpus):
            return None
        memory = job_memory_mb(row) if self.free_memory_mb is not None else 0
        if self.free_memory_mb is not None and memory > self.free_memory_mb:
            return None
        ids = [self.free_gpus[:per_node] if pooled(row) else
               self.free_gpus[i * per_node:(i + 1) * per_node] for i in range(nodes)]
        self.free_gpus = self.free_gpus[wanted:]
        self.free_cpus -= cpus
        if self.free_memory_mb is not None:
            self.free_memory_mb -= memory
        return ids


def gpu_ids_text(ids: List[List[int]]) -> str:
    """GPU ids per node as the ``gpu_ids`` column keeps them: ``0,1;2,3``."""
    return ";".join(",".join(str(g) for g in node) for node in ids)


#: Where the capacity is configured, for the reasons below.
_CONFIGURE = ("in the [local] table of the configuration file ($SBATCHK8S_CONFIG, else "
              "~/.config/sbatch-k8s/config.toml)")


def fits_ever(cpus: int, gpus: int, config: LocalConfig) -> Tuple[bool, str]:
    """Whether a job of this size could ever run here, and why not (one line naming the
    missing resource and the setting that provides it)."""
    if cpus > local_cpus(config):
        return False, (f"the job needs {cpus} CPUs; this machine offers {local_cpus(config)} "
                       f"(cpus = N {_CONFIGURE})")
    if gpus > config.gpus:
        if not config.gpus:
            return False, (f"the job needs {gpus} GPUs; this machine offers none (pretend "
                           f"GPUs for local jobs: gpus = N {_CONFIGURE})")
        return False, (f"the job needs {gpus} GPUs; this machine offers {config.gpus} "
                       f"(gpus = N {_CONFIGURE})")
    return True, ""


def check_fits(job: JobSpec, allocation: Allocation, config: LocalConfig) -> None:
    """The controller's refusal of a job this machine can never run: the reason, then
    Slurm's "Requested node configuration is not available"."""
    whole = job.exclusive == EXCLUSIVE_NODES  # the pool once (:func:`pooled`)
    ok, reason = fits_ever(
        max(allocation.cpus_per_node) if whole else sum(allocation.cpus_per_node),
        allocation.gpus_per_node * (1 if whole else allocation.node_count), config)
    memory = (allocation.mem_per_node_mb or 0) * allocation.node_count
    if ok and config.memory_mb and memory > config.memory_mb:
        ok, reason = False, (f"the job needs {memory} MB of memory in all; this machine "
                             f"offers {config.memory_mb} MB (memory_mb = N {_CONFIGURE})")
    if ok and not config.gpus and any(g.name == "gpu" and g.type for g in job.gres):
        ok, reason = False, (f"the job asks for typed GPUs; this machine offers none (pretend "
                             f"GPUs for local jobs: gpus = N {_CONFIGURE})")
    if not ok:
        raise SlurmInputError(reason, "Batch job submission failed: Requested node "
                              "configuration is not available", exit_code=EXIT_SUBMIT_ERROR)
