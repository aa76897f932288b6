"""squeue's job fields: every ``-o`` letter and ``-O`` name, its title and its value.

One row per entry of Slurm's ``fmt_data_job`` table (``src/squeue/opts.c``), in its order, so
a letter shared by two names (``h``: OverSubscribe and the hidden Shared) resolves to the first
as in Slurm. Values follow ``src/squeue/print.c`` and, where the two differ, what Slurm 22.05
printed on a real cluster (``%s`` is an empty select-plugin field there). A value of None is a
C NULL string and prints ``(null)``. Fields sbatch-k8s has no data for print what Slurm prints
for an unset value (``N/A``, ``(null)``, ``0``, ``*``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Optional, Tuple, Union

from parsers.formats import job_values as jv
from parsers.formats.cells import convert_num_unit, format_timestamp
from parsers.formats.job_stdio import squeue_stderr, squeue_stdout
from parsers.formats.states import is_pending, job_state, state_compact
from parsers.job_records import JobRecord
from parsers.values.time import format_elapsed


@dataclass(frozen=True)
class JobContext:
    """What values depend on besides the record: the time, and ``SLURM_TIME_FORMAT``."""

    now: int
    time_format: Optional[str] = None
    #: Memory amounts converted to units (sacct/sstat ``--noconvert`` clears it).
    convert: bool = True
    #: sacct ``--units``: the one unit (``KMGTP``) every memory amount prints in.
    units: Optional[str] = None


Getter = Callable[[JobRecord, JobContext], Optional[str]]
#: Whether a right-justified value is cut to its width: fixed, or decided per job.
Cut = Union[bool, Callable[[JobRecord], bool]]


@dataclass(frozen=True)
class FieldDef:
    """One field: ``-O`` name, ``-o`` letter (``""``: none), title, value, and whether the
    value (``cut``) and the title (``header_cut``) are cut to a right-justified width."""

    name: str
    letter: str
    header: str
    value: Getter
    cut: Cut = True
    header_cut: bool = True

    def cuts(self, job: JobRecord) -> bool:
        """Whether this job's value is cut to the width."""
        return self.cut(job) if callable(self.cut) else self.cut


def _const(text: Optional[str]) -> Getter:
    return lambda job, ctx: text


def _time(epoch: Optional[int], ctx: JobContext) -> str:
    """``_print_time``: a timestamp, or ``N/A`` when unset."""
    return format_timestamp(epoch, ctx.time_format, ctx.now) if epoch else "N/A"


def _time_limit(job: JobRecord, ctx: JobContext) -> str:
    if not jv.has_time_limit(job):
        return "UNLIMITED"
    return format_elapsed(60 * int(job.time_limit_min or 0))


def _time_left(job: JobRecord, ctx: JobContext) -> str:
    if not jv.has_time_limit(job):
        return "UNLIMITED"
    return format_elapsed(60 * int(job.time_limit_min or 0) - jv.time_used_s(job, ctx.now))


def _end_time(job: JobRecord, ctx: JobContext) -> str:
    end = jv.expected_end(job, ctx.now)
    # slurmctld's end of a job without limit that started, or shows a start (its begin time
    # ahead), lies a year on: squeue prints NONE for it (scontrol Unknown).
    if end is None and not jv.has_time_limit(job) and (
            job.state in ("RUNNING", "SUSPENDED") or jv.shown_start(job, ctx.now) is not None):
        return "NONE"
    return _time(end, ctx)


def _shows_reason(job: JobRecord) -> bool:
    """``%R`` shows the reason for pending, failed, timed-out… jobs (not completing ones)."""
    base = job_state(job.state).base
    return job.state != "COMPLETING" and (
        is_pending(job.state) or job.state == "STAGE_OUT"
        or base in ("TIMEOUT", "OUT_OF_MEMORY", "DEADLINE", "FAILED"))


def _reason_list(job: JobRecord, ctx: JobContext) -> str:
    """``%R``: ``(Reason)`` (cut to the width), else the node list (never cut)."""
    return f"({job.reason})" if _shows_reason(job) else job.node_list


def _array_task(job: JobRecord, ctx: JobContext) -> str:
    if job.array_pending is not None:
        return job.array_pending
    return "N/A" if job.array_task_id is None else str(job.array_task_id)


def _pending_time(job: JobRecord, ctx: JobContext) -> str:
    submit = job.submit_time or 0
    if job.start_time and job.start_time < ctx.now:
        return str(job.start_time - submit)
    return str(ctx.now - submit)


