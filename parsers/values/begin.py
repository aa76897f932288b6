"""``--begin``/``--deadline`` times: parsed without a clock, resolved against one.

:func:`parse_begin` is ``_parse_time`` (``src/common/parse_time.c``, 26.05) read character by
character as the C code reads it, because Slurm's first error line names the byte offset where
it gave up (``Invalid time specification (pos=6): 10:00 bogus``), and that offset follows the
C code's own steps (a range error points back at the number, ``now`` at a later position adds
its index twice). The result stays symbolic (:class:`BeginTime`); :func:`resolve_begin`
applies Slurm's rules against a given naive local "now": a clock time alone is today if still
ahead (by minute) else tomorrow; a date alone is at 00:00; a date without a year is the next
occurrence (with ``past=True``, the latest one not after now; a clock time alone is then
today); day numbers past the end of the month roll over as ``mktime`` does (``02/31`` is early
March).

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

from parsers.errors import ValueSyntaxError
from parsers.formats.cnumbers import LONG_MAX, strtol

#: Clock times of the named times, in the order ``_parse_time`` tries them.
NAMED_TIMES = {"midnight": 0, "noon": 12, "elevenses": 11, "fika": 15, "teatime": 16}
#: ``now+N<unit>`` units in the order ``_get_delta`` tries them; no unit means seconds.
UNITS: Tuple[Tuple[str, int], ...] = (
    ("seconds", 1), ("second", 1), ("minutes", 60), ("minute", 60), ("hours", 3600),
    ("hour", 3600), ("days", 86400), ("day", 86400), ("weeks", 604800), ("week", 604800))
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


class _Failed(Exception):
    """The scan reached ``goto prob`` with this position."""

    def __init__(self, pos: int) -> None:
        super().__init__(pos)
        self.pos = pos


class _Scan:
    """The bytes of the text as C's signed ``char``; NUL beyond the end."""

    def __init__(self, text: str) -> None:
        self.data = text.encode("utf-8", "surrogateescape")

    def at(self, i: int) -> int:
        if 0 <= i < len(self.data):
            byte = self.data[i]
            return byte - 256 if byte >= 128 else byte
        return 0

    def digit(self, i: int) -> bool:
        return ord("0") <= self.at(i) <= ord("9")

    def value(self, i: int) -> int:
        """``time_str[i] - '0'`` (any byte, as C computes it)."""
        return self.at(i) - ord("0")

    def starts(self, i: int, word: str) -> bool:
        """``!xstrncasecmp(time_str + i, word, len(word))`` (ASCII case only)."""
        return self.data[i:i + len(word)].lower() == word.encode()

    def blank(self, i: int) -> bool:
        return self.at(i) in (0x20, 0x09)

    def space(self, i: int) -> bool:
        return self.at(i) in (0x20, 0x09, 0x0a, 0x0b, 0x0c, 0x0d)

    def is_char(self, i: int, chars: str) -> bool:
        return self.at(i) in tuple(ord(c) for c in chars)


def _get_delta(s: _Scan, pos: int) -> Tuple[int, int]:
    """``_get_delta``: the count and unit after ``now+``/``now-`` at ``pos``; the new
    position (the last byte read) and the offset in seconds."""
    count, digits = 0, 0
    offset = pos + 1
    while s.at(offset) not in (0, 0x0a):
        if s.space(offset):
            offset += 1
            continue
        unit = next((u for u in UNITS if s.starts(offset, u[0])), None)
        if unit is not None:
            offset += len(unit[0])
            count *= unit[1]
            break
        if s.digit(offset):
            count = count * 10 + s.value(offset)
            digits += 1
            offset += 1
            continue
        raise _Failed(offset - 1)
    if not digits:
        raise _Failed(pos)
    return offset - 1, count


def _get_time(s: _Scan, pos: int) -> Tuple[int, Tuple[int, int, int]]:
    """``_get_time``: ``HH:MM[:SS] [AM|PM]`` at ``pos``; the last byte read and the time."""
    offset = pos
    if not s.digit(offset):
        raise _Failed(offset)
    hour = s.value(offset)
    offset += 1
    if not s.is_char(offset, ":"):
        if not s.digit(offset):
            raise _Failed(offset)
        hour = hour * 10 + s.value(offset)
        offset += 1
    if hour > 23:
        raise _Failed(offset - 2)
    if not s.is_char(offset, ":"):
        raise _Failed(offset)
    offset += 1
    minute, offset = _two_digits(s, offset, 59)
    second = 0
    if s.is_char(offset, ":"):
        second, offset = _two_digits(s, offset + 1, 59)
    while s.space(offset):
        offset += 1
    if s.starts(offset, "pm"):
        hour += 12
        if hour > 23:
            if hour != 24:
                raise _Failed(offset)
            hour = 12
        offset += 2
    elif s.starts(offset, "am"):
        if hour > 11:
            if hour != 12:
                raise _Failed(offset)
            hour = 0
        offset += 2
    return offset - 1, (hour, minute, second)


