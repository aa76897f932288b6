"""What a job is allocated: node count, tasks, CPUs, GPUs and memory per node.

Slurm decides this in slurmctld from the request and the nodes' sizes; sbatch-k8s decides it
at submission from the request and the partition's node shape, because every pod of a job is
built from one template (all nodes alike). The rules follow sbatch's ``_opt_verify`` and
slurmctld's task placement:

* ``--nodes=min[-max]`` gives the node count (a range gets its maximum, but with ``--gpus``
  only as many nodes as hold the GPUs, at least ``min``); ``-n`` below the node count lowers
  it (Slurm warns "can't run N processes on M nodes" when ``-n`` is below ``min``).
* Without ``--nodes``: as many nodes as the tasks (``-n`` × ``-c``), GPUs (``--gpus``) or
  ``--ntasks-per-node`` need, given the node shape; one node when the shape is unknown.
* Tasks are packed as slurmctld allocates CPUs: each node in turn takes as many as it holds
  while leaving one for each later node (``-N2 -n5`` → ``4,1``); ``--ntasks-per-node`` sizes
  every node alike. Pods are sized for the busiest node.
* GPUs per node: ``--gpus-per-task`` follows the tasks; ``--gpus=n`` is spread as Slurm
  spreads it (each node in turn leaving one for every later node: ``--gpus=3 -N2`` → ``2,1``)
  but over pods of ``ceil(n / nodes)`` GPUs, so a node never counts more than its pod holds
  (``--gpus=5 -N2`` gives ``3,2`` where Slurm gives ``4,1``). Every pod requests the busiest
  node's count, so such a job holds GPUs it does not use; each node's GPU variables name only
  the node's own share, and the submission warns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

from parsers.input_errors import EXIT_SUBMIT_ERROR, SlurmInputError, submission_failed
from parsers.jobspec import JobSpec


@dataclass(frozen=True)
class NodeShape:
    """Size of one node of a partition (None = unknown, i.e. unlimited for placement)."""

    cpus: Optional[int] = None
    gpus: Optional[int] = None
    memory_mb: Optional[int] = None


@dataclass(frozen=True)
class Allocation:
    """The job's resources, per node, as Slurm would report them.

    ``gpus_per_node`` is what every node (pod) holds: the most GPUs any node is given.
    ``gpus_on_nodes`` is what Slurm gives each node (``SLURM_JOB_GPUS`` there); it differs
    from ``gpus_per_node`` only when a job's GPUs do not spread evenly over its nodes.
    """

    node_count: int
    tasks_per_node: Tuple[int, ...]
    cpus_per_node: Tuple[int, ...]
    gpus_per_node: int
    mem_per_node_mb: Optional[int]
    ntasks: Optional[int]
    warnings: Tuple[str, ...] = ()
    gpus_on_nodes: Tuple[int, ...] = ()

    @property
    def max_tasks_per_node(self) -> int:
        """The most tasks any node holds (pods are sized for it)."""
        return max(self.tasks_per_node)

    @property
    def max_cpus_per_node(self) -> int:
        """The most CPUs any node holds (pods are sized for it)."""
        return max(self.cpus_per_node)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def count_gpus(counts: tuple) -> int:
    """Total of a ``[type:]n[,...]`` GPU request."""
    return sum(c.count for c in counts)


def gres_gpus(job: JobSpec) -> int:
    """GPUs per node requested with ``--gres=gpu[:type]:n``."""
    return sum(g.count for g in job.gres if g.name == "gpu")


def pack_tasks(ntasks: int, nodes: int, per_node_limit: Optional[int]) -> Tuple[int, ...]:
    """Tasks (or ``--gpus``) per node as slurmctld hands them out: each node in turn takes as
    many as it can hold while leaving one for every node after it (``-N2 -n5`` → ``4,1`` on
    4-CPU nodes)."""
    counts = []
    left = ntasks
    for i in range(nodes):
        after = nodes - i - 1
        share = left - after
        if per_node_limit is not None:
            share = min(share, per_node_limit)
        share = max(share, 1) if i < nodes - 1 or left else 0
        counts.append(share)
        left -= share
    return tuple(counts)


def _node_count(job: JobSpec, shape: NodeShape, cpt: int, warnings: list) -> int:
    if job.nodes is not None:
        low = job.nodes.min_nodes
        count = job.nodes.max_nodes or low
        total_gpus = count_gpus(job.gpus)
        if count > low and total_gpus and job.ntasks is None:
            # cons_tres stops adding nodes once the job's GPUs are placed (real 22.05:
            # -N1-3 --gpus=2 on 4-GPU nodes takes 1 node, --gpus=5 takes 2).
            needed = _ceil_div(total_gpus, shape.gpus) if shape.gpus else 1
            count = min(count, max(low, needed))
        if job.ntasks is not None and job.ntasks < count:
            if job.ntasks < low:  # sbatch's _opt_verify names the minimum
                warnings.append(f"can't run {job.ntasks} processes on {low} nodes, "
                                f"setting nnodes to {job.ntasks}")
            count = job.ntasks
        return count
    if job.nodelist:
        return len(dict.fromkeys(job.nodelist))
    count = 1
    if job.ntasks is not None:
        if job.ntasks_per_node:
            count = _ceil_div(job.ntasks, job.ntasks_per_node)
        elif shape.cpus:
            count = _ceil_div(job.ntasks * cpt, shape.cpus)
    total_gpus = count_gpus(job.gpus)
    if total_gpus and shape.gpus:
        count = max(count, _ceil_div(total_gpus, shape.gpus))
    return max(count, 1)


def _task_count(job: JobSpec, nodes: int) -> Optional[int]:
    """SLURM_NTASKS of the batch step: only when a task count was asked for."""
    if job.ntasks is not None:
        return job.ntasks
    if job.ntasks_per_node:
        return job.ntasks_per_node * nodes
    total_gpus = count_gpus(job.gpus)
    if job.ntasks_per_gpu and total_gpus:
        return job.ntasks_per_gpu * total_gpus
    per_task = count_gpus(job.gpus_per_task)
    if per_task and total_gpus:
        return total_gpus // per_task
    return None


def _gpus_on_nodes(job: JobSpec, nodes: int, tasks_per_node: Tuple[int, ...]) -> Tuple[int, ...]:
    """GPUs each node is given: a per-node request alike everywhere, ``--gpus-per-task``
    times the node's tasks, ``--gpus`` spread as cons_tres does (each node in turn takes what
    it holds while leaving one for every later node) over pods of ``ceil(gpus / nodes)``:
    Slurm's own spread wherever that fits in such a pod (``--gpus=3 -N2`` → ``2,1``)."""
    if job.gpus_per_node:
        return (count_gpus(job.gpus_per_node),) * nodes
    if gres_gpus(job):
        return (gres_gpus(job),) * nodes
    if job.gpus_per_task:
        return tuple(count_gpus(job.gpus_per_task) * t for t in tasks_per_node)
    if job.gpus:
        total = count_gpus(job.gpus)
        if job.nodes is not None and total < job.nodes.min_nodes:
            raise SlurmInputError("Failed to validate job spec, --gpus < -N",
                                  "Invalid generic resource (gres) specification",
                                  exit_code=EXIT_SUBMIT_ERROR)
        return pack_tasks(total, nodes, _ceil_div(total, nodes))
    return (0,) * nodes


