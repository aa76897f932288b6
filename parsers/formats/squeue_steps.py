"""``squeue -s``: running steps, one line each (``fmt_data_step`` in ``src/squeue/opts.c``).

A step is shown with its job, as a :data:`StepView` pair ``(job, step)``: the partition and
user come from the job. Step ids print as ``29.batch``, ``29.0``, or ``69_1.batch`` for array
elements; ``TIME`` is the step's run time. Pending steps are not listed (the caller filters).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Optional, Sequence, Tuple

from parsers.formats.cells import format_timestamp
from parsers.formats.squeue_format import (
    STEPS_FORMAT,
    ParsedFormat,
    parse_format,
    parse_long_format,
    render,
)
from parsers.formats.squeue_fields import JobContext
from parsers.job_records import JobRecord, StepRecord
from parsers.values.time import format_elapsed

StepView = Tuple[JobRecord, StepRecord]
StepGetter = Callable[[StepView, JobContext], Optional[str]]

#: Slurm's numbers for named steps (``SLURM_BATCH_SCRIPT`` …), used when sorting by step id.
STEP_NUMBERS: Dict[str, int] = {
    "interactive": 0xFFFFFFFA, "batch": 0xFFFFFFFB, "extern": 0xFFFFFFFC,
    "pending": 0xFFFFFFFD, "TBD": 0xFFFFFFFD,
}


def step_number(step_id: str) -> int:
    """A step id as Slurm's number (``batch`` → 0xFFFFFFFB); unknown names sort last."""
    if step_id.isascii() and step_id.isdigit():
        return int(step_id)
    return STEP_NUMBERS.get(step_id, 0xFFFFFFFF)


def step_id_text(job: JobRecord, step: StepRecord) -> str:
    """``29.batch``, ``29.0``; ``69_1.batch`` for an element of array 69."""
    if job.array_job_id is not None and job.array_task_id is not None:
        return f"{job.array_job_id}_{job.array_task_id}.{step.step_id}"
    return f"{job.job_id}.{step.step_id}"


def step_run_time_s(step: StepRecord, now: int) -> int:
    """Seconds the step has run (to its end when it ended)."""
    if step.start_time is None:
        return 0
    end = step.end_time if step.end_time is not None else now
    return max(end - step.start_time, 0)


@dataclass(frozen=True)
class StepFieldDef:
    """One step field; see :class:`parsers.formats.squeue_fields.FieldDef`."""

    name: str
    letter: str
    header: str
    value: StepGetter
    cut: bool = True
    header_cut: bool = True
    #: squeue prints the START_TIME title left-justified whatever the format says.
    header_left: bool = False

    def cuts(self, view: StepView) -> bool:
        """Whether the value is cut to a right-justified width."""
        return self.cut


def _const(text: Optional[str]) -> StepGetter:
    return lambda view, ctx: text


def _start(view: StepView, ctx: JobContext) -> str:
    start = view[1].start_time
    return format_timestamp(start, ctx.time_format, ctx.now) if start else "N/A"


def _array_job(view: StepView, ctx: JobContext) -> str:
    """A step's ``array_job_id``: 0 when the job is no array (squeue prints it as is)."""
    job = view[0]
    return str(job.array_job_id if job.array_task_id is not None else 0)


def _array_task(view: StepView, ctx: JobContext) -> str:
    task = view[0].array_task_id
    return "N/A" if task is None else str(task)


_NULL = _const(None)


def _whole_job(view: StepView) -> bool:
    """The batch or extern step (not one srun started)."""
    return view[1].step_id in ("batch", "extern")