def _two_digits(s: _Scan, offset: int, highest: int) -> Tuple[int, int]:
    """Two digits that must both be there (minutes, seconds) and not exceed ``highest``."""
    for i in (offset, offset + 1):
        if not s.digit(i):
            raise _Failed(i)
    number = s.value(offset) * 10 + s.value(offset + 1)
    if number > highest:
        raise _Failed(offset)
    return number, offset + 2


def _one_or_two(s: _Scan, offset: int, first_checked: bool, highest: int) -> Tuple[int, int]:
    """A month or day: one byte (a digit unless ``first_checked`` is False, when C takes any
    byte), an optional second digit, then 1..``highest`` (else back to the number)."""
    if first_checked and not s.digit(offset):
        raise _Failed(offset)
    number = s.value(offset)
    offset += 1
    if s.digit(offset):
        number = number * 10 + s.value(offset)
        offset += 1
    if not 1 <= number <= highest:
        raise _Failed(offset - 2)
    return number, offset


def _get_date(s: _Scan, pos: int) -> Tuple[int, Tuple[Optional[int], int, int]]:
    """``_get_date``: ``YYYY-MM-DD`` or ``MM[./]DD[[./]YY]`` at ``pos``; the last byte read
    and (year or None, month, day)."""
    offset = pos
    if len(s.data) >= offset + 7 and s.is_char(offset + 4, "-") and s.is_char(offset + 7, "-"):
        year = 0
        for _ in range(4):
            if not s.digit(offset):
                raise _Failed(offset)
            year = year * 10 + s.value(offset)
            offset += 1
        month, offset = _one_or_two(s, offset + 1, False, 12)
        day, offset = _one_or_two(s, offset + 1, True, 31)
        if year < 1:
            raise ValueSyntaxError("years before 1 are not supported")
        return offset - 1, (year, month, day)
    month, offset = _one_or_two(s, offset, False, 12)
    if s.is_char(offset, "./"):
        offset += 1
    day, offset = _one_or_two(s, offset, True, 31)
    if s.is_char(offset, "./"):
        offset += 1
    short_year = 0
    if s.digit(offset):
        short_year = s.value(offset)
        if not s.digit(offset + 1):
            raise _Failed(offset + 1)
        short_year = short_year * 10 + s.value(offset + 1)
        offset += 2
    return offset - 1, (2000 + short_year if short_year else None, month, day)


def _set_date(spec: BeginTime, year: Optional[int], month: int, day: int) -> BeginTime:
    """A date item: month and day; the year if given, else the one already set."""
    if year is not None or spec.date_kind in ("none", "date"):
        year = year if year is not None else spec.year
        return replace(spec, date_kind="date", year=year, month=month, day=day)
    return replace(spec, month=month, day=day)


def _now(s: _Scan, pos: int, spec: BeginTime) -> Tuple[int, BeginTime]:
    """``now[{+|-}count[unit]]`` at ``pos`` (the C code adds the index it scans from to
    ``pos``, which is ``pos`` itself again: right only for a ``now`` at the start)."""
    offset = 0
    i = pos + 3
    while True:
        if s.is_char(i, "+-"):
            pos, count = _get_delta(s, pos + i)
            offset = -count if s.is_char(i, "-") else count
            break
        if s.blank(i):
            i += 1
            continue
        if s.at(i) in (0, 0x0a):
            pos += i - 1
            break
        raise _Failed(pos + i)
    if abs(offset) > MAX_OFFSET_S:
        raise ValueSyntaxError("offsets beyond 2**31 seconds are not supported")
    return pos, BeginTime(date_kind="now", time_kind="now", now_offset_s=offset)


def _clock(spec: BeginTime, hour: int, minute: int, second: int) -> BeginTime:
    return replace(spec, time_kind="clock", hour=hour, minute=minute, second=second)


def _scan(s: _Scan) -> BeginTime:
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
            raise _Failed(pos)
        elif s.is_char(pos + 1, ":") or s.is_char(pos + 2, ":"):
            pos, (hour, minute, second) = _get_time(s, pos)
            spec = _clock(spec, hour, minute, second)
        else:
            pos, (year, month, day) = _get_date(s, pos)
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
        return _scan(_Scan(text))
    except _Failed as e:
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
