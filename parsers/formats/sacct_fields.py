"""sacct's fields: name, default width, kind and value for a job line and for a step line.

The table is Slurm 22.05's (``sacct --helpformat`` and the widths it printed on a real
cluster), in its order — which matters, because ``--format`` matches the first name that
*starts with* what was typed — plus ``StdErr``/``StdIn``/``StdOut`` from later releases.
A negative width means left-justified. A value of None prints as an empty cell.

Values follow ``src/sacct/print.c``: steps leave the job-level columns empty (Partition,
User, Timelimit…), ``Submit``/``Eligible`` of a step are its start, a job never started has
``NodeList`` ``None assigned``, a cancelled job's state reads ``CANCELLED by <uid>``.
The usage fields (``TotalCPU``, ``MaxRSS``, ``TRESUsageInMax``…) print a step's recorded usage
(:mod:`parsers.formats.usage_values`) once the step has ended — sacct never samples, so a
running step shows ``00:00:00`` and empty cells, as in Slurm; the job line has only the CPU
times, summed over its ended steps. Energy is not measured (``0``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable, Dict, Optional, Tuple

from parsers.formats import job_values as jv
from parsers.formats.cells import (
    DATE,
    NUMBER,
    STRING,
    UNIT_LETTERS,
    convert_num_unit,
    format_timestamp,
)
from parsers.formats.squeue_fields import JobContext
from parsers.formats.states import stored_state
from parsers.formats.usage_values import STEP_USAGE, UsageStyle, cpu_time_text
from parsers.job_records import CANCELLED, NODE_FAIL, RUNNING, TIMEOUT, JobRecord, StepRecord
from parsers.step_usage import StepUsage
from parsers.values.time import format_duration_hms, format_time_limit

Getter = Callable[[JobRecord, Optional[StepRecord], JobContext], Optional[str]]


@dataclass(frozen=True)
class SacctField:
    """One column: Slurm's name, default signed width, cell kind, value."""

    name: str
    width: int
    kind: str
    value: Getter


def elapsed_s(start: Optional[int], end: Optional[int], now: int) -> int:
    """Seconds from start to end (or now); 0 before the start."""
    if start is None:
        return 0
    return max((end if end is not None else now) - start, 0)


def exit_code_cell(code: int, signal: int) -> str:
    """An ExitCode cell: ``exit:signal``, but an exit status of 128 or more less 128, as
    ``src/sacct/print.c`` prints it (22.05 and since): a shell that reports its child's
    SIGTERM as 143 reads ``15:0`` here, while scontrol and squeue show ``143:0``."""
    return jv.exit_code_text(code - 128 if code >= 128 else code, signal)


def _job_exit(job: JobRecord) -> str:
    """A job's ExitCode as sacct prints it: the batch script's, but ``0:0`` for a job that
    was cancelled, ran out of time or lost a node (its batch step carries the signal; real
    Slurm 22.05: scontrol ``ExitCode=0:15``, sacct ``NODE_FAIL 0:0``)."""
    if job.state in (CANCELLED, TIMEOUT, NODE_FAIL):
        return "0:0"
    return exit_code_cell(job.exit_code, job.exit_signal)


def _elapsed(job: JobRecord, step: Optional[StepRecord], now: int) -> int:
    if step is not None:
        return elapsed_s(step.start_time, step.end_time, now)
    return elapsed_s(job.start_time, job.end_time, now)


def _stamp(epoch: Optional[int], ctx: JobContext) -> str:
    return format_timestamp(epoch, ctx.time_format, ctx.now)


def sacct_tres(tres: str, ctx: Optional[JobContext] = None) -> str:
    """A TRES string as the database returns it: items sorted by name, its ``mem=`` as
    ``--noconvert``/``--units`` ask."""
    items = sorted(item for item in tres.split(",") if item)
    if ctx is not None and (ctx.units or not ctx.convert):
        items = [f"mem={_tres_memory(item[4:], ctx)}" if item.startswith("mem=") else item
                 for item in items]
    return ",".join(items)


def _tres_memory(text: str, ctx: JobContext) -> str:
    """A TRES memory amount as printed (``1.50G``, ``2048M``) again, as ``--noconvert``/
    ``--units`` print it."""
    found = re.fullmatch(r"(\d+(?:\.\d+)?)([KMGTP]?)", text)
    if found is None:
        return text
    letter = found.group(2) or "M"
    amount = float(found.group(1)) * 1024.0 ** (UNIT_LETTERS.index(letter) - 2)
    return convert_num_unit(amount, "M", convert=ctx.convert, spec=ctx.units)


