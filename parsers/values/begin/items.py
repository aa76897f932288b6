"""The item readers of Slurm's ``_parse_time`` (``src/common/parse_time.c``, 26.05), byte by
byte as the C code reads them.

:mod:`parsers.values.begin` runs ``_parse_time``'s loop over the items of a ``--begin`` or
``--deadline`` time and keeps the result symbolic; the readers here take one item each (a
``now`` offset, a clock time, a date) from the text as C's signed ``char`` bytes and return the
position of the last byte they read, because Slurm's error line names the byte offset where it
gave up and that offset follows the C code's own steps. A reader that reaches the C code's
``goto prob`` raises :class:`ScanFailed` with that position.
"""

from __future__ import annotations

from typing import Optional, Tuple

from parsers.input_errors import ValueSyntaxError

#: ``now+N<unit>`` units in the order ``_get_delta`` tries them; no unit means seconds.
UNITS: Tuple[Tuple[str, int], ...] = (
    ("seconds", 1), ("second", 1), ("minutes", 60), ("minute", 60), ("hours", 3600),
    ("hour", 3600), ("days", 86400), ("day", 86400), ("weeks", 604800), ("week", 604800))


class ScanFailed(Exception):
    """The scan reached ``goto prob`` with this position."""

    def __init__(self, pos: int) -> None:
        super().__init__(pos)
        self.pos = pos


class CharScan:
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


def get_delta(s: CharScan, pos: int) -> Tuple[int, int]:
    """``get_delta``: the count and unit after ``now+``/``now-`` at ``pos``; the new
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
        raise ScanFailed(offset - 1)
    if not digits:
        raise ScanFailed(pos)
    return offset - 1, count


def get_time(s: CharScan, pos: int) -> Tuple[int, Tuple[int, int, int]]:
    """``get_time``: ``HH:MM[:SS] [AM|PM]`` at ``pos``; the last byte read and the time."""
    offset = pos
    if not s.digit(offset):
        raise ScanFailed(offset)
    hour = s.value(offset)
    offset += 1
    if not s.is_char(offset, ":"):
        if not s.digit(offset):
            raise ScanFailed(offset)
        hour = hour * 10 + s.value(offset)
        offset += 1
    if hour > 23:
        raise ScanFailed(offset - 2)
    if not s.is_char(offset, ":"):
        raise ScanFailed(offset)
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
                raise ScanFailed(offset)
            hour = 12
        offset += 2
    elif s.starts(offset, "am"):
        if hour > 11:
            if hour != 12:
                raise ScanFailed(offset)
            hour = 0
        offset += 2
    return offset - 1, (hour, minute, second)


def _two_digits(s: CharScan, offset: int, highest: int) -> Tuple[int, int]:
    """Two digits that must both be there (minutes, seconds) and not exceed ``highest``."""
    for i in (offset, offset + 1):
        if not s.digit(i):
            raise ScanFailed(i)
    number = s.value(offset) * 10 + s.value(offset + 1)
    if number > highest:
        raise ScanFailed(offset)
    return number, offset + 2


def _one_or_two(s: CharScan, offset: int, first_checked: bool, highest: int) -> Tuple[int, int]:
    """A month or day: one byte (a digit unless ``first_checked`` is False, when C takes any
    byte), an optional second digit, then 1..``highest`` (else back to the number)."""
    if first_checked and not s.digit(offset):
        raise ScanFailed(offset)
    number = s.value(offset)
    offset += 1
    if s.digit(offset):
        number = number * 10 + s.value(offset)
        offset += 1
    if not 1 <= number <= highest:
        raise ScanFailed(offset - 2)
    return number, offset


def get_date(s: CharScan, pos: int) -> Tuple[int, Tuple[Optional[int], int, int]]:
    """``get_date``: ``YYYY-MM-DD`` or ``MM[./]DD[[./]YY]`` at ``pos``; the last byte read
    and (year or None, month, day)."""
    offset = pos
    if len(s.data) >= offset + 7 and s.is_char(offset + 4, "-") and s.is_char(offset + 7, "-"):
        year = 0
        for _ in range(4):
            if not s.digit(offset):
                raise ScanFailed(offset)
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
            raise ScanFailed(offset + 1)
        short_year = short_year * 10 + s.value(offset + 1)
        offset += 2
    return offset - 1, (2000 + short_year if short_year else None, month, day)
