"""The text of a step's usage figures, as Slurm 22.05's ``sacct`` and ``sstat`` print them.

Captured on a real Slurm 22.05.8 (``jobacct_gather/linux``):

- CPU times (``TotalCPU``, ``UserCPU``, ``SystemCPU``) as ``_elapsed_time(secs, usecs)``:
  ``MM:SS.mmm`` when there are milliseconds, else ``00:MM:SS``; ``HH:MM:SS`` from an hour,
  ``D-HH:MM:SS`` from a day (``00:00:00`` for nothing). ``AveCPU``/``MinCPU`` come from the
  TRES CPU figure, whole seconds only (``00:00:02``).
- Memory (``MaxRSS``, ``AveRSS``, ``MaxVMSize``…): bytes through ``convert_num_unit`` with the
  exact flag — a larger unit only while the value divides by 512 (``12980224`` is ``12676K``);
  ``--noconvert`` prints the bytes.
- Disk (``MaxDiskRead``…): sacct prints MiB with two decimals (``0.08M``, ``50.04M``; ``0``
  for none), ``--noconvert`` or not; sstat prints the bytes.
- TRES strings: ``cpu=HH:MM:SS,energy=0,fs/disk=BYTES,mem=…,pages=N,vmem=…`` in (read) and
  ``energy=0,fs/disk=BYTES`` out (written); their ``…Node`` forms name a node per TRES, their
  ``…Task`` forms a task (without ``energy``).
- A step none of whose tasks was sampled (too short for the interval) shows its CPU times and
  ``energy=0`` in four TRES strings; the rest is empty.
"""

from __future__ import annotations

from typing import Callable, Dict, Optional

from parsers.formats.cells import convert_num_unit
from parsers.step_usage import StepUsage

#: How a usage field's text reads a step's usage (None: an empty cell).
UsageText = Callable[[StepUsage, "UsageStyle"], Optional[str]]


class UsageStyle:
    """How amounts print: converted to units (default), as bytes (``--noconvert``) or in one
    unit (sacct ``--units``, which wins), and disk amounts as sacct's MiB or sstat's bytes."""

    def __init__(self, convert: bool = True, disk_bytes: bool = False,
                 units: Optional[str] = None) -> None:
        self.convert = convert
        self.disk_bytes = disk_bytes
        self.units = units


def cpu_time_text(seconds: float) -> str:
    """CPU seconds as TotalCPU/UserCPU/SystemCPU (``_elapsed_time`` with microseconds)."""
    micros = int(round(seconds * 1_000_000))
    whole, rest = divmod(micros, 1_000_000)
    millis = rest // 1000
    days, left = divmod(whole, 86400)
    hours, left = divmod(left, 3600)
    minutes, secs = divmod(left, 60)
    if days:
        return "%d-%02d:%02d:%02d" % (days, hours, minutes, secs)
    if hours:
        return "%02d:%02d:%02d" % (hours, minutes, secs)
    if millis:
        return "%02d:%02d.%03d" % (minutes, secs, millis)
    return "00:%02d:%02d" % (minutes, secs)


def whole_cpu_text(seconds: float) -> str:
    """Whole CPU seconds as AveCPU/MinCPU and the TRES ``cpu=`` value print them."""
    return cpu_time_text(int(seconds))


def memory_text(amount: float, style: UsageStyle) -> str:
    """An amount in bytes, or a count (MaxRSS, AveVMSize, MaxPages, ``mem=``, ``fs/disk=``
    and ``pages=`` in TRES strings)."""
    return convert_num_unit(int(amount), "", convert=style.convert, spec=style.units)


def disk_text(amount: float, style: UsageStyle) -> str:
    """A disk amount in bytes through ``_print_small_double``: sacct feeds it MiB (``0.08M``,
    ``50.04M``), sstat the bytes themselves (``52475587``; one byte reads ``1.00M``)."""
    value, unit = (float(amount), "") if style.disk_bytes else (amount / (1 << 20), "M")
    if value > 1:
        return convert_num_unit(value if value != int(value) else int(value), unit,
                                convert=style.convert, spec=style.units)
    return "%.2fM" % value if value > 0 else "0"


def _tres_in(usage: StepUsage, pick: Callable[[str], float], style: UsageStyle) -> str:
    return "cpu=%s,energy=0,fs/disk=%s,mem=%s,pages=%s,vmem=%s" % (
        whole_cpu_text(pick("cpu")), memory_text(pick("read"), style),
        memory_text(pick("rss"), style), memory_text(pick("pages"), style),
        memory_text(pick("vmem"), style))


def _tres_out(pick: Callable[[str], float], style: UsageStyle) -> str:
    return "energy=0,fs/disk=%s" % memory_text(pick("write"), style)


def _where_in(usage: StepUsage, side: str, part: int) -> str:
    """A TRESUsageIn…Node (``part`` 1) or …Task (``part`` 2) string."""
    at = {name: getattr(usage.metrics[name], side)[part] for name in usage.metrics}
    if part == 1:
        return "cpu=%s,energy=%s,fs/disk=%s,mem=%s,pages=%s,vmem=%s" % (
            at["cpu"], at["cpu"], at["read"], at["rss"], at["pages"], at["vmem"])
    return "cpu=%s,fs/disk=%s,mem=%s,pages=%s,vmem=%s" % (
        at["cpu"], at["read"], at["rss"], at["pages"], at["vmem"])


