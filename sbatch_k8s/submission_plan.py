"""One submission, decided once: :class:`SubmissionPlan`, built by :func:`plan_submission`.

Every way a checked job goes on (``sbatch`` on either backend, ``--test-only``, ``--k8s-print``,
``--k8s-lint``, ``--k8s-export``, ``srun`` outside a job) starts from the same value: the
partition the job runs in, what that partition sets for jobs that do not say (DefMemPerCPU,
DefaultTime, MaxTime: the *effective* limits), the allocation on the nodes the backend offers,
who submits, and the warnings so far. Deciding these in one place is what keeps the backends
and the printed manifests from disagreeing (a partition's MaxTime once held for
``--k8s-print`` and not for a local job). Slurm's refusals are raised here, before anything is
contacted or created.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
import datetime
import os
import socket
from typing import Mapping, Optional, Tuple

from parsers.allocation import Allocation, NodeShape, allocate
from parsers.input_errors import SlurmInputError
from parsers.jobspec import JobSpec, SubmitContext, SubmitOptions
from translators.config import BUILT_IN, ClusterConfig, PartitionConfig


def submit_context(environ: Mapping[str, str]) -> SubmitContext:
    """Who submits, from where, with which environment."""
    import grp
    import pwd

    uid, gid = os.getuid(), os.getgid()
    try:
        user = pwd.getpwuid(uid).pw_name
    except KeyError:
        user = environ.get("USER", str(uid))
    try:
        group = grp.getgrgid(gid).gr_name
    except KeyError:
        group = str(gid)
    host = socket.gethostname().split(".")[0]
    return SubmitContext(cwd=os.getcwd(), host=host, user=user, uid=uid, gid=gid, group=group,
                         environment=tuple(sorted(environ.items())),
                         groups=tuple(sorted(set(os.getgroups()))))


def resolve_partition(job: JobSpec, config: ClusterConfig) -> Tuple[
        PartitionConfig, Tuple[str, ...]]:
    """The job's partition and what to warn about it.

    The first name of the comma list that is defined, or that ``partition_aliases`` maps
    to a defined partition; else the catch-all alias (``"*"``, which the built-in
    configuration has) with a warning; else Slurm's refusal."""
    names = (job.partition or config.default_partition).split(",")
    for name in names:
        found = config.partition(name) if name else None
        alias = config.alias_of(name)
        if found is None and alias is not None:
            found = config.partition(alias)
        if found is not None:
            return found, ()
    catch_all = config.catch_all()
    if catch_all is not None:
        how = ("no configuration file names partitions" if config is BUILT_IN else
               'partition_aliases maps unknown names ("*")')
        return config.partition(catch_all), (  # type: ignore[return-value]
            f"invalid partition specified: {names[0]}; {how}, so the job runs in partition "
            f"{catch_all}",)
    raise SlurmInputError(f"invalid partition specified: {names[0]}",
                          "Batch job submission failed: Invalid partition name specified",
                          exit_code=1)


def choose_partition(job: JobSpec, config: ClusterConfig) -> PartitionConfig:
    """The job's partition (see :func:`resolve_partition`), or Slurm's refusal."""
    return resolve_partition(job, config)[0]


def node_shape(partition: PartitionConfig) -> NodeShape:
    """The size of one node of ``partition``."""
    return NodeShape(partition.node_cpus, partition.node_gpus, partition.node_memory_mb)


def with_partition_defaults(job: JobSpec, config: ClusterConfig) -> JobSpec:
    """``job`` with what its partition sets for jobs that do not say: the memory per CPU
    (``def_mem_per_cpu_mb``, Slurm's DefMemPerCPU) when no ``--mem*`` option was given."""
    partition = choose_partition(job, config)
    memory_given = (job.mem_per_node_mb, job.mem_per_cpu_mb, job.mem_per_gpu_mb)
    if partition.def_mem_per_cpu_mb is None or any(m is not None for m in memory_given):
        return job
    return dataclasses.replace(job, mem_per_cpu_mb=partition.def_mem_per_cpu_mb)


def now_iso() -> str:
    """Submit time as Slurm prints timestamps (local time, seconds)."""
    return datetime.datetime.now().strftime("%Y-%m-%dT%H:%M:%S")


@dataclass(frozen=True)
class SubmissionPlan:
    """One submission's decisions, immutable: what every backend and printer starts from.

    ``job`` carries the effective limits (its partition's DefMemPerCPU when no ``--mem*`` was
    given, the time limit it runs with: ``--time``, else DefaultTime, else MaxTime), so
    whatever reads the job (records, job description, manifests) sees the same ones."""

    job: JobSpec
    submit: SubmitOptions
    config: ClusterConfig
    context: SubmitContext
    partition: PartitionConfig
    allocation: Allocation
    #: Who submits: ``sbatch``, or ``srun`` creating a job for a step outside a job.
    command: str = "sbatch"
    #: What choosing the partition warned (these lead the allocation's warnings).
    partition_notes: Tuple[str, ...] = ()

    @property
    def warnings(self) -> Tuple[str, ...]:
        """What to warn about so far: the partition's choice, then the allocation's."""
        return self.allocation.warnings

    @property
    def time_limit_min(self) -> Optional[int]:
        """The time limit the job runs with (None or 0: none)."""
        return self.job.time_limit_min

    def on_nodes(self, shape: NodeShape, note: Optional[str] = None) -> "SubmissionPlan":
        """The same plan allocated on nodes of ``shape`` (a backend that learns its node size
        only when it is asked: a cluster's nodes), with ``note`` added to its warnings."""
        allocation = allocate(self.job, shape)
        allocation = dataclasses.replace(allocation, warnings=self.partition_notes
                                         + allocation.warnings + ((note,) if note else ()))
        return dataclasses.replace(self, allocation=allocation)


def plan_submission(job: JobSpec, submit: SubmitOptions, config: ClusterConfig,
                    environ: Mapping[str, str], shape: Optional[NodeShape] = None,
                    command: str = "sbatch", context: Optional[SubmitContext] = None
                    ) -> SubmissionPlan:
    """The plan of ``job``: its partition, its effective limits, its allocation on nodes of
    ``shape`` (the partition's configured size by default), submitted by ``context`` (this
    process's user, host and ``environ`` by default). Raises Slurm's refusals
    (an unknown partition, a time limit beyond MaxTime, an allocation that cannot be)."""
    from translators.plan import effective_time_limit_min

    partition, notes = resolve_partition(job, config)
    job = with_partition_defaults(job, config)
    job = dataclasses.replace(job, time_limit_min=effective_time_limit_min(job, partition))
    allocation = allocate(job, shape or node_shape(partition))
    if notes:
        allocation = dataclasses.replace(allocation, warnings=notes + allocation.warnings)
    return SubmissionPlan(job=job, submit=submit, config=config,
                          context=context or submit_context(environ), partition=partition,
                          allocation=allocation, command=command, partition_notes=notes)