def _uneven_gpus_warning(job: JobSpec, gpus_on_nodes: Tuple[int, ...], per_pod: int) -> str:
    """The approximation note of a job whose GPUs do not spread evenly over its pods."""
    option = "gpus" if job.gpus else "gpus-per-task"
    return (f"--{option} is approximated: all pods of a job request the same resources, so "
            f"each of the {len(gpus_on_nodes)} pods requests {per_pod} GPUs "
            f"({per_pod * len(gpus_on_nodes)} in all for {sum(gpus_on_nodes)}); the tasks on "
            f"each node see {','.join(str(g) for g in gpus_on_nodes)} of them")


def allocate(job: JobSpec, shape: NodeShape) -> Allocation:
    """The allocation Slurm would give ``job`` on nodes of ``shape``; raises the controller's
    refusal when it cannot fit."""
    warnings: list = []
    cpt = job.cpus_per_task or 1
    nodes = _node_count(job, shape, cpt, warnings)
    if nodes < 1:
        raise submission_failed("Node count specification invalid")
    ntasks = _task_count(job, nodes)
    if ntasks is not None and ntasks < nodes:
        raise submission_failed("Requested node configuration is not available")
    if job.ntasks_per_node:
        tasks = (job.ntasks_per_node,) * nodes
        if ntasks is not None and ntasks > sum(tasks):
            raise submission_failed("Requested node configuration is not available")
    elif ntasks is not None:
        limit = shape.cpus // cpt if shape.cpus else None
        tasks = pack_tasks(ntasks, nodes, limit)
        if sum(tasks) < ntasks:
            raise submission_failed("Requested node configuration is not available")
    else:
        tasks = (1,) * nodes
    # --overcommit: "allocated as if only one task per node is requested".
    cpus = [cpt if job.overcommit else t * cpt for t in tasks]
    if job.mincpus:
        cpus = [max(c, job.mincpus) for c in cpus]
    gpus_on_nodes = _gpus_on_nodes(job, nodes, tasks)
    gpus = max(gpus_on_nodes)
    if sum(gpus_on_nodes) < gpus * nodes:
        warnings.append(_uneven_gpus_warning(job, gpus_on_nodes, gpus))
    if job.cpus_per_gpu and gpus:
        cpus = [max(c, job.cpus_per_gpu * gpus) for c in cpus]
    if job.exclusive == "node" and shape.cpus:
        cpus = [shape.cpus] * nodes
        if shape.gpus and not gpus:
            gpus = shape.gpus
            gpus_on_nodes = (gpus,) * nodes
    elif job.exclusive == "node":
        warnings.append(_shapeless_exclusive_warning(max(cpus), gpus))
    if shape.cpus and max(cpus) > shape.cpus:
        raise SlurmInputError("CPU count per node can not be satisfied",
                              "Batch job submission failed: Requested node configuration is "
                              "not available", exit_code=EXIT_SUBMIT_ERROR)
    if shape.gpus is not None and gpus > shape.gpus:
        raise submission_failed("Requested node configuration is not available")
    memory = _memory_per_node(job, max(cpus), gpus, shape)
    if ntasks is None and job.exclusive == "node" and shape.cpus:
        tasks = tuple(c // cpt for c in cpus)
    return Allocation(nodes, tasks, tuple(cpus), gpus, memory, ntasks, tuple(warnings),
                      gpus_on_nodes)


def _shapeless_exclusive_warning(cpus: int, gpus: int) -> str:
    """What an ``--exclusive`` job gets when the node size is unknown: only its request."""
    def count(n: int, what: str) -> str:
        return f"{n} {what}" if n == 1 else f"{n or 'no'} {what}s"

    return (f"--exclusive: the partition's node size is not configured (node_cpus, node_gpus), "
            f"so each pod requests only what the job asks for, {count(cpus, 'CPU')} and "
            f"{count(gpus, 'GPU')}, not a whole node; other jobs' pods are still kept off its "
            f"nodes")


def _memory_per_node(job: JobSpec, cpus: int, gpus: int, shape: NodeShape) -> Optional[int]:
    if job.mem_per_node_mb is not None:
        memory = job.mem_per_node_mb or shape.memory_mb
    elif job.mem_per_cpu_mb is not None:
        memory = job.mem_per_cpu_mb * cpus
    elif job.mem_per_gpu_mb is not None:
        memory = job.mem_per_gpu_mb * max(gpus, 1)
    else:
        return None
    if memory and shape.memory_mb and memory > shape.memory_mb:
        # slurmctld names memory only when the value asked for (per node, or per CPU)
        # exceeds a node; a per-CPU or per-GPU amount that only adds up to too much does not.
        asked = job.mem_per_node_mb or job.mem_per_cpu_mb or 0
        lines = ["Memory specification can not be satisfied"] if asked > shape.memory_mb else []
        raise SlurmInputError(
            *lines, "Batch job submission failed: Requested node configuration is not available",
            exit_code=EXIT_SUBMIT_ERROR)
    return memory
