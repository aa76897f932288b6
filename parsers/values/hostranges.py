"""Slurm's ``hostrange_t`` and the operations that print a hostlist compactly.

A port of the parts of ``src/common/hostlist.c`` behind ``hostlist_ranged_string`` and
``hostlist_sort`` on a one-dimensional cluster: how consecutive hosts merge into ranges
(``_width_equiv`` decides when ``n9``/``n10`` or ``n09``/``n10`` may share one), how ranges are
ordered (``strnatcmp`` on prefixes) and how duplicates are split out (``hostlist_coalesce``).
Used by :mod:`parsers.values.hostlist`.
"""

from __future__ import annotations

from functools import cmp_to_key
from typing import List, Optional, Sequence, Tuple

from parsers.input_errors import ValueSyntaxError

ULONG_MAX = 2**64 - 1
_DIGITS = "0123456789"
#: What C's ``isspace`` accepts.
C_SPACE = " \t\n\v\f\r"


def split_host(name: str) -> Tuple[str, Optional[int], int]:
    """``hostname_create``: prefix, numeric suffix (None if none) and its width."""
    stem = name.rstrip(_DIGITS)
    digits = name[len(stem) :]
    if not digits:
        return name, None, 0
    return stem, min(int(digits), ULONG_MAX), len(digits)


class HostRange:
    """``hostrange_t``: ``prefix`` + numbers ``lo..hi`` padded to ``width``, or one bare host."""

    __slots__ = ("prefix", "lo", "hi", "width", "single")

    def __init__(self, prefix: str, lo: int, hi: int, width: int, single: bool) -> None:
        self.prefix, self.lo, self.hi, self.width, self.single = prefix, lo, hi, width, single

    @classmethod
    def of_host(cls, name: str) -> "HostRange":
        prefix, number, width = split_host(name)
        if number is None:
            return cls(name, 0, 0, 0, True)
        return cls(prefix, number, number, width, False)

    def copy(self) -> "HostRange":
        return HostRange(self.prefix, self.lo, self.hi, self.width, self.single)

    def count(self) -> int:
        return 1 if self.single else self.hi - self.lo + 1

    def numstr(self) -> str:
        if self.single:
            return ""
        text = f"{self.lo:0{self.width}d}"
        return text + (f"-{self.hi:0{self.width}d}" if self.lo < self.hi else "")


def _pad_zeros(number: int, width: int) -> int:
    """``_zero_padded``: zeros needed to print ``number`` in ``width`` characters."""
    return max(width - len(str(number)), 0)


def _width_combine(h0: HostRange, h1: HostRange) -> bool:
    """``_width_equiv`` on the two ranges' low ends; adjusts one width when compatible."""
    if h0.width == h1.width:
        return True
    n_pad, n_pad_other = _pad_zeros(h0.lo, h0.width), _pad_zeros(h0.lo, h1.width)
    m_pad, m_pad_other = _pad_zeros(h1.lo, h1.width), _pad_zeros(h1.lo, h0.width)
    if n_pad != n_pad_other and m_pad != m_pad_other:
        return False
    if n_pad != n_pad_other:
        h1.width = h0.width
    else:
        h0.width = h1.width
    return True


def _digit_run(text: str, i: int) -> str:
    j = i
    while j < len(text) and text[j] in _DIGITS:
        j += 1
    return text[i:j]


def _natural_cmp(a: str, b: str) -> int:
    """Natural order of two prefixes, with the semantics of Slurm's ``strnatcmp``."""
    ai = bi = 0
    while True:
        while ai < len(a) and a[ai] in C_SPACE:
            ai += 1
        while bi < len(b) and b[bi] in C_SPACE:
            bi += 1
        ca, cb = a[ai : ai + 1], b[bi : bi + 1]
        if ca and cb and ca in _DIGITS and cb in _DIGITS:
            run_a, run_b = _digit_run(a, ai), _digit_run(b, bi)
            if ca == "0" or cb == "0":  # fractional part: compare left-aligned
                for da, db in zip(run_a, run_b):
                    if da != db:
                        return -1 if da < db else 1
                if len(run_a) != len(run_b):
                    return -1 if len(run_a) < len(run_b) else 1
            elif len(run_a) != len(run_b):  # longest run of digits wins
                return -1 if len(run_a) < len(run_b) else 1
            elif run_a != run_b:
                return -1 if run_a < run_b else 1
        if not ca and not cb:
            return 0
        if ca != cb:
            return -1 if ca < cb else 1
        ai, bi = ai + 1, bi + 1


