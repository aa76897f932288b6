"""sstat's fields and listing: a running step's usage so far, as Slurm 22.05's ``sstat`` prints it.

The fields, their order (``sstat --helpformat``) and default widths are those a real sstat
printed; ``--format`` follows sacct's rules (:func:`parsers.formats.sacct_format.parse_format`).
Values come from the step's usage (:data:`parsers.formats.usage_values.STEP_USAGE`) with
sstat's differences: disk amounts in bytes, and the ``…Task`` TRES strings pass their task
ids through the usage formatter, so the ``cpu`` entry reads as a time (``cpu=00:00:03``), as
Slurm prints it. Not measured here: CPU frequency (``AveCPUFreq`` ``0``), energy (``0``),
task pids (``Pids`` empty). ReqCPUFreq* read ``Unknown`` for srun steps and ``0`` for the
batch step, as Slurm's do.
"""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple

from parsers.formats.cells import STRING, print_field, print_header
from parsers.formats.sacct_fields import SacctField
from parsers.formats.sacct_format import FieldSpec
from parsers.formats.usage_values import STEP_USAGE, UsageStyle, whole_cpu_text
from parsers.job_records import JobRecord, StepRecord
from parsers.step_usage import StepUsage

#: The default field list (every field but ConsumedEnergyRaw, Nodelist, Pids, ReqCPUFreq).
DEFAULT_FIELDS = (
    "JobID,MaxVMSize,MaxVMSizeNode,MaxVMSizeTask,AveVMSize,MaxRSS,MaxRSSNode,MaxRSSTask,"
    "AveRSS,MaxPages,MaxPagesNode,MaxPagesTask,AvePages,MinCPU,MinCPUNode,MinCPUTask,AveCPU,"
    "NTasks,AveCPUFreq,ReqCPUFreqMin,ReqCPUFreqMax,ReqCPUFreqGov,ConsumedEnergy,MaxDiskRead,"
    "MaxDiskReadNode,MaxDiskReadTask,AveDiskRead,MaxDiskWrite,MaxDiskWriteNode,"
    "MaxDiskWriteTask,AveDiskWrite,TRESUsageInAve,TRESUsageInMax,TRESUsageInMaxNode,"
    "TRESUsageInMaxTask,TRESUsageInMin,TRESUsageInMinNode,TRESUsageInMinTask,TRESUsageInTot,"
    "TRESUsageOutAve,TRESUsageOutMax,TRESUsageOutMaxNode,TRESUsageOutMaxTask,"
    "TRESUsageOutMin,TRESUsageOutMinNode,TRESUsageOutMinTask,TRESUsageOutTot")

Value = Callable[[StepRecord, StepUsage, UsageStyle], Optional[str]]


def _usage(name: str) -> Value:
    return lambda step, usage, style: STEP_USAGE[name](usage, style)


def _task_entry(text: str) -> str:
    """A ``…Task`` string with its ``cpu=<task>`` entry read as seconds (sstat's quirk)."""
    head, sep, rest = text.partition(",")
    key, _, task = head.partition("=")
    return f"{key}={whole_cpu_text(int(task))}{sep}{rest}" if key == "cpu" else text


def _task_tres(name: str) -> Value:
    return lambda step, usage, style: _task_entry(STEP_USAGE[name](usage, style) or "")


def _req_freq(step: StepRecord, usage: StepUsage, style: UsageStyle) -> str:
    return "Unknown" if step.step_id.isdigit() else "0"


