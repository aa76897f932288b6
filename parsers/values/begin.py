"""``--begin`` times (also sacct ``-S/-E``): parsed without a clock, resolved against one.

:func:`parse_begin` follows ``_parse_time`` (``src/common/parse_time.c``) and keeps the result
symbolic (:class:`BeginTime`); :func:`resolve_begin` applies Slurm's rules against a given
naive local "now": a clock time alone is today if still ahead (by minute) else tomorrow; a date
alone is at 00:00; a date without a year is the next occurrence (with ``past=True``, as sacct
asks, the latest one not after now; a clock time alone is then today); day numbers past the
end of the month roll over as ``mktime`` does (``02/31`` is early March).

Not supported: the ``uts<epoch>`` form, and text after a newline (Slurm stops reading there).
Deliberate limit: ``now`` offsets beyond ±2**31 seconds are refused.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, replace
from typing import List, Optional, Tuple

from parsers.errors import ValueSyntaxError
from parsers.values.grammar import parse_value

#: Clock times of the named times.
NAMED_TIMES = {"midnight": 0, "noon": 12, "elevenses": 11, "fika": 15, "teatime": 16}
#: Seconds per ``now+N<unit>`` unit (singular or plural); no unit means seconds.
SECONDS_PER_UNIT = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800}
MAX_OFFSET_S = 2**31 - 1


@dataclass(frozen=True)
class BeginTime:
    """A parsed time, relative to an unknown "now".

    ``date_kind``: ``none``, ``date`` (``year`` None = next occurrence), ``today``,
    ``tomorrow`` or ``now``; ``time_kind``: ``none``, ``clock`` or ``now``; the ``now`` kinds
    take the date/time of now + ``now_offset_s``.
    """

    date_kind: str = "none"
    year: Optional[int] = None
    month: Optional[int] = None
    day: Optional[int] = None
    time_kind: str = "none"
    hour: Optional[int] = None
    minute: Optional[int] = None
    second: Optional[int] = None
    now_offset_s: int = 0


_NOW = re.compile(r"now\s*(?:([+-])([\s0-9]*)([a-z]*))?\Z", re.IGNORECASE)
Item = Tuple[str, BeginTime]  # ("date" | "time" | "both" | "now-last", fields to set)


def _date(year: Optional[int], month: int, day: int) -> BeginTime:
    if not 1 <= month <= 12 or not 1 <= day <= 31 or (year is not None and year < 1):
        raise ValueSyntaxError("invalid date")
    return BeginTime(date_kind="date", year=year, month=month, day=day)


def _clock(hour: int, minute: int, second: int) -> BeginTime:
    return BeginTime(time_kind="clock", hour=hour, minute=minute, second=second)


class BeginTransformer:
    """Rules of ``begin.lark``: each item says which half (date, time) it sets."""

    def ISO_DATE(self, token: str) -> Item:
        year, month, day = (int(p) for p in token.split("-"))
        return "date", _date(year, month, day)

    def MDY_DATE(self, token: str) -> Item:
        fields = re.match(r"([0-9]{1,2})[./]?([0-9]{1,2})[./]?([0-9]{2})?", token)
        assert fields is not None  # the terminal guarantees the shape
        month, day, year = fields.groups()
        return "date", _date(int(year) + 2000 if year else None, int(month), int(day))

    def CLOCK(self, token: str) -> Item:
        text = token.lower()
        half = text[-2:] if text.endswith(("am", "pm")) else ""
        parts = [int(p) for p in text.rstrip("apm \t\n\v\f\r").split(":")]
        hour, minute, second = (parts + [0])[:3]
        if hour > 23 or minute > 59 or second > 59:
            raise ValueSyntaxError("invalid clock time")
        if half == "pm":  # 12pm is noon; 13pm and later are errors
            hour = 12 if hour == 12 else hour + 12
        elif half == "am" and hour >= 12:  # 12am is midnight
            hour = 0 if hour == 12 else 24
        if hour > 23:
            raise ValueSyntaxError("invalid clock time")
        return "time", _clock(hour, minute, second)

    def NAMED_TIME(self, token: str) -> Item:
        return "time", _clock(NAMED_TIMES[token.lower()], 0, 0)

    def TODAY(self, token: str) -> Item:
        return "date", BeginTime(date_kind="today")

    def TOMORROW(self, token: str) -> Item:
        return "date", BeginTime(date_kind="tomorrow")

    def NOW(self, token: str) -> Item:
        match = _NOW.match(token)
        assert match is not None  # the terminal guarantees the shape
        sign, digits, unit = match.groups()
        offset = 0
        if sign is not None:
            digits = "".join(digits.split())
            if not digits:
                raise ValueSyntaxError("no count after now+/-")
            offset = int(digits) * SECONDS_PER_UNIT[unit.lower().rstrip("s") or "second"]
            offset = -offset if sign == "-" else offset
        if abs(offset) > MAX_OFFSET_S:
            raise ValueSyntaxError("offset out of range")
        now = BeginTime(date_kind="now", time_kind="now", now_offset_s=offset)
        return ("both" if unit else "now-last"), now

    def start(self, children: List[Item]) -> BeginTime:
        result = BeginTime()
        for i, (sets, item) in enumerate(children):
            if sets == "now-last" and i != len(children) - 1:
                raise ValueSyntaxError("nothing may follow now without a unit")
            if sets in ("date", "both", "now-last"):
                result = replace(result, date_kind=item.date_kind, year=item.year,
                                 month=item.month, day=item.day)
            if sets in ("time", "both", "now-last"):
                result = replace(result, time_kind=item.time_kind, hour=item.hour,
                                 minute=item.minute, second=item.second)
            if item.date_kind == "now":
                result = replace(result, now_offset_s=item.now_offset_s)
        if result.date_kind == "none" and result.time_kind == "none":
            raise ValueSyntaxError("no time given")
        return result


def parse_begin(text: str) -> BeginTime:
    """Parse ``--begin``: ``16:00``, ``now+1hour``, ``2010-01-20T12:34:00``, ``teatime``, ..."""
    spec: BeginTime = parse_value("begin", text, BeginTransformer)
    return spec


def resolve_begin(spec: BeginTime, now: datetime.datetime, past: bool = False) -> datetime.datetime:
    """The moment ``spec`` names, as naive local time, given the caller's ``now``."""
    later = now + datetime.timedelta(seconds=spec.now_offset_s)
    if spec.time_kind == "clock":
        hour, minute, second = spec.hour or 0, spec.minute or 0, spec.second or 0
    elif spec.time_kind == "now":
        hour, minute, second = later.hour, later.minute, later.second
    else:
        hour = minute = second = 0
    year: Optional[int]
    if spec.date_kind == "date":
        year, month, day = spec.year, spec.month or 1, spec.day or 1
    elif spec.date_kind == "none":
        ahead = past or (hour, minute) > (now.hour, now.minute)
        on = now if ahead else now + datetime.timedelta(days=1)
        year, month, day = on.year, on.month, on.day
    else:
        on = {"today": now, "tomorrow": now + datetime.timedelta(days=1), "now": later}[
            spec.date_kind
        ]
        year, month, day = on.year, on.month, on.day
    if year is None:
        if past:
            year = now.year - 1 if month > now.month else now.year
        elif (month, day, hour, minute) > (now.month, now.day, now.hour, now.minute):
            year = now.year
        else:
            year = now.year + 1
    first = datetime.datetime(year, month, 1, hour, minute, second)
    return first + datetime.timedelta(days=day - 1)
