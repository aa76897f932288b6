"""Slurm's bitmap range strings: ``0-30,45,50-60`` and ``1-17:4``.

Reading follows ``bitfmt2int`` (used for ``--nodes`` size lists and for ``job_[...]`` in
``--dependency``); writing follows ``bit_fmt`` (squeue's array task ranges).

Slurm quirk kept: in the stepped form the last value is *exclusive* — ``1-13:4`` is
``1,5,9``. Deviation: malformed lists that ``bitfmt2int`` silently misreads (``1,,5`` adds 0,
``1-3-5`` means ``3-5``, a leading comma yields nothing) are rejected here.
"""

from __future__ import annotations

from typing import Iterable, List, Optional, Tuple

from parsers.input_errors import ValueSyntaxError
from parsers.values.grammar import parse_value

#: Largest index any caller accepts (Slurm stores these in signed 32-bit integers).
MAX_INDEX = 2**31 - 1
#: Default bound for :func:`parse_bitfmt`: Slurm's largest MaxArraySize is 4000001.
DEFAULT_MAX_INDEX = 4000000


class BitfmtTransformer:
    """Rules of ``bitfmt.lark``: the alternatives return the set of indices."""

    def INT(self, token: str) -> int:
        value = int(token)
        if value > MAX_INDEX:
            raise ValueSyntaxError("index out of range")
        return value

    def stepped(self, children: List[int]) -> Tuple[range, ...]:
        first, last, step = children
        if last < first or step <= 0:
            raise ValueSyntaxError("invalid stepped range")
        return (range(first, last, step),)

    def item(self, children: List[Optional[int]]) -> range:
        first, last = children
        last = first if last is None else last
        if last < first:
            raise ValueSyntaxError("range runs backwards")
        return range(first, last + 1)

    def listed(self, children: List[range]) -> Tuple[range, ...]:
        return tuple(children)


def parse_bitfmt(text: str, max_index: int = DEFAULT_MAX_INDEX) -> Tuple[int, ...]:
    """Sorted distinct indices of a range string; raises if it holds none or one > ``max_index``."""
    ranges: Tuple[range, ...] = parse_value("bitfmt", text, BitfmtTransformer)
    if any(r[-1] > max_index for r in ranges if r):
        raise ValueSyntaxError(f"index above {max_index}")
    indices = sorted(set().union(*ranges))
    if not indices:
        raise ValueSyntaxError("empty range")
    return tuple(indices)


def format_bitfmt(indices: Iterable[int]) -> str:
    """``bit_fmt``: ascending runs of consecutive indices as ``a-b``, single ones bare."""
    parts: List[str] = []
    ordered = sorted(set(indices))
    start = 0
    while start < len(ordered):
        end = start
        while end + 1 < len(ordered) and ordered[end + 1] == ordered[end] + 1:
            end += 1
        first, last = ordered[start], ordered[end]
        parts.append(str(first) if first == last else f"{first}-{last}")
        start = end + 1
    return ",".join(parts)