def _state(job: JobRecord, step: Optional[StepRecord], ctx: JobContext) -> str:
    if step is not None:
        return step.state
    if job.state == CANCELLED and job.cancelled_by is not None:
        return f"CANCELLED by {job.cancelled_by}"
    return stored_state(job.state)


def _reserved_s(job: JobRecord, now: int) -> int:
    """``Reserved``/``Planned``: time from eligible to start (or to now while pending)."""
    if not job.eligible_time:
        return 0
    return max((job.start_time if job.start_time else now) - job.eligible_time, 0)


#: Pending reasons slurmctld never writes to the database (``state_reason_prev_db``), and
#: JobArrayTaskLimit, which a real 22.05 database did not show either.
UNRECORDED_REASONS = ("None", "Priority", "Resources", "JobArrayTaskLimit")


def _reason(job: JobRecord, ctx: JobContext) -> str:
    """``Reason``: the last pending reason the database kept, ``None`` once the job ran."""
    if job.start_time is not None or job.reason in UNRECORDED_REASONS:
        return "None"
    return job.reason


def _time_limit(job: JobRecord, raw: bool) -> str:
    if job.time_limit_min is None:
        return "UNLIMITED" if job.start_time else "Partition_Limit"
    if job.time_limit_min == 0:
        return "UNLIMITED"
    return str(job.time_limit_min) if raw else format_time_limit(job.time_limit_min)


def _job(get: Callable[[JobRecord, JobContext], Optional[str]]) -> Getter:
    """A job-only column: empty on step lines."""
    return lambda job, step, ctx: get(job, ctx) if step is None else None


def _both(job_get: Callable[[JobRecord, JobContext], Optional[str]],
          step_get: Callable[[StepRecord, JobContext], Optional[str]]) -> Getter:
    return lambda job, step, ctx: job_get(job, ctx) if step is None else step_get(step, ctx)


def _const(text: Optional[str]) -> Getter:
    return lambda job, step, ctx: text


def _step_id(job_part: str, step: StepRecord) -> str:
    return f"{job_part}.{step.step_id}"


def _ended_usage(step: StepRecord) -> Optional[StepUsage]:
    """A step's usage as sacct shows it: recorded, and the step over."""
    return step.usage if step.state != RUNNING else None


def _usage(name: str) -> Getter:
    """A step-only usage column (empty on job lines and for steps without usage)."""
    text = STEP_USAGE[name]

    def get(job: JobRecord, step: Optional[StepRecord], ctx: JobContext) -> Optional[str]:
        usage = _ended_usage(step) if step is not None else None
        return text(usage, UsageStyle(ctx.convert, units=ctx.units)) if usage is not None \
            else None
    return get


#: The CPU time columns: a step's, or on the job line the sum over its ended steps.
_CPU_PARTS: Dict[str, Callable[[StepUsage], float]] = {
    "TotalCPU": lambda u: u.total_cpu, "UserCPU": lambda u: u.user_cpu,
    "SystemCPU": lambda u: u.system_cpu,
}


def _cpu_time(name: str) -> Getter:
    part = _CPU_PARTS[name]

    def get(job: JobRecord, step: Optional[StepRecord], ctx: JobContext) -> str:
        steps = job.steps if step is None else (step,)
        return cpu_time_text(sum(part(u) for u in map(_ended_usage, steps) if u is not None))
    return get


_NONE = _const(None)
_ZERO_TIME = _const("00:00:00")
_S, _D, _N = STRING, DATE, NUMBER

