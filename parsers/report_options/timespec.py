"""Absolute times as sacct's ``-S``/``-E`` read them: ``parse_time`` of ``parse_time.c``.

Accepted: ``HH:MM[:SS][AM|PM]``, ``MMDD[YY]``, ``MM.DD[.YY]``, ``MM/DD[/YY]`` (a date may be
followed by ``-HH:MM[:SS]``), ``YYYY-MM-DD[THH:MM[:SS]]``, ``today``, ``tomorrow``,
``midnight``, ``noon``, ``elevenses`` (11:00), ``fika`` (15:00), ``teatime`` (16:00),
``now[{+|-}count[seconds|minutes|hours|days|weeks]]`` and ``uts<epoch>``. sacct reads them
"in the past": a time without a date is today, a date without a year is this year unless its
month lies ahead (then last year). Nothing at all (``""``, ``T``) means the epoch.

The port keeps Slurm's error positions (``Invalid time specification (pos=3): 25:00``) and
quirks (a two-digit year ``00`` is ignored). ``now`` is a parameter; local time is the
process's time zone, as for Slurm.
"""

from __future__ import annotations

import time
from typing import Optional, Tuple

from parsers.errors import ValueSyntaxError, fatal
from parsers.formats.messages import BareError
from parsers.values.time import parse_duration_s

#: Slurm's ``INFINITE`` (``-1``, ``UNLIMITED``), as time limit options store it.
INFINITE = 0xFFFFFFFF
UNITS = (("seconds", 1), ("second", 1), ("minutes", 60), ("minute", 60), ("hours", 3600),
         ("hour", 3600), ("days", 86400), ("day", 86400), ("weeks", 604800), ("week", 604800))
#: Named times of day: (hour, minute).
NAMED_TIMES = {"midnight": (0, 0), "noon": (12, 0), "elevenses": (11, 0), "fika": (15, 0),
               "teatime": (16, 0)}


class _Problem(Exception):
    """A parse failure at a position (Slurm's ``goto prob``)."""

    def __init__(self, pos: int) -> None:
        super().__init__(pos)
        self.pos = pos


def _at(text: str, i: int) -> str:
    """The character at ``i``, or NUL past the end (C string semantics)."""
    return text[i] if 0 <= i < len(text) else "\0"


def _digit(text: str, i: int) -> bool:
    return "0" <= _at(text, i) <= "9"


def _get_delta(text: str, pos: int) -> Tuple[int, int]:
    """``_get_delta``: the count after ``now+``/``now-`` in seconds, and the new position."""
    count, digits, offset = 0, 0, pos + 1
    while _at(text, offset) not in ("\0", "\n"):
        if _at(text, offset).isspace():
            offset += 1
            continue
        unit = next(((n, m) for n, m in UNITS if text[offset:offset + len(n)].lower() == n),
                    None)
        if unit is not None:
            offset += len(unit[0])
            count *= unit[1]
            break
        if _digit(text, offset):
            count = count * 10 + int(text[offset])
            digits += 1
            offset += 1
            continue
        raise _Problem(offset - 1)
    if not digits:
        raise _Problem(pos)
    return count, offset - 1


def _sixty(text: str, offset: int) -> Tuple[int, int]:
    """Exactly two digits, 00-59 (minutes or seconds), and the offset after them."""
    if not (_digit(text, offset) and _digit(text, offset + 1)):
        raise _Problem(offset if not _digit(text, offset) else offset + 1)
    value = int(text[offset:offset + 2])
    if value > 59:
        raise _Problem(offset)
    return value, offset + 2


def _get_time(text: str, pos: int) -> Tuple[int, int, int, int]:
    """``_get_time``: ``HH:MM[:SS] [AM|PM]`` → hour, minute, second, new position."""
    offset = pos
    if not _digit(text, offset):
        raise _Problem(offset)
    hour = int(text[offset])
    offset += 1
    if _at(text, offset) != ":":
        if not _digit(text, offset):
            raise _Problem(offset)
        hour = hour * 10 + int(text[offset])
        offset += 1
    if hour > 23:
        raise _Problem(offset - 2)
    if _at(text, offset) != ":":
        raise _Problem(offset)
    minute, offset = _sixty(text, offset + 1)
    second = 0
    if _at(text, offset) == ":":
        second, offset = _sixty(text, offset + 1)
    while _at(text, offset).isspace() and _at(text, offset) != "\0":
        offset += 1
    suffix = text[offset:offset + 2].lower()
    if suffix == "pm":
        hour += 12
        if hour > 23:
            if hour != 24:
                raise _Problem(offset)
            hour = 12
        offset += 2
    elif suffix == "am":
        if hour > 11:
            if hour != 12:
                raise _Problem(offset)
            hour = 0
        offset += 2
    return hour, minute, second, offset - 1


def _two(text: str, offset: int) -> Tuple[int, int]:
    """One digit, and a second one if present (month or day)."""
    value = ord(_at(text, offset)) - ord("0")
    offset += 1
    if _digit(text, offset):
        value = value * 10 + int(text[offset])
        offset += 1
    return value, offset