#: (name, width, value) in ``sstat --helpformat`` order.
_ROWS: Tuple[Tuple[str, int, Value], ...] = (
    ("AveCPU", 10, _usage("AveCPU")), ("AveCPUFreq", 10, lambda s, u, st: "0"),
    ("AveDiskRead", 12, _usage("AveDiskRead")), ("AveDiskWrite", 12, _usage("AveDiskWrite")),
    ("AvePages", 10, _usage("AvePages")), ("AveRSS", 10, _usage("AveRSS")),
    ("AveVMSize", 10, _usage("AveVMSize")), ("ConsumedEnergy", 14, lambda s, u, st: "0"),
    ("ConsumedEnergyRaw", 17, lambda s, u, st: "0"),
    ("JobID", -12, lambda s, u, st: None),   # filled in by the listing (it knows the job)
    ("MaxDiskRead", 12, _usage("MaxDiskRead")),
    ("MaxDiskReadNode", 15, _usage("MaxDiskReadNode")),
    ("MaxDiskReadTask", 15, _usage("MaxDiskReadTask")),
    ("MaxDiskWrite", 12, _usage("MaxDiskWrite")),
    ("MaxDiskWriteNode", 16, _usage("MaxDiskWriteNode")),
    ("MaxDiskWriteTask", 16, _usage("MaxDiskWriteTask")),
    ("MaxPages", 8, _usage("MaxPages")), ("MaxPagesNode", 12, _usage("MaxPagesNode")),
    ("MaxPagesTask", 14, _usage("MaxPagesTask")), ("MaxRSS", 10, _usage("MaxRSS")),
    ("MaxRSSNode", 10, _usage("MaxRSSNode")), ("MaxRSSTask", 10, _usage("MaxRSSTask")),
    ("MaxVMSize", 10, _usage("MaxVMSize")), ("MaxVMSizeNode", 14, _usage("MaxVMSizeNode")),
    ("MaxVMSizeTask", 14, _usage("MaxVMSizeTask")), ("MinCPU", 10, _usage("MinCPU")),
    ("MinCPUNode", 10, _usage("MinCPUNode")), ("MinCPUTask", 10, _usage("MinCPUTask")),
    ("Nodelist", 20, lambda s, u, st: s.node_list or None),
    ("NTasks", 8, _usage("NTasks")), ("Pids", 20, lambda s, u, st: None),
    ("ReqCPUFreq", 13, _req_freq), ("ReqCPUFreqMin", 13, _req_freq),
    ("ReqCPUFreqMax", 13, _req_freq), ("ReqCPUFreqGov", 13, _req_freq),
    ("TRESUsageInAve", 14, _usage("TRESUsageInAve")),
    ("TRESUsageInMax", 14, _usage("TRESUsageInMax")),
    ("TRESUsageInMaxNode", 18, _usage("TRESUsageInMaxNode")),
    ("TRESUsageInMaxTask", 18, _task_tres("TRESUsageInMaxTask")),
    ("TRESUsageInMin", 14, _usage("TRESUsageInMin")),
    ("TRESUsageInMinNode", 18, _usage("TRESUsageInMinNode")),
    ("TRESUsageInMinTask", 18, _task_tres("TRESUsageInMinTask")),
    ("TRESUsageInTot", 14, _usage("TRESUsageInTot")),
    ("TRESUsageOutAve", 15, _usage("TRESUsageOutAve")),
    ("TRESUsageOutMax", 15, _usage("TRESUsageOutMax")),
    ("TRESUsageOutMaxNode", 19, _usage("TRESUsageOutMaxNode")),
    ("TRESUsageOutMaxTask", 19, _usage("TRESUsageOutMaxTask")),
    ("TRESUsageOutMin", 15, _usage("TRESUsageOutMin")),
    ("TRESUsageOutMinNode", 19, _usage("TRESUsageOutMinNode")),
    ("TRESUsageOutMinTask", 19, _usage("TRESUsageOutMinTask")),
    ("TRESUsageOutTot", 15, _usage("TRESUsageOutTot")),
)
VALUES = {name: value for name, _, value in _ROWS}
#: sstat's fields as sacct-style columns (for :func:`parse_format` and ``--helpformat``).
SSTAT_FIELDS: Tuple[SacctField, ...] = tuple(
    SacctField(name, width, STRING, lambda job, step, ctx: None) for name, width, _ in _ROWS)


def format_sstat(lines: Sequence[Tuple[JobRecord, StepRecord]], fields: Sequence[FieldSpec],
                 parsable: Optional[str] = None, header: bool = True,
                 convert: bool = True) -> str:
    """The header (unless ``header`` is False) and one line per ``(job, step)`` with usage.
    ``parsable``: None (columns), ``"p"`` or ``"P"`` as sacct's."""
    style = UsageStyle(convert=convert, disk_bytes=True)
    out: List[str] = []
    if header:
        out.append("".join(print_header(spec.name, spec.width, parsable, "|",
                                        i == len(fields) - 1)
                           for i, spec in enumerate(fields)))
        if not parsable:
            out.append("".join("-" * abs(spec.width) + " " for spec in fields))
    for job, step in lines:
        if step.usage is None:
            continue
        cells = []
        for index, spec in enumerate(fields):
            if spec.name == "JobID":
                value: Optional[str] = f"{job.job_id_text}.{step.step_id}"
            else:
                value = VALUES[spec.name](step, step.usage, style)
            cells.append(print_field(value, spec.width, STRING, parsable, "|",
                                     index == len(fields) - 1))
        out.append("".join(cells))
    return "".join(line + "\n" for line in out)


def helpformat() -> str:
    """``sstat --helpformat``: the field names, four to a line."""
    names = [f"{name:<19}" for name, _, _ in _ROWS]
    return "".join(" ".join(names[i:i + 4]) + "\n" for i in range(0, len(names), 4))