STEP_FIELDS: Tuple[StepFieldDef, ...] = (
    StepFieldDef("ArrayJobId", "", "ARRAY_JOB_ID", _array_job),
    StepFieldDef("ArrayTaskId", "", "ARRAY_TASK_ID", _array_task),
    StepFieldDef("Cluster", "", "CLUSTER", lambda v, c: v[0].cluster or None),
    StepFieldDef("Container", "", "CONTAINER", _NULL),
    StepFieldDef("ContainerId", "", "CONTAINER", _NULL),
    # slurmctld knows an srun step's (unset) frequency request; the batch and extern steps
    # have none at all (0-0:0), and their CPUs are the job's, not counted again (0)
    StepFieldDef("CPUFreq", "", "CPU_FREQ", lambda v, c: "0-0:0" if _whole_job(v) else
                 "Unknown-Unknown:Unknown"),
    StepFieldDef("cpus-per-tres", "", "CPUS_PER_TRES", _NULL),
    StepFieldDef("Gres", "", "TRES_PER_JOB", _NULL),
    StepFieldDef("JobId", "", "JOB_ID", lambda v, c: str(v[0].job_id)),
    StepFieldDef("mem-per-tres", "", "MEM_PER_TRES", _NULL),
    StepFieldDef("Network", "", "NETWORK", _NULL),
    StepFieldDef("Nodes", "N", "NODELIST", lambda v, c: v[1].node_list, cut=False,
                 header_cut=False),
    StepFieldDef("NumCPUs", "", "NUM_CPUS", lambda v, c: "0" if _whole_job(v) else
                 str(v[1].cpus)),
    StepFieldDef("NumTasks", "A", "TASKS", lambda v, c: str(v[1].ntasks)),
    StepFieldDef("Partition", "P", "PARTITION", lambda v, c: v[0].partition),
    StepFieldDef("ResvPorts", "", "RESERVED_PORTS", _NULL),
    StepFieldDef("StartTime", "S", "START_TIME", _start, header_left=True),
    StepFieldDef("StepId", "i", "STEPID", lambda v, c: step_id_text(*v)),
    StepFieldDef("StepName", "j", "NAME", lambda v, c: v[1].name),
    StepFieldDef("StepState", "", "STATE", lambda v, c: v[1].state),
    StepFieldDef("TimeLimit", "l", "TIME_LIMIT", _const("UNLIMITED")),
    StepFieldDef("TimeUsed", "M", "TIME",
                 lambda v, c: format_elapsed(step_run_time_s(v[1], c.now)), cut=False),
    StepFieldDef("tres-bind", "", "TRES_BIND", _NULL),
    StepFieldDef("tres-freq", "", "TRES_FREQ", _NULL),
    StepFieldDef("tres-per-job", "", "TRES_PER_STEP", _NULL),
    StepFieldDef("tres-per-node", "b", "TRES_PER_JOB", _NULL),
    StepFieldDef("tres-per-socket", "", "TRES_PER_SOCKET", _NULL),
    StepFieldDef("tres-per-step", "", "TRES_PER_STEP", _NULL),
    StepFieldDef("tres-per-task", "", "TRES_PER_TASK", _NULL),
    StepFieldDef("UserId", "U", "UID", lambda v, c: str(v[0].uid)),
    StepFieldDef("UserName", "u", "USER", lambda v, c: v[0].user),
)

_BY_LETTER = {f.letter: f for f in reversed(STEP_FIELDS) if f.letter}
_BY_NAME = {f.name.lower(): f for f in reversed(STEP_FIELDS)}


def step_field_by_letter(letter: str) -> Optional[StepFieldDef]:
    """The step field of an ``-o`` letter, or None."""
    return _BY_LETTER.get(letter)


def step_field_by_name(name: str) -> Optional[StepFieldDef]:
    """The step field of an ``-O`` name (any case), or None."""
    return _BY_NAME.get(name.lower())


def parse_step_format(fmt: str) -> ParsedFormat:
    """Read an ``-o`` format in step mode (errors say ``Invalid job step format …``)."""
    return parse_format(fmt, step_field_by_letter, "job step")


def parse_step_long_format(spec: str) -> ParsedFormat:
    """Read an ``-O`` list in step mode."""
    return parse_long_format(spec, step_field_by_name, "job step")


def format_squeue_steps(steps: Sequence[StepView], fmt: str = STEPS_FORMAT, now: int = 0,
                        header: bool = True, time_format: Optional[str] = None,
                        long_format: bool = False) -> str:
    """``squeue -s``: ``fmt`` is an ``-o`` format, or an ``-O`` list when ``long_format``."""
    parsed = parse_step_long_format(fmt) if long_format else parse_step_format(fmt)
    return render(parsed, steps, JobContext(now, time_format), header)
