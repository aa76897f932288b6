"""JobSpec: a batch job as Slurm understands it, after every source of options is merged.

Vocabulary is Slurm's (nodes, tasks, partition, gres), never Kubernetes'. Units are in field
names. Fields hold typed values from :mod:`parsers.values`; ``None`` means "not given" (Slurm's
default applies), which matters because several Slurm variables exist only when an option was
given (``SLURM_NTASKS``, ``SLURM_CPUS_PER_TASK``, ``SLURM_GPUS_PER_NODE``…).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, FrozenSet, Optional, Tuple, Union

if TYPE_CHECKING:
    from parsers.values.array import ArraySpec
    from parsers.values.begin import BeginTime
    from parsers.values.dependency import DependencySpec
    from parsers.values.distribution import Distribution
    from parsers.values.export import ExportSpec
    from parsers.values.gres import GpuCount, GresRequest
    from parsers.values.nodes import NodeRange
    from parsers.values.signal import SignalSpec

#: Where a batch script came from.
SCRIPT_FROM_FILE = "file"
SCRIPT_FROM_STDIN = "stdin"
SCRIPT_FROM_WRAP = "wrap"


@dataclass(frozen=True)
class BatchScript:
    """The script text as submitted, where it came from, and its arguments (``$1 …``)."""

    text: str
    path: Optional[str]
    args: Tuple[str, ...] = ()
    origin: str = SCRIPT_FROM_FILE

    @property
    def display_name(self) -> str:
        """How messages name the script: its path, ``(stdin)`` or ``(wrap)``."""
        return self.path if self.path else f"({self.origin})"


@dataclass(frozen=True)
class OptionRecord:
    """One option as the user gave it: long name, raw text, and source
    (``command line``, ``SBATCH_TIMELIMIT``, ``job.sh:3``)."""

    name: str
    raw: Optional[str]
    source: str


@dataclass(frozen=True)
class Diagnostic:
    """A warning about the job: an option approximated or ignored, a directive after the
    first command, … ``location`` is ``file:line`` when a directive caused it.

    ``severity`` ``error`` marks a line Slurm itself prints with ``error()`` and goes on (the
    ``#SLURM`` notice): ``sbatch: error: …``, shown even with ``-Q``."""

    message: str
    location: Optional[str] = None
    severity: str = "warning"


@dataclass(frozen=True)
class StepRecord:
    """An ``srun`` line of the script, recorded for reporting (``--k8s-lint``, image choice).

    The runtime executes the script unchanged; nothing here is rewritten or run.
    """

    line_no: int
    text: str
    options: Tuple[Tuple[str, Optional[str]], ...]
    command: Tuple[str, ...]

    def option(self, name: str) -> Optional[str]:
        """The last raw value of ``--name`` on this line, or None."""
        for long, raw in reversed(self.options):
            if long == name:
                return raw if raw is not None else ""
        return None


@dataclass(frozen=True)
class SubmitContext:
    """Facts of the login side at submission: these become SLURM_SUBMIT_* and the defaults of
    the output paths. Supplied by the caller (the parsers do no I/O)."""

    cwd: str
    host: str
    user: str
    uid: int
    gid: int
    group: str
    environment: Tuple[Tuple[str, str], ...] = ()
    #: The submitter's supplementary group ids (tasks running as the submitter get them).
    groups: Tuple[int, ...] = ()


@dataclass(frozen=True)
class SubmitOptions:
    """Options that steer the sbatch command itself rather than the job."""

    wait: bool = False
    parsable: bool = False
    quiet: bool = False
    test_only: bool = False
    verbose: int = 0
    help: bool = False
    usage: bool = False
    version: bool = False
    autocomplete: Optional[str] = None
    #: True: print everything; ``"objects"``: the job's objects without the runtime ConfigMap.
    k8s_print: Union[bool, str] = False
    k8s_lint: bool = False
    k8s_target: Optional[str] = None
    k8s_job_id: Optional[int] = None
    #: ``--k8s-export``: the form-based platform
    #: (:data:`parsers.platforms.platform_names.EXPORT_PLATFORMS`).
    k8s_export: Optional[str] = None
    #: ``"1.<minor>"`` (see :func:`parsers.option_values.kubernetes_minor`).
    k8s_kubernetes_version: Optional[str] = None
    #: ``-M``/``--clusters``: checked against the configured cluster; when given, sbatch
    #: names the cluster after the job id (``Submitted batch job 7 on cluster c``, ``7;c``).
    clusters: Optional[str] = None


@dataclass(frozen=True)
class JobSpec:
    """Everything Slurm would know about a submitted batch job."""

    script: BatchScript
    job_name: str
    # -- size and placement --------------------------------------------------------------
    partition: Optional[str] = None
    nodes: Optional["NodeRange"] = None
    ntasks: Optional[int] = None
    ntasks_per_node: Optional[int] = None
    ntasks_per_gpu: Optional[int] = None
    cpus_per_task: Optional[int] = None
    mincpus: Optional[int] = None
    distribution: Optional["Distribution"] = None
    nodelist: Tuple[str, ...] = ()
    exclude: Tuple[str, ...] = ()
    nodefile: Optional[str] = None
    constraint: Optional[str] = None
    prefer: Optional[str] = None
    exclusive: Optional[str] = None
    oversubscribe: bool = False
    overcommit: bool = False
    # -- generic resources ----------------------------------------------------------------
    gpus: Tuple["GpuCount", ...] = ()
    gpus_per_node: Tuple["GpuCount", ...] = ()
    gpus_per_task: Tuple["GpuCount", ...] = ()
    gres: Tuple["GresRequest", ...] = ()
    cpus_per_gpu: Optional[int] = None
    mem_per_node_mb: Optional[int] = None
    mem_per_cpu_mb: Optional[int] = None
    mem_per_gpu_mb: Optional[int] = None
    tmp_mb: Optional[int] = None
    tres_per_task: Tuple[Tuple[str, int], ...] = ()
    # -- time -------------------------------------------------------------------------------
    time_limit_min: Optional[int] = None
    begin: Optional["BeginTime"] = None
    signal: Optional["SignalSpec"] = None
    # -- identity and accounting ------------------------------------------------------------
    account: Optional[str] = None
    qos: Optional[str] = None
    comment: Optional[str] = None
    priority: Optional[str] = None
    nice: Optional[int] = None
    # -- files, directory, environment ------------------------------------------------------
    output: Optional[str] = None
    error: Optional[str] = None
    input: Optional[str] = None
    open_mode: Optional[str] = None
    #: ``--acctg-freq`` as given (checked; :mod:`parsers.values.acctg_freq` reads it).
    acctg_freq: Optional[str] = None
    chdir: Optional[str] = None
    export: Optional["ExportSpec"] = None
    export_file: Optional[str] = None
    get_user_env: Optional[str] = None
    ignore_pbs: bool = False
    # -- life cycle ---------------------------------------------------------------------------
    array: Optional["ArraySpec"] = None
    dependency: Optional["DependencySpec"] = None
    kill_on_invalid_dep: Optional[bool] = None
    requeue: Optional[bool] = None
    hold: bool = False
    wait_all_nodes: Optional[int] = None
    # -- containers (pyxis conventions) -------------------------------------------------------
    container_image: Optional[str] = None
    container_mounts: Tuple[Tuple[str, str, str], ...] = ()
    container_workdir: Optional[str] = None
    container_name: Optional[str] = None
    container_writable: Optional[bool] = None
    container_mount_home: Optional[bool] = None
    container_remap_root: Optional[bool] = None
    container_entrypoint: Optional[bool] = None
    # -- sbatch-k8s's own ---------------------------------------------------------------------
    #: ``--k8s-contract``: the platform whose variables the nodes also get (the partition's
    #: ``contract`` when None; :data:`parsers.platforms.target_names.CONTRACT_PROFILES`).
    k8s_contract: Optional[str] = None
    # -- what the parser saw -------------------------------------------------------------------
    steps: Tuple[StepRecord, ...] = ()
    given: Tuple[OptionRecord, ...] = ()
    other_options: Tuple[Tuple[str, object], ...] = ()
    warnings: Tuple[Diagnostic, ...] = field(default=(), compare=False)

    def other(self, name: str) -> object:
        """Value of an option that has no field of its own (accepted, recorded, no effect)."""
        for key, value in self.other_options:
            if key == name:
                return value
        return None

    @property
    def min_nodes(self) -> Optional[int]:
        """``--nodes`` minimum, or None when not given."""
        return self.nodes.min_nodes if self.nodes else None


def initial_reason(job: JobSpec) -> str:
    """The pending reason a job starts with, on any backend: held (``JobHeldUser``), then
    waiting for dependencies (``Dependency``), then for its begin time (``BeginTime``)."""
    if job.hold:
        return "JobHeldUser"
    if job.dependency is not None:
        return "Dependency"
    if job.begin is not None:
        return "BeginTime"
    return "None"


def field_names(cls: type) -> FrozenSet[str]:
    """Names of a dataclass's fields (used to route option values)."""
    return frozenset(f.name for f in fields(cls))