def _prefix_cmp(h1: HostRange, h2: Optional[HostRange]) -> int:
    if h2 is None:
        return -1
    return _natural_cmp(h1.prefix, h2.prefix) or (int(h2.single) - int(h1.single))


def _within(h1: HostRange, h2: Optional[HostRange]) -> bool:
    """Same bracket: equal prefixes and neither a bare host (``hostrange_within_range``)."""
    return h2 is not None and _prefix_cmp(h1, h2) == 0 and not (h1.single or h2.single)


def _follows(prev: HostRange, nxt: HostRange) -> bool:
    """``prev`` ends right before ``nxt`` starts, with compatible prefix and width."""
    return (
        prev.hi == (nxt.lo - 1) % 2**64
        and _prefix_cmp(prev, nxt) == 0
        and _width_combine(prev, nxt)
    )


def _push(ranges: List[HostRange], hr: HostRange) -> None:
    """``hostlist_push_range``: extend the last range when ``hr`` continues it."""
    if ranges and _follows(ranges[-1], hr):
        ranges[-1].hi = hr.hi
    else:
        ranges.append(hr.copy())


def _range_cmp(h1: HostRange, h2: HostRange) -> int:
    """``hostrange_cmp`` (including C's truncation of the unsigned difference to ``int``)."""
    result = _prefix_cmp(h1, h2)
    if result:
        return result
    if _width_combine(h1, h2):
        diff = (h1.lo - h2.lo) % 2**32
        return diff - 2**32 if diff >= 2**31 else diff
    return h1.width - h2.width


def _collapse(ranges: List[HostRange]) -> None:
    i = len(ranges) - 1
    while i > 0:
        if _follows(ranges[i - 1], ranges[i]):
            ranges[i - 1].hi = ranges[i].hi
            del ranges[i]
        i -= 1


def _intersect(h1: HostRange, h2: HostRange) -> Optional[HostRange]:
    if h1.single or h2.single:
        return None
    if h1.hi > h2.lo and _prefix_cmp(h1, h2) == 0 and _width_combine(h1, h2):
        return HostRange(h1.prefix, h2.lo, min(h1.hi, h2.hi), h1.width, False)
    return None


def _coalesce(ranges: List[HostRange]) -> None:
    """``hostlist_coalesce``: split overlapping ranges so duplicates sit side by side."""
    i = len(ranges) - 1
    while i > 0:
        new = _intersect(ranges[i - 1], ranges[i])
        if new is not None:
            prev, nxt, j = ranges[i - 1], ranges[i], i
            if new.hi < prev.hi:
                nxt.hi = prev.hi
            prev.hi, nxt.lo = new.lo, new.hi
            if prev.hi < prev.lo or prev.hi == ULONG_MAX:
                del ranges[i]
            for n in range(new.lo, new.hi + 1):
                if n > prev.hi:
                    ranges.insert(j, HostRange(new.prefix, n, n, new.width, False))
                    j += 1
                if n < nxt.lo:
                    ranges.insert(j, HostRange(new.prefix, n, n, new.width, False))
                    j += 1
            i = len(ranges)
        i -= 1
    _collapse(ranges)


def sort_ranges(ranges: List[HostRange]) -> None:
    """``hostlist_sort``: natural order of prefixes, then numbers; duplicates split apart."""
    ranges.sort(key=cmp_to_key(_range_cmp))
    _coalesce(ranges)


def ranges_of(hosts: Sequence[str]) -> List[HostRange]:
    ranges: List[HostRange] = []
    for name in hosts:
        if not name or any(c in name for c in "[], \t\n"):
            raise ValueSyntaxError(f"not a host name: {name!r}")
        _push(ranges, HostRange.of_host(name))
    return ranges


def ranged_string(ranges: List[HostRange]) -> str:
    """``hostlist_ranged_string``: ``prefix[a-b,c]`` groups, bare hosts without brackets."""
    groups: List[str] = []
    i = 0
    while i < len(ranges):
        first = ranges[i]
        following = ranges[i + 1] if i + 1 < len(ranges) else None
        bracket = first.count() > 1 or _within(first, following)
        numbers = [first.numstr()]
        i += 1
        while i < len(ranges) and _within(ranges[i], ranges[i - 1]):
            numbers.append(ranges[i].numstr())
            i += 1
        body = ",".join(numbers)
        groups.append(f"{first.prefix}[{body}]" if bracket else first.prefix + body)
    return ",".join(groups)


