"""``--begin``/``--deadline`` times: parsed without a clock, resolved against one.

:func:`parse_begin` is ``_parse_time`` (``src/common/parse_time.c``, 26.05) read character by
character as the C code reads it (its item readers are :mod:`parsers.values.begin.items`; the
loop over the items and the symbolic result are here), because Slurm's first error line names
the byte offset where it gave up (``Invalid time specification (pos=6): 10:00 bogus``), and
that offset follows the C code's own steps (a range error points back at the number, ``now`` at
a later position adds its index twice). The result stays symbolic (:class:`BeginTime`);
:func:`resolve_begin` applies Slurm's rules against a given naive local "now": a clock time
alone is today if still ahead (by minute) else tomorrow; a date alone is at 00:00; a date
without a year is the next occurrence (with ``past=True``, the latest one not after now; a
clock time alone is then today); day numbers past the end of the month roll over as ``mktime``
does (``02/31`` is early March).

Items set fields in order, later ones overriding: a date sets month and day (and the year if
it names one, else keeps the year of an earlier ``today``/``tomorrow``/``now``), a clock time
sets hour, minute and second, ``now[+-N[unit]]`` sets all of them. Reading stops at a newline.

Where Slurm reads past the end of the string (a ``now`` after the first item moves the
position beyond it) the bytes there are taken as NUL. Not supported: the ``uts<epoch>`` form
(only refused, with Slurm's message when Slurm refuses it too), years before 1, and ``now``
offsets beyond ±2**31 seconds.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, replace
from typing import Optional, Tuple

from parsers.input_errors import ValueSyntaxError
from parsers.formats.cnumbers import LONG_MAX, strtol
from parsers.values.begin.items import CharScan, ScanFailed, get_date, get_delta, get_time

#: Clock times of the named times, in the order ``_parse_time`` tries them.
NAMED_TIMES = {"midnight": 0, "noon": 12, "elevenses": 11, "fika": 15, "teatime": 16}
MAX_OFFSET_S = 2**31 - 1


@dataclass(frozen=True)
class BeginTime:
    """A parsed time, relative to an unknown "now".

    ``date_kind``: ``none``, ``date`` (``year`` None = next occurrence), ``today``,
    ``tomorrow`` or ``now`` (the last three take the date of that day, with ``month``/``day``
    overriding when a later date item named them); ``time_kind``: ``none``, ``clock`` or
    ``now``; the ``now`` kinds take the date/time of now + ``now_offset_s``.
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


class TimeSpecError(ValueSyntaxError):
    """``_parse_time`` refused ``text`` at byte ``pos``; :attr:`slurm_line` is what
    ``parse_time`` then prints on stderr, unprefixed, before the option's own error."""

    def __init__(self, text: str, pos: int) -> None:
        super().__init__(f"invalid time at byte {pos}")
        self.text = text
        self.pos = pos

    @property
    def slurm_line(self) -> str:
        return f"Invalid time specification (pos={self.pos}): {self.text}"


def _set_date(spec: BeginTime, year: Optional[int], month: int, day: int) -> BeginTime:
    """A date item: month and day; the year if given, else the one already set."""
    if year is not None or spec.date_kind in ("none", "date"):
        year = year if year is not None else spec.year
        return replace(spec, date_kind="date", year=year, month=month, day=day)
    return replace(spec, month=month, day=day)


def _now(s: CharScan, pos: int, spec: BeginTime) -> Tuple[int, BeginTime]:
    """``now[{+|-}count[unit]]`` at ``pos`` (the C code adds the index it scans from to
    ``pos``, which is ``pos`` itself again: right only for a ``now`` at the start)."""
    offset = 0
    i = pos + 3
    while True:
        if s.is_char(i, "+-"):
            pos, count = get_delta(s, pos + i)
            offset = -count if s.is_char(i, "-") else count
            break
        if s.blank(i):
            i += 1
            continue
        if s.at(i) in (0, 0x0a):
            pos += i - 1
            break
        raise ScanFailed(pos + i)
    if abs(offset) > MAX_OFFSET_S:
        raise ValueSyntaxError("offsets beyond 2**31 seconds are not supported")
    return pos, BeginTime(date_kind="now", time_kind="now", now_offset_s=offset)


def _clock(spec: BeginTime, hour: int, minute: int, second: int) -> BeginTime:
    return replace(spec, time_kind="clock", hour=hour, minute=minute, second=second)


def _scan(s: CharScan) -> BeginTime:
    """``_parse_time``'s loop over the items."""
    spec = BeginTime()
    pos = 0
    while s.at(pos) not in (0, 0x0a):
        if s.blank(pos) or s.is_char(pos, "-T"):
            pass
        elif s.starts(pos, "today") or s.starts(pos, "tomorrow"):
            kind = "today" if s.starts(pos, "today") else "tomorrow"
            spec = replace(spec, date_kind=kind, year=None, month=None, day=None)
            pos += len(kind) - 1
        elif any(s.starts(pos, name) for name in NAMED_TIMES):
            name = next(name for name in NAMED_TIMES if s.starts(pos, name))
            spec = _clock(spec, NAMED_TIMES[name], 0, 0)
            pos += len(name) - 1
        elif s.starts(pos, "now"):
            pos, spec = _now(s, pos, spec)
        elif not s.digit(pos):
            raise ScanFailed(pos)
        elif s.is_char(pos + 1, ":") or s.is_char(pos + 2, ":"):
            pos, (hour, minute, second) = get_time(s, pos)
            spec = _clock(spec, hour, minute, second)
        else:
            pos, (year, month, day) = get_date(s, pos)
            spec = _set_date(spec, year, month, day)
        pos += 1
    if spec.date_kind == "none" and spec.time_kind == "none":
        raise ValueSyntaxError("no time given")  # parse_time returns 0 and prints nothing
    return spec


def _check_uts(text: str) -> None:
    """``uts<seconds since the epoch>``: Slurm's own refusal, else ours (not supported)."""
    seconds, rest = strtol(text[3:])
    if seconds < 1000000 or seconds == LONG_MAX or rest:
        raise TimeSpecError(text, 0)
    raise ValueSyntaxError("uts<epoch> times are not supported")


def parse_begin(text: str) -> BeginTime:
    """Parse ``--begin``: ``16:00``, ``now+1hour``, ``2010-01-20T12:34:00``, ``teatime``, ...

    Raises :class:`TimeSpecError` where Slurm prints ``Invalid time specification``, a plain
    :class:`ValueSyntaxError` where it prints nothing (no time at all) or we refuse more.
    """
    if text[:3].lower() == "uts":
        _check_uts(text)
    try:
        return _scan(CharScan(text))
    except ScanFailed as e:
        raise TimeSpecError(text, e.pos) from None


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
        year, month, day = on.year, spec.month or on.month, spec.day or on.day
    if year is None:
        if past:
            year = now.year - 1 if month > now.month else now.year
        elif (month, day, hour, minute) > (now.month, now.day, now.hour, now.minute):
            year = now.year
        else:
            year = now.year + 1
    first = datetime.datetime(year, month, 1, hour, minute, second)
    return first + datetime.timedelta(days=day - 1)
