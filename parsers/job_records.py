"""What Slurm's reporting commands print about: jobs and their steps.

:class:`JobRecord` holds what ``squeue``, ``sacct`` and ``scontrol show job`` show, in Slurm's
vocabulary; backends fill it (the local job database, the runtime's own job, cluster state)
and :mod:`parsers.formats` prints it exactly as Slurm does. Times are UNIX epoch seconds
(None = not yet / unknown); the formatters take ``now`` so they stay pure.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields
from functools import lru_cache
from typing import Any, Dict, FrozenSet, Iterable, Optional, Tuple, Type, TypeVar

from parsers.step_usage import StepUsage

Record = TypeVar("Record")

#: Job states, long names (squeue %T, sacct State, scontrol JobState).
PENDING, RUNNING, SUSPENDED, COMPLETING = "PENDING", "RUNNING", "SUSPENDED", "COMPLETING"
COMPLETED, CANCELLED, FAILED, TIMEOUT = "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT"
NODE_FAIL, PREEMPTED, OUT_OF_MEMORY, BOOT_FAIL = "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY", \
    "BOOT_FAIL"
DEADLINE, REQUEUED = "DEADLINE", "REQUEUED"


@dataclass(frozen=True)
class StepRecord:
    """One step as sacct lists it: ``batch``, ``extern`` or a number."""

    step_id: str
    name: str
    state: str
    exit_code: int = 0
    exit_signal: int = 0
    start_time: Optional[int] = None
    end_time: Optional[int] = None
    node_list: str = ""
    node_count: int = 0
    ntasks: int = 0
    cpus: int = 0
    #: The step's allocated TRES (sacct ``AllocTRES``: ``cpu=2,mem=512M,node=1``).
    tres: str = ""
    #: The srun command line that started it (sacct ``SubmitLine``); empty for batch/extern.
    submit_line: str = ""
    #: Task layout (sacct ``Layout``: ``Block``, ``Cyclic``…); empty prints ``Unknown``.
    layout: str = ""
    #: What its tasks used (sacct ``TotalCPU``, ``MaxRSS``…; sstat); None: nothing recorded.
    usage: Optional[StepUsage] = None


@dataclass(frozen=True)
class JobRecord:
    """One job (or one array element) as Slurm's reporting commands see it."""

    job_id: int
    name: str
    user: str
    uid: int
    group: str
    gid: int
    partition: str
    state: str
    account: str = ""
    qos: str = "normal"
    reason: str = "None"
    array_job_id: Optional[int] = None
    array_task_id: Optional[int] = None
    #: For a pending array remainder shown on one line: the index expression (``5-1024%4``).
    array_pending: Optional[str] = None
    submit_time: Optional[int] = None
    eligible_time: Optional[int] = None
    start_time: Optional[int] = None
    end_time: Optional[int] = None
    time_limit_min: Optional[int] = None
    node_count: int = 1
    node_list: str = ""
    batch_host: str = ""
    cpus: int = 1
    ntasks: Optional[int] = None
    cpus_per_task: int = 1
    ntasks_per_node: Optional[int] = None
    min_memory_mb: Optional[int] = None
    memory_per_cpu: bool = False
    gres: str = ""
    tres: str = ""
    exit_code: int = 0
    exit_signal: int = 0
    derived_exit_code: int = 0
    cancelled_by: Optional[int] = None
    priority: int = 1
    nice: int = 0
    requeue: bool = True
    restarts: int = 0
    dependency: str = ""
    features: str = ""
    work_dir: str = ""
    command: str = ""
    stdout: str = ""
    stderr: str = ""
    stdin: str = "/dev/null"
    comment: str = ""
    exclusive: Optional[str] = None
    req_nodes: str = ""
    exc_nodes: str = ""
    submit_host: str = ""
    steps: Tuple[StepRecord, ...] = ()
    #: Requested maximum node count (``-N 2-4``); scontrol shows ``NumNodes=2-4`` while pending.
    max_nodes: Optional[int] = None
    #: Session id of the submitting process (scontrol ``AllocNode:Sid=<submit_host>:<sid>``).
    alloc_sid: int = 0
    #: When the job began accruing priority age (None: not yet, or use ``eligible_time``).
    accrue_time: Optional[int] = None
    #: Last time the scheduler looked at the job (None: start, else submit time).
    last_sched_eval: Optional[int] = None
    #: The array's ``%`` limit (scontrol ``ArrayTaskThrottle``), on every element.
    array_throttle: Optional[int] = None
    #: False for allocations without a batch script (salloc/srun): no StdOut lines, no BatchHost.
    batch_flag: bool = True
    #: Cluster name (sacct ``Cluster``).
    cluster: str = ""
    #: The submitting command line (sacct ``SubmitLine``).
    submit_line: str = ""
    #: CPUs on the batch host (the ``batch`` step's AllocCPUS).
    batch_cpus: int = 1
    #: The reservation the job runs in ("" for none: sbatch-k8s has no reservations).
    reservation: str = ""
    #: The workload characterization key (``*name`` when it is the user's default; "" for
    #: none: sbatch-k8s keeps none).
    wckey: str = ""
    #: ``--begin``: the job may not start before (epoch seconds; None: no begin time).
    begin_time: Optional[int] = None
    #: ``--kill-on-invalid-dep=yes``: a dependency that can never be met cancels the job.
    kill_on_invalid_dep: bool = False
    #: The earlier runs of a requeued job, oldest first, each ended ``REQUEUED`` with its steps
    #: (what ``sacct --duplicates`` lists before the job's current run).
    requeued_runs: Tuple["JobRecord", ...] = ()
    #: What the system says of the job (scontrol ``SystemComment=``, sacct ``SystemComment``):
    #: why its batch step could not be launched, in slurmstepd's words.
    system_comment: str = ""
    #: Where a cluster authenticates its users (Kubernetes backend): the owner's cluster user
    #: name, as the job's objects name it and the cluster checked ("" elsewhere: the uid
    #: decides); ``user`` and ``uid`` are that name's Slurm name and uid.
    owner: str = ""
    #: A job submitted from inside another job: ``"<parent id> <claimed owner>"``, until the
    #: parent's record confirms it (``owner`` is then the claimed owner).
    owner_claim: str = ""
    #: The pattern of the names of the job's own processes' hosts (its pods): they act for
    #: the job. With ``owner_claim``: that of the submitting job's, after a tab.
    acting_hosts: str = ""

    @property
    def job_id_text(self) -> str:
        """``1234``, ``1234_7`` for array elements, ``1234_[5-1024%4]`` for the remainder."""
        if self.array_pending is not None:
            return f"{self.array_job_id}_[{self.array_pending}]"
        if self.array_task_id is not None:
            return f"{self.array_job_id}_{self.array_task_id}"
        return str(self.job_id)