def _where_out(usage: StepUsage, side: str, part: int) -> str:
    where = getattr(usage.metrics["write"], side)[part]
    return "energy=%s,fs/disk=%s" % (where, where) if part == 1 else "fs/disk=%s" % where


def _max(usage: StepUsage) -> Callable[[str], float]:
    return lambda name: usage.metrics[name].max.value


def _min(usage: StepUsage) -> Callable[[str], float]:
    return lambda name: usage.metrics[name].min.value


def _ave(usage: StepUsage) -> Callable[[str], float]:
    return usage.average


def _tot(usage: StepUsage) -> Callable[[str], float]:
    return lambda name: usage.metrics[name].total


def _metric(name: str, side: str, text: Callable[[float, UsageStyle], str]) -> UsageText:
    if side == "ave":
        return lambda u, s: text(u.average(name), s)
    return lambda u, s: text(getattr(u.metrics[name], side).value, s)


def _where(name: str, side: str, part: int) -> UsageText:
    return lambda u, s: str(getattr(u.metrics[name], side)[part])


def _seconds(value: float, style: UsageStyle) -> str:
    return whole_cpu_text(value)


#: The usage fields of a sampled step's line (sacct and sstat), by Slurm's field name.
_MEASURED: Dict[str, UsageText] = {
    "TotalCPU": lambda u, s: cpu_time_text(u.total_cpu),
    "UserCPU": lambda u, s: cpu_time_text(u.user_cpu),
    "SystemCPU": lambda u, s: cpu_time_text(u.system_cpu),
    "AveCPU": _metric("cpu", "ave", _seconds),
    "MinCPU": _metric("cpu", "min", _seconds),
    "MinCPUNode": _where("cpu", "min", 1), "MinCPUTask": _where("cpu", "min", 2),
    "MaxRSS": _metric("rss", "max", memory_text), "AveRSS": _metric("rss", "ave", memory_text),
    "MaxRSSNode": _where("rss", "max", 1), "MaxRSSTask": _where("rss", "max", 2),
    "MaxVMSize": _metric("vmem", "max", memory_text),
    "AveVMSize": _metric("vmem", "ave", memory_text),
    "MaxVMSizeNode": _where("vmem", "max", 1), "MaxVMSizeTask": _where("vmem", "max", 2),
    "MaxPages": _metric("pages", "max", memory_text),
    "AvePages": _metric("pages", "ave", memory_text),
    "MaxPagesNode": _where("pages", "max", 1), "MaxPagesTask": _where("pages", "max", 2),
    "MaxDiskRead": _metric("read", "max", disk_text),
    "AveDiskRead": _metric("read", "ave", disk_text),
    "MaxDiskReadNode": _where("read", "max", 1), "MaxDiskReadTask": _where("read", "max", 2),
    "MaxDiskWrite": _metric("write", "max", disk_text),
    "AveDiskWrite": _metric("write", "ave", disk_text),
    "MaxDiskWriteNode": _where("write", "max", 1),
    "MaxDiskWriteTask": _where("write", "max", 2),
    "NTasks": lambda u, s: str(u.tasks),
    "TRESUsageInMax": lambda u, s: _tres_in(u, _max(u), s),
    "TRESUsageInMin": lambda u, s: _tres_in(u, _min(u), s),
    "TRESUsageInAve": lambda u, s: _tres_in(u, _ave(u), s),
    "TRESUsageInTot": lambda u, s: _tres_in(u, _tot(u), s),
    "TRESUsageInMaxNode": lambda u, s: _where_in(u, "max", 1),
    "TRESUsageInMaxTask": lambda u, s: _where_in(u, "max", 2),
    "TRESUsageInMinNode": lambda u, s: _where_in(u, "min", 1),
    "TRESUsageInMinTask": lambda u, s: _where_in(u, "min", 2),
    "TRESUsageOutMax": lambda u, s: _tres_out(_max(u), s),
    "TRESUsageOutMin": lambda u, s: _tres_out(_min(u), s),
    "TRESUsageOutAve": lambda u, s: _tres_out(_ave(u), s),
    "TRESUsageOutTot": lambda u, s: _tres_out(_tot(u), s),
    "TRESUsageOutMaxNode": lambda u, s: _where_out(u, "max", 1),
    "TRESUsageOutMaxTask": lambda u, s: _where_out(u, "max", 2),
    "TRESUsageOutMinNode": lambda u, s: _where_out(u, "min", 1),
    "TRESUsageOutMinTask": lambda u, s: _where_out(u, "min", 2),
}
#: What a step never sampled still shows (its CPU times and task count; these four TRES
#: strings as ``energy=0``, as Slurm prints them); every other usage field is empty.
UNSAMPLED_KEPT = ("TotalCPU", "UserCPU", "SystemCPU", "NTasks")
UNSAMPLED_ENERGY = ("TRESUsageInAve", "TRESUsageInTot", "TRESUsageOutAve", "TRESUsageOutTot")


def _when_sampled(name: str, text: UsageText) -> UsageText:
    if name in UNSAMPLED_KEPT:
        return text
    if name in UNSAMPLED_ENERGY:
        return lambda u, s: text(u, s) if u.sampled else "energy=0"
    return lambda u, s: text(u, s) if u.sampled else None


#: The usage fields of a step line (sacct and sstat), by Slurm's field name.
STEP_USAGE: Dict[str, UsageText] = {name: _when_sampled(name, text)
                                    for name, text in _MEASURED.items()}