def _month_day(text: str, offset: int, separators: str) -> Tuple[int, int, int]:
    """Month (1-12), one optional separator, day (1-31): values and the offset after."""
    month, offset = _two(text, offset)
    if not 1 <= month <= 12:
        raise _Problem(offset - 2)
    if _at(text, offset) in separators:
        offset += 1
    if not _digit(text, offset):
        raise _Problem(offset)
    day, offset = _two(text, offset)
    if not 1 <= day <= 31:
        raise _Problem(offset - 2)
    return month, day, offset


def _get_date(text: str, pos: int) -> Tuple[int, int, Optional[int], int]:
    """``_get_date``: month (1-12), day, year (None: not given), new position."""
    offset = pos
    if len(text) >= offset + 7 and _at(text, offset + 4) == "-" and _at(text, offset + 7) == "-":
        for i in range(4):
            if not _digit(text, offset + i):
                raise _Problem(offset + i)
        month, day, offset = _month_day(text, offset + 5, "-")
        return month, day, int(text[pos:pos + 4]), offset - 1
    month, day, offset = _month_day(text, offset, "./")
    if _at(text, offset) in "./":
        offset += 1
    short_year = 0
    if _digit(text, offset):
        if not _digit(text, offset + 1):
            raise _Problem(offset + 1)
        short_year = int(text[offset:offset + 2])
        offset += 2
    return month, day, (2000 + short_year if short_year else None), offset - 1


def _localtime(epoch: int) -> time.struct_time:
    return time.localtime(epoch)


def _parse(text: str, now: int) -> int:
    """``_parse_time`` with ``past`` set; raises :class:`_Problem`."""
    if text[:3].lower() == "uts":
        digits = text[3:]
        if not (digits.isascii() and digits.isdigit()) or int(digits) < 1000000:
            raise _Problem(0)
        return int(digits)
    today = _localtime(now)
    hour = minute = month = day = -1
    second = 0
    year: Optional[int] = None
    pos = 0
    while _at(text, pos) not in ("\0", "\n"):
        char = text[pos]
        rest = text[pos:].lower()
        if char in " \t-T":
            pos += 1
            continue
        if rest.startswith("today"):
            month, day, year = today.tm_mon, today.tm_mday, today.tm_year
            pos += 5
            continue
        if rest.startswith("tomorrow"):
            later = _localtime(now + 86400)
            month, day, year = later.tm_mon, later.tm_mday, later.tm_year
            pos += 8
            continue
        named = next((n for n in NAMED_TIMES if rest.startswith(n)), None)
        if named is not None:
            (hour, minute), second = NAMED_TIMES[named], 0
            pos += len(named)
            continue
        if rest.startswith("now"):
            delta, i = 0, pos + 3
            while True:
                sign = _at(text, i)
                if sign in "+-" and sign != "\0":
                    delta, pos = _get_delta(text, pos + i)
                    delta = -delta if sign == "-" else delta
                    break
                if sign in " \t":
                    i += 1
                    continue
                if sign in ("\0", "\n"):
                    pos += i - 1
                    break
                raise _Problem(pos + i)
            later = _localtime(now + delta)
            month, day, year = later.tm_mon, later.tm_mday, later.tm_year
            hour, minute, second = later.tm_hour, later.tm_min, later.tm_sec
            pos += 1
            continue
        if not _digit(text, pos):
            raise _Problem(pos)
        if _at(text, pos + 1) == ":" or _at(text, pos + 2) == ":":
            hour, minute, second, pos = _get_time(text, pos)
        else:
            month, day, year, pos = _get_date(text, pos)
        pos += 1
    if hour == -1 and month == -1:
        return 0
    if hour == -1:
        hour, minute = 0, 0
    elif month == -1:
        month, day, year = today.tm_mon, today.tm_mday, today.tm_year
    if year is None:
        year = today.tm_year - 1 if month > today.tm_mon else today.tm_year
    return int(time.mktime((year, month, day, hour, minute, second, 0, 0, -1)))


def parse_time(text: str, now: int) -> int:
    """Epoch seconds of a sacct ``-S``/``-E`` value (0 when it names no time at all).

    Raises :class:`~parsers.formats.messages.BareError`
    ``Invalid time specification (pos=N): <text>`` (sacct exits 1).
    """
    try:
        return _parse(text, now)
    except _Problem as e:
        raise BareError(f"Invalid time specification (pos={e.pos}): {text}") from None


def limit_seconds(text: str) -> int:
    """A time-limit option value (``--running-over``, ``--timelimit-min``) in seconds, or
    :data:`INFINITE`; zero or malformed is ``fatal: Invalid time limit specification``."""
    try:
        seconds = parse_duration_s(text)
    except ValueSyntaxError:
        seconds = 0
    if seconds is not None and seconds <= 0:
        raise fatal("Invalid time limit specification")
    return INFINITE if seconds is None else seconds
