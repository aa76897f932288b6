"""sacct's text for usage figures (not yet wired to sacct's fields, see issue 19).

CPU times as Slurm's ``_elapsed_time`` prints them (``MM:SS.mmm`` under an hour, then
``HH:MM:SS``, then ``D-HH:MM:SS``) and memory/disk amounts counted in KiB as sacct's
``convert_num_unit`` prints them with its default exact conversion: a larger unit only when
the value divides exactly (``102400`` KiB is ``100M``; ``10452`` KiB stays ``10452K``;
zero is ``0``).
"""

from __future__ import annotations

UNIT_LETTERS = "KMGTP"


def cpu_time_text(seconds: float) -> str:
    """CPU seconds as sacct's TotalCPU/UserCPU/SystemCPU/AveCPU text."""
    millis = int(round(seconds * 1000))
    whole, ms = divmod(millis, 1000)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return "%d-%02d:%02d:%02d" % (days, hours, minutes, secs)
    if hours:
        return "%02d:%02d:%02d" % (hours, minutes, secs)
    return "%02d:%02d.%03d" % (minutes, secs, ms)


def kib_text(kib: int) -> str:
    """An amount in KiB as sacct prints MaxRSS/AveRSS/MaxVMSize."""
    if kib == 0:
        return "0"
    unit = 0
    while kib % 1024 == 0 and unit + 1 < len(UNIT_LETTERS):
        kib //= 1024
        unit += 1
    return "%d%s" % (kib, UNIT_LETTERS[unit])