def derived_exit_code(step_exit_codes: Iterable[Tuple[str, int]]) -> int:
    """Slurm's DerivedExitCode from ``(step id, exit code)`` pairs: the highest exit code of
    the job's srun steps — the batch script's own does not count (real Slurm 22.05: a script
    that ends ``exit 3`` with no failed step shows ``DerivedExitCode=0:0``)."""
    return max((code for step_id, code in step_exit_codes
                if step_id not in ("batch", "extern")), default=0)


def missing_steps(steps: Iterable[StepRecord]) -> int:
    """How many numbered steps a record lacks: every id up to the highest was a step (a
    cluster job's node 0 without API access reports only the last ones it has room for)."""
    numbered = {int(s.step_id) for s in steps if s.step_id.isdigit()}
    return max(numbered) + 1 - len(numbered) if numbered else 0


def build(kind: Type[Record], **values: Any) -> Record:
    """``kind(**values)`` for a frozen record without running its ``__init__`` (which sets
    every field through ``object.__setattr__``): the reports build one per job."""
    defaults, required = _shape(kind)
    missing = required - values.keys()
    if missing:
        raise TypeError(f"{kind.__name__}: missing {', '.join(sorted(missing))}")
    record = object.__new__(kind)
    record.__dict__.update(defaults)
    record.__dict__.update(values)
    return record


@lru_cache(maxsize=None)
def _shape(kind: type) -> Tuple[Dict[str, Any], FrozenSet[str]]:
    """A record class's field defaults, and its fields without one."""
    defaults = {f.name: f.default for f in fields(kind) if f.default is not MISSING}
    return defaults, frozenset(f.name for f in fields(kind) if f.default is MISSING)


def with_changes(record: Record, **changes: Any) -> Record:
    """A copy of a frozen record with some fields changed: :func:`dataclasses.replace`
    without re-running ``__init__``, which on a record as wide as :class:`JobRecord` costs
    more than everything else ``squeue -r`` does per line."""
    clone = object.__new__(type(record))
    clone.__dict__.update(record.__dict__)
    clone.__dict__.update(changes)
    return clone