SACCT_FIELDS: Tuple[SacctField, ...] = tuple(SacctField(*row) for row in (
    ("Account", 10, _S, lambda j, s, c: j.account or None),
    ("AdminComment", 15, _S, _NONE),
    ("AllocCPUS", 10, _N, _both(lambda j, c: str(j.cpus), lambda s, c: str(s.cpus))),
    ("AllocNodes", 10, _S, _both(lambda j, c: str(j.node_count if j.start_time else 0),
                                 lambda s, c: str(s.node_count))),
    ("AllocTRES", 10, _S,
     _both(lambda j, c: sacct_tres(jv.tres_text(j), c) if j.start_time else None,
           lambda s, c: sacct_tres(s.tres, c) or None)),
    ("AssocID", 7, _N, _NONE),
    ("AveCPU", 10, _S, _NONE), ("AveCPUFreq", 10, _S, _NONE),
    ("AveDiskRead", 14, _S, _NONE), ("AveDiskWrite", 14, _S, _NONE),
    ("AvePages", 10, _S, _NONE), ("AveRSS", 10, _S, _NONE), ("AveVMSize", 10, _S, _NONE),
    ("BlockID", 16, _S, _NONE),
    ("Cluster", 10, _S, lambda j, s, c: j.cluster or None),
    ("Comment", 14, _S, _NONE),
    ("Constraints", 19, _S, _job(lambda j, c: j.features or None)),
    ("ConsumedEnergy", 14, _S, _const("0")),
    ("ConsumedEnergyRaw", 17, _N, _const("0")),
    ("Container", 19, _S, _NONE),
    ("CPUTime", 10, _N, lambda j, s, c: format_duration_hms(
        _elapsed(j, s, c.now) * (s.cpus if s else j.cpus))),
    ("CPUTimeRAW", 10, _N,
     lambda j, s, c: str(_elapsed(j, s, c.now) * (s.cpus if s else j.cpus))),
    ("DBIndex", -10, _N, _NONE),
    ("DerivedExitCode", 15, _S, _job(lambda j, c: f"{j.derived_exit_code}:0")),
    ("Elapsed", 10, _N, lambda j, s, c: format_duration_hms(_elapsed(j, s, c.now))),
    ("ElapsedRaw", 10, _N, lambda j, s, c: str(_elapsed(j, s, c.now))),
    ("Eligible", 19, _D, _both(lambda j, c: _stamp(j.eligible_time, c),
                               lambda s, c: _stamp(s.start_time, c))),
    ("End", 19, _D, _both(lambda j, c: _stamp(j.end_time, c),
                          lambda s, c: _stamp(s.end_time, c))),
    ("ExitCode", 8, _S, _both(lambda j, c: _job_exit(j),
                              lambda s, c: exit_code_cell(s.exit_code, s.exit_signal))),
    ("Flags", 19, _S, _job(lambda j, c: "SchedMain,StartRecieved" if j.start_time
                           else "StartRecieved")),
    ("GID", 6, _N, _job(lambda j, c: str(j.gid))),
    ("Group", 9, _S, _job(lambda j, c: j.group)),
    ("JobID", -12, _S, lambda j, s, c: j.job_id_text if s is None else _step_id(
        j.job_id_text, s)),
    ("JobIDRaw", -12, _S, lambda j, s, c: str(j.job_id) if s is None else _step_id(
        str(j.job_id), s)),
    ("JobName", 10, _S, _both(lambda j, c: j.name, lambda s, c: s.name)),
    ("Layout", 9, _S, _both(lambda j, c: None, lambda s, c: s.layout or "Unknown")),
    ("MaxDiskRead", 12, _S, _NONE), ("MaxDiskReadNode", 15, _S, _NONE),
    ("MaxDiskReadTask", 15, _N, _NONE), ("MaxDiskWrite", 12, _S, _NONE),
    ("MaxDiskWriteNode", 16, _S, _NONE), ("MaxDiskWriteTask", 16, _N, _NONE),
    ("MaxPages", 8, _S, _NONE), ("MaxPagesNode", 12, _S, _NONE),
    ("MaxPagesTask", 14, _N, _NONE), ("MaxRSS", 10, _S, _NONE),
    ("MaxRSSNode", 10, _S, _NONE), ("MaxRSSTask", 10, _N, _NONE),
    ("MaxVMSize", 10, _S, _NONE), ("MaxVMSizeNode", 14, _S, _NONE),
    ("MaxVMSizeTask", 14, _N, _NONE), ("McsLabel", 12, _S, _NONE),
    ("MinCPU", 10, _S, _NONE), ("MinCPUNode", 10, _S, _NONE), ("MinCPUTask", 10, _N, _NONE),
    ("NCPUS", 10, _N, _both(lambda j, c: str(j.cpus), lambda s, c: str(s.cpus))),
    ("NNodes", 8, _N, _both(lambda j, c: str(j.node_count), lambda s, c: str(s.node_count))),
    ("NodeList", 15, _S, _both(lambda j, c: j.node_list if j.start_time else "None assigned",
                               lambda s, c: s.node_list)),
    ("NTasks", 8, _N, _both(lambda j, c: None, lambda s, c: str(s.ntasks))),
    ("Partition", 10, _S, _job(lambda j, c: j.partition)),
    ("Priority", 10, _N, _job(lambda j, c: str(j.priority))),
    ("QOS", 10, _S, _job(lambda j, c: j.qos or None)),
    ("QOSRAW", 6, _N, _NONE),
    ("Reason", 22, _S, _job(_reason)),
    ("ReqCPUFreq", 10, _S, _both(lambda j, c: "Unknown", lambda s, c: "0")),
    ("ReqCPUFreqGov", 13, _S, _both(lambda j, c: "Unknown", lambda s, c: "0")),
    ("ReqCPUFreqMax", 13, _S, _both(lambda j, c: "Unknown", lambda s, c: "0")),
    ("ReqCPUFreqMin", 13, _S, _both(lambda j, c: "Unknown", lambda s, c: "0")),
    ("ReqCPUS", 8, _N, _both(lambda j, c: str(j.cpus), lambda s, c: str(s.cpus))),
    ("ReqMem", 10, _S, _job(lambda j, c: convert_num_unit(jv.total_memory_mb(j), "M",
                                                         convert=c.convert, spec=c.units))),
    ("ReqNodes", 8, _S,
     _both(lambda j, c: str(j.node_count), lambda s, c: str(s.node_count))),
    ("ReqTRES", 10, _S, _job(lambda j, c: sacct_tres(jv.tres_text(j), c))),
    ("Reservation", 20, _S, _NONE),
    ("ReservationId", 8, _N, _NONE),
    ("Reserved", 10, _N, _job(lambda j, c: format_duration_hms(_reserved_s(j, c.now)))),
    ("ResvCPU", 10, _N,
     _job(lambda j, c: format_duration_hms(_reserved_s(j, c.now) * j.cpus))),
    ("ResvCPURAW", 10, _N, _job(lambda j, c: str(_reserved_s(j, c.now) * j.cpus))),
    ("Start", 19, _D, _both(lambda j, c: _stamp(j.start_time, c),
                            lambda s, c: _stamp(s.start_time, c))),
    ("State", 10, _S, _state),
    ("StdErr", 20, _S, _job(lambda j, c: j.stderr or None)),
    ("StdIn", 20, _S, _job(lambda j, c: j.stdin or None)),
    ("StdOut", 20, _S, _job(lambda j, c: j.stdout or None)),
    ("Submit", 19, _D, _both(lambda j, c: _stamp(j.submit_time, c),
                             lambda s, c: _stamp(s.start_time, c))),
    ("SubmitLine", 20, _S, _both(lambda j, c: j.submit_line or None,
                                 lambda s, c: s.submit_line or None)),
    ("Suspended", 10, _N, _ZERO_TIME),
    ("SystemComment", 15, _S, _job(lambda j, c: j.system_comment or None)),
    ("SystemCPU", 10, _S, _cpu_time("SystemCPU")),
    ("Timelimit", 10, _S, _job(lambda j, c: _time_limit(j, raw=False))),
    ("TimelimitRaw", 10, _S, _job(lambda j, c: _time_limit(j, raw=True))),
    ("TotalCPU", 10, _S, _cpu_time("TotalCPU")),
) + tuple((name, width, _S, _NONE) for name, width in (
    ("TRESUsageInAve", 14), ("TRESUsageInMax", 14), ("TRESUsageInMaxNode", 18),
    ("TRESUsageInMaxTask", 18), ("TRESUsageInMin", 14), ("TRESUsageInMinNode", 18),
    ("TRESUsageInMinTask", 18), ("TRESUsageInTot", 14), ("TRESUsageOutAve", 15),
    ("TRESUsageOutMax", 15), ("TRESUsageOutMaxNode", 19), ("TRESUsageOutMaxTask", 19),
    ("TRESUsageOutMin", 15), ("TRESUsageOutMinNode", 19), ("TRESUsageOutMinTask", 19),
    ("TRESUsageOutTot", 15))) + (
    ("UID", 6, _N, _job(lambda j, c: str(j.uid))),
    ("User", 9, _S, _job(lambda j, c: j.user)),
    ("UserCPU", 10, _S, _cpu_time("UserCPU")),
    ("WCKey", 10, _S, _NONE),
    ("WCKeyID", 10, _N, _NONE),
    ("WorkDir", 20, _S, _job(lambda j, c: j.work_dir or None)),
))
#: Every usage column but the CPU times reads the step's usage (the table above keeps
#: Slurm's order and widths; their values come from :data:`STEP_USAGE`).
SACCT_FIELDS = tuple(replace(field, value=_usage(field.name))
                     if field.name in STEP_USAGE and field.name not in _CPU_PARTS
                     and field.name != "NTasks" else field for field in SACCT_FIELDS)