def _exec_host(job: JobRecord, ctx: JobContext) -> str:
    host = job.batch_host if job.batch_flag else job.submit_host
    return host or "n/a"


def _accrue_time(job: JobRecord) -> Optional[int]:
    """When the job began to accrue priority: its eligible time once it is eligible (a held
    job, or one waiting for a dependency, accrues none yet)."""
    if job.accrue_time:
        return job.accrue_time
    if is_pending(job.state) and job.reason in ("JobHeldUser", "JobHeldAdmin", "Dependency",
                                                 "BeginTime"):
        return None
    return job.eligible_time


def _row(name: str, letter: str, header: str, value: Getter, cut: Cut = True,
         header_cut: bool = True) -> FieldDef:
    return FieldDef(name, letter, header, value, cut, header_cut)


_NA, _NULL, _ZERO = _const("N/A"), _const(None), _const("0")

JOB_FIELDS: Tuple[FieldDef, ...] = (
    _row("Account", "a", "ACCOUNT", lambda j, c: jv.text_or_null(j.account)),
    _row("AccrueTime", "", "ACCRUE_TIME", lambda j, c: _time(_accrue_time(j), c)),
    _row("admin_comment", "", "ADMIN_COMMENT", _NULL),
    _row("AllocNodes", "", "ALLOC_NODES", lambda j, c: jv.text_or_null(j.submit_host)),
    _row("AllocSID", "", "ALLOC_SID", lambda j, c: str(j.alloc_sid)),
    _row("ArrayJobId", "F", "ARRAY_JOB_ID", lambda j, c: str(jv.array_job_id(j))),
    _row("ArrayTaskId", "K", "ARRAY_TASK_ID", _array_task),
    _row("AssocId", "", "ASSOC_ID", _ZERO),
    _row("BatchFlag", "", "BATCH_FLAG", lambda j, c: str(int(j.batch_flag))),
    _row("BatchHost", "B", "EXEC_HOST", _exec_host),
    _row("BoardsPerNode", "", "BOARDS_PER_NODE", _ZERO),
    _row("BurstBuffer", "", "BURST_BUFFER", _NULL),
    _row("BurstBufferState", "", "BURST_BUFFER_STATE", _NULL),
    _row("Cluster", "", "CLUSTER", lambda j, c: jv.text_or_null(j.cluster)),
    _row("ClusterFeature", "", "CLUSTER_FEATURES", _NULL),
    _row("Command", "o", "COMMAND", lambda j, c: jv.text_or_null(j.command)),
    _row("Comment", "k", "COMMENT", lambda j, c: jv.text_or_null(j.comment)),
    _row("Container", "", "CONTAINER", _NULL),
    _row("Contiguous", "O", "CONTIGUOUS", _ZERO),
    _row("Cores", "I", "CORES_PER_SOCKET", _const("*")),
    _row("CoreSpec", "X", "CORE_SPEC", _NA),
    _row("CPUsPerTask", "", "CPUS_PER_TASK", lambda j, c: str(j.cpus_per_task)),
    _row("cpus-per-task", "", "CPUS_PER_TASK", lambda j, c: str(j.cpus_per_task)),
    _row("cpus-per-tres", "", "CPUS_PER_TRES", _NA),
    _row("Deadline", "", "DEADLINE", _NA),
    _row("DelayBoot", "", "DELAY_BOOT", _const("0:00")),
    _row("Dependency", "E", "DEPENDENCY", lambda j, c: jv.text_or_null(j.dependency)),
    # the raw wait status, as 22.05's squeue prints it (768 for exit 3, 9 for SIGKILL)
    _row("DerivedEC", "", "DERIVED_EC", lambda j, c: str(int(j.derived_exit_code) << 8)),
    _row("EligibleTime", "", "ELIGIBLE_TIME", lambda j, c: _time(j.eligible_time, c)),
    _row("EndTime", "e", "END_TIME", _end_time),
    # %x only: Slurm 22.05 has no -O name for it (a later one spells it ExcNodes)
    _row("", "x", "EXC_NODES", lambda j, c: j.exc_nodes, cut=False),
    _row("exit_code", "", "EXIT_CODE",
         lambda j, c: str((int(j.exit_code) << 8) | int(j.exit_signal))),
    _row("Feature", "f", "FEATURES", lambda j, c: jv.text_or_null(j.features)),
    _row("Gres", "b", "TRES_PER_NODE", lambda j, c: jv.tres_per_node(j) or "N/A"),
    _row("GroupId", "G", "GROUP", lambda j, c: str(j.gid)),
    _row("GroupName", "g", "GROUP", lambda j, c: j.group),
    _row("HetJobId", "", "HET_JOB_ID", _NA),
    _row("HetJobIdSet", "", "HET_JOB_ID_SET", _NA),
    _row("HetJobOffset", "", "HET_JOB_OFFSET", _NA),
    _row("JobArrayId", "i", "JOBID", lambda j, c: j.job_id_text),
    _row("JobId", "A", "JOBID", lambda j, c: str(j.job_id)),
    _row("LastSchedEval", "", "LAST_SCHED_EVAL",
         lambda j, c: _time(j.last_sched_eval or j.start_time or j.submit_time, c)),
    _row("Licenses", "W", "LICENSES", _NULL),
    _row("MaxCPUs", "", "MAX_CPUS", lambda j, c: str(j.cpus)),
    _row("MaxNodes", "", "MAX_NODES", lambda j, c: str(j.max_nodes or j.node_count)),
    _row("mem-per-tres", "", "MEM_PER_TRES", _NA),
    _row("MCSLabel", "", "MCSLABEL", _NULL),
    _row("MinCPUs", "c", "MIN_CPUS",
         lambda j, c: convert_num_unit(jv.min_cpus_per_node(j), "")),
    _row("MinMemory", "m", "MIN_MEMORY", lambda j, c: jv.memory_text(j.min_memory_mb or 0)),
    _row("MinTime", "", "TIME_MIN", _const("0:00")),
    _row("MinTmpDisk", "d", "MIN_TMP_DISK", _ZERO),
    _row("Name", "j", "NAME", lambda j, c: j.name),
    _row("Network", "", "NETWORK", _NULL),
    _row("Nice", "y", "NICE", lambda j, c: str(j.nice)),
    _row("NodeList", "N", "NODELIST", lambda j, c: j.node_list, cut=False, header_cut=False),
    _row("NTPerCore", "", "NTASKS_PER_CORE", _NA),
    _row("NTPerNode", "", "NTASKS_PER_NODE", lambda j, c: str(j.ntasks_per_node or 0)),
    _row("NTPerSocket", "", "NTASKS_PER_SOCKET", _NA),
    _row("NTPerBoard", "", "NTASKS_PER_BOARD", _ZERO),
    _row("NumCPUs", "C", "CPUS", lambda j, c: str(j.cpus)),
    _row("NumNodes", "D", "NODES", lambda j, c: str(j.node_count)),
    _row("NumTasks", "", "TASKS", lambda j, c: str(jv.num_tasks(j))),
    _row("Origin", "", "ORIGIN", _const("NA")),
    _row("OriginRaw", "", "ORIGIN_RAW", _const("NA")),
    _row("OverSubscribe", "h", "OVER_SUBSCRIBE", lambda j, c: jv.oversubscribe_text(j)),
    _row("PackJobId", "", "HET_JOB_ID", _NA),
    _row("PackJobIdSet", "", "HET_JOB_ID_SET", _NA),
    _row("PackJobOffset", "", "HET_JOB_OFFSET", _NA),
    _row("Partition", "P", "PARTITION", lambda j, c: j.partition),
    _row("PendingTime", "", "PENDING_TIME", _pending_time),
    _row("PreemptTime", "", "PREEMPT_TIME", _NA),
    _row("Prefer", "", "PREFER", _NULL),
    _row("Priority", "p", "PRIORITY", lambda j, c: f"{j.priority / 0xFFFFFFFF:16.14f}"),
    _row("PriorityLong", "Q", "PRIORITY", lambda j, c: str(j.priority)),
    _row("Profile", "", "PROFILE", _const("NotSet")),
    _row("QOS", "q", "QOS", lambda j, c: jv.text_or_null(j.qos)),
    _row("Reason", "r", "REASON", lambda j, c: j.reason),
    _row("ReasonList", "R", "NODELIST(REASON)", _reason_list, cut=_shows_reason,
         header_cut=False),
    _row("Reboot", "", "REBOOT", _ZERO),
    _row("ReqNodes", "n", "REQ_NODES", lambda j, c: j.req_nodes, cut=False),
    _row("ReqSwitch", "", "REQ_SWITCH", _ZERO),
    _row("Requeue", "", "REQUEUE", lambda j, c: str(int(j.requeue))),
    _row("Reservation", "v", "RESERVATION", _NULL),
    _row("ResizeTime", "", "RESIZE_TIME", _NA),
    _row("RestartCnt", "", "RESTART_COUNT", lambda j, c: str(j.restarts)),
    _row("SchedNodes", "Y", "SCHEDNODES", _NULL, cut=False, header_cut=False),
    _row("SCT", "z", "S:C:T", _const("*:*:*")),
    _row("SelectJobInfo", "s", "", _const("")),
    _row("SiblingsActive", "", "ACTIVE_SIBLINGS", _const("NA")),
    _row("SiblingsActiveRaw", "", "ACTIVE_SIBLINGS_RAW", _const("NA")),
    _row("SiblingsViable", "", "VIABLE_SIBLINGS", _const("NA")),
    _row("SiblingsViableRaw", "", "VIALBLE_SIBLINGS_RAW", _const("NA")),
    _row("Shared", "h", "OVER_SUBSCRIBE", lambda j, c: jv.oversubscribe_text(j)),
    _row("Sockets", "H", "SOCKETS_PER_NODE", _const("*")),
    _row("SPerBoard", "", "SOCKETS_PER_BOARD", _ZERO),
    _row("StartTime", "S", "START_TIME", lambda j, c: _time(jv.shown_start(j, c.now), c)),
    _row("State", "T", "STATE", lambda j, c: j.state),
    _row("StateCompact", "t", "ST", lambda j, c: state_compact(j.state)),
    _row("StdErr", "", "STDERR", lambda j, c: squeue_stderr(j)),
    _row("StdIn", "", "STDIN", lambda j, c: jv.text_or_null(j.stdin)),
    _row("StdOut", "", "STDOUT", lambda j, c: squeue_stdout(j)),
    _row("SubmitTime", "V", "SUBMIT_TIME", lambda j, c: _time(j.submit_time, c)),
    _row("system_comment", "", "SYSTEM_COMMENT",
         lambda j, c: jv.text_or_null(j.system_comment)),
    _row("Threads", "J", "THREADS_PER_CORE", _const("*")),
    _row("TimeLeft", "L", "TIME_LEFT", _time_left, cut=False),
    _row("TimeLimit", "l", "TIME_LIMIT", _time_limit, cut=False),
    _row("TimeUsed", "M", "TIME", lambda j, c: format_elapsed(jv.time_used_s(j, c.now)),
         cut=False),
    _row("Tres", "", "TRES_ALLOC", lambda j, c: jv.tres_text(j)),
    _row("tres-alloc", "", "TRES_ALLOC", lambda j, c: jv.tres_text(j)),
    _row("tres-bind", "", "TRES_BIND", _NA),
    _row("tres-freq", "", "TRES_FREQ", _NA),
    _row("tres-per-job", "", "TRES_PER_JOB", _NA),
    _row("tres-per-node", "", "TRES_PER_NODE", lambda j, c: jv.tres_per_node(j) or "N/A"),
    _row("tres-per-socket", "", "TRES_PER_SOCKET", _NA),
    _row("tres-per-task", "", "TRES_PER_TASK", _NA),
    _row("UserId", "U", "UID", lambda j, c: str(j.uid)),
    _row("UserName", "u", "USER", lambda j, c: j.user),
    _row("Wait4Switch", "", "WAIT4SWITCH", _const("0:00")),
    _row("WCKey", "w", "WCKEY", _NULL),
    _row("WorkDir", "Z", "WORK_DIR", lambda j, c: j.work_dir),
)

_BY_LETTER: Dict[str, FieldDef] = {}
_BY_NAME: Dict[str, FieldDef] = {}
for _field in JOB_FIELDS:
    if _field.letter:
        _BY_LETTER.setdefault(_field.letter, _field)
    if _field.name:
        _BY_NAME.setdefault(_field.name.lower(), _field)


def job_field_by_letter(letter: str) -> Optional[FieldDef]:
    """The field of an ``-o`` letter, or None when squeue has no such letter."""
    return _BY_LETTER.get(letter)


def job_field_by_name(name: str) -> Optional[FieldDef]:
    """The field of an ``-O`` name (any case), or None when squeue has no such name."""
    return _BY_NAME.get(name.lower())
