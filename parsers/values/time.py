"""Durations: ``--time``/``--time-min`` values and the ways Slurm prints them.

Parsing follows ``time_str2secs``/``time_str2mins`` in Slurm's ``src/common/parse_time.c``;
printing follows ``_print_secs`` (squeue ``TIME``/``TIME_LEFT``/``TIME_LIMIT``),
``mins2time_str`` (scontrol ``TimeLimit``) and ``secs2time_str`` (sacct ``Elapsed``,
scontrol ``RunTime``).

Deliberate differences from Slurm: a negative day count (``-2``, ``-1-0``) and totals of
2**31 seconds or more are rejected; Slurm computes them in a C ``int`` and gets garbage.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from parsers.input_errors import ValueSyntaxError
from parsers.values.grammar import parse_value

#: Largest duration accepted, in seconds (what fits in Slurm's signed 32-bit arithmetic).
MAX_DURATION_S = 2**31 - 1
#: squeue prints ``INVALID`` for times beyond a (365-day) year.
YEAR_S = 365 * 86400


class TimeTransformer:
    """Rules of ``time.lark``: each alternative returns seconds, or None for infinite."""

    def INT(self, token: str) -> int:
        return int(token)

    def infinite(self, children: List[object]) -> Optional[int]:
        return None

    def minutes(self, children: List[int]) -> int:
        return children[0] * 60

    def minutes_seconds(self, children: List[int]) -> int:
        minutes, seconds = children
        return minutes * 60 + seconds

    def hours_minutes_seconds(self, children: List[int]) -> int:
        hours, minutes, seconds = children
        return hours * 3600 + minutes * 60 + seconds

    def days_hours(self, children: List[Optional[int]]) -> int:
        days, hours = children
        return days * 86400 + (hours or 0) * 3600

    def days_hours_minutes(self, children: List[int]) -> int:
        days, hours, minutes = children
        return days * 86400 + hours * 3600 + minutes * 60

    def days_hours_minutes_seconds(self, children: List[int]) -> int:
        days, hours, minutes, seconds = children
        return days * 86400 + hours * 3600 + minutes * 60 + seconds


def parse_duration_s(text: str) -> Optional[int]:
    """Seconds in a Slurm duration (``90``, ``1:30``, ``2-12``); None means infinite."""
    seconds: Optional[int] = parse_value("time", text, TimeTransformer)
    if seconds is not None and seconds > MAX_DURATION_S:
        raise ValueSyntaxError(f"duration out of range: {text!r}")
    return seconds


def parse_time_limit_min(text: str) -> int:
    """A ``--time`` limit in whole minutes, seconds rounded up; 0 means no limit."""
    seconds = parse_duration_s(text)
    if seconds is None:
        return 0
    return (seconds + 59) // 60


def _split(seconds: int) -> Tuple[int, int, int, int]:
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return days, hours, minutes, secs


def _days_hms(seconds: int) -> str:
    """``secs2time_str``: ``HH:MM:SS``, with ``D-`` in front from one day on."""
    days, hours, minutes, secs = _split(seconds)
    text = f"{hours:02d}:{minutes:02d}:{secs:02d}"
    return f"{days}-{text}" if days else text


def format_elapsed(seconds: int) -> str:
    """squeue's ``TIME`` form: ``M:SS``, ``H:MM:SS`` or ``D-HH:MM:SS``; ``INVALID`` if out of range.

    squeue prints time limits the same way (``TIME_LIMIT`` of 30 minutes is ``30:00``):
    use ``format_elapsed(limit_min * 60)`` there.
    """
    if seconds < 0 or seconds > YEAR_S:
        return "INVALID"
    days, hours, minutes, secs = _split(seconds)
    if days:
        return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}"
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{minutes}:{secs:02d}"


def format_time_limit(minutes: Optional[int]) -> str:
    """scontrol's ``TimeLimit``: ``HH:MM:SS``, ``D-HH:MM:SS``; 0 ``UNLIMITED``, None ``NOT_SET``."""
    if minutes is None:
        return "NOT_SET"
    if minutes == 0:
        return "UNLIMITED"
    if minutes < 0:
        return "INVALID"
    return _days_hms(minutes * 60)


def format_duration_hms(seconds: int) -> str:
    """sacct's ``Elapsed``/scontrol's ``RunTime``: ``HH:MM:SS`` or ``D-HH:MM:SS``."""
    if seconds < 0:
        return "INVALID"
    return _days_hms(seconds)
