"""Job array index expressions (``--array=0-15:4%2``) and how squeue displays index sets.

Parsing follows ``slurm_parse_array_tok`` (validation happens in slurmctld, which rejects the
whole submission with "Invalid job array specification"); the limit after ``%`` and
``SLURM_ARRAY_TASK_STEP`` follow ``job_mgr.c``; display follows ``xlate_array_task_str``.
MaxArraySize is the caller's business: check :attr:`ArraySpec.max_index` before asking for
:meth:`ArraySpec.indices`, which materialises every index.

Deviations: Slurm reads the numbers with ``strtol`` (so ``+5``, a leading blank and ``0-``
pass, the last one meaning index 0) and ignores anything after ``%``; here the numbers are
plain digits and ``%`` takes a number. ``SLURM_ARRAY_TASK_STEP`` is the number after the first
``:`` of the text; :meth:`ArraySpec.step_value` returns the first step other than 1, which
differs only for specs like ``1-5:1,7-20:3``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, List, Optional, Sequence, Tuple

from parsers.input_errors import ValueSyntaxError
from parsers.values.bitfmt import MAX_INDEX, format_bitfmt
from parsers.values.grammar import parse_value


@dataclass(frozen=True)
class ArrayRange:
    """``first-last:step`` as written (``last`` need not lie on the step); a single index has
    ``first == last`` and step 1."""

    first: int
    last: int
    step: int

    def indices(self) -> range:
        """The indices this item selects."""
        return range(self.first, self.last + 1, self.step)


@dataclass(frozen=True)
class ArraySpec:
    """A parsed ``--array`` value: its items and the ``%`` limit on running tasks (None: none)."""

    ranges: Tuple[ArrayRange, ...]
    max_running: Optional[int]

    def indices(self) -> Tuple[int, ...]:
        """Sorted distinct task indices, as Slurm's task bitmap holds them."""
        return _union(self.ranges)

    def count(self) -> int:
        """Number of tasks (``SLURM_ARRAY_TASK_COUNT``)."""
        return len(self.indices())

    @property
    def min_index(self) -> int:
        """Smallest index (``SLURM_ARRAY_TASK_MIN``), computed without expanding the ranges."""
        return min(r.first for r in self.ranges)

    @property
    def max_index(self) -> int:
        """Largest index (``SLURM_ARRAY_TASK_MAX``), computed without expanding the ranges."""
        return max(r.indices()[-1] for r in self.ranges)

    def step_value(self) -> int:
        """``SLURM_ARRAY_TASK_STEP``: the step written in the expression, 1 if none (``1,3,7``)."""
        return next((r.step for r in self.ranges if r.step != 1), 1)

    def format(self, bitstr_len: int = 0) -> str:
        """The index set as squeue shows it (``0-30:3``, ``1-3,7``, ``5-1024%4``)."""
        return format_indices(self.indices(), self.max_running, bitstr_len)

    def __str__(self) -> str:
        return self.format()


@lru_cache(maxsize=32)
def _union(ranges: Tuple[ArrayRange, ...]) -> Tuple[int, ...]:
    if len(ranges) == 1:
        return tuple(ranges[0].indices())
    return tuple(sorted(set().union(*(r.indices() for r in ranges))))


def _stepped(indices: Sequence[int]) -> Optional[str]:
    """``first-last:step`` when squeue would print the set that way, else None."""
    if len(indices) <= 5 or indices[-1] - indices[0] <= 10 or indices[1] == indices[0] + 1:
        return None
    step = indices[1] - indices[0]
    if any(b - a != step for a, b in zip(indices, indices[1:])):
        return None
    return f"{indices[0]}-{indices[-1]}:{step}"


def format_indices(
    indices: Sequence[int], max_running: Optional[int], bitstr_len: int = 0
) -> str:
    """Display an index set as squeue does (``xlate_array_task_str``).

    A set of more than 5 indices spanning more than 10 with one constant gap prints as
    ``first-last:step``; otherwise as ranges (``1-3,7``). ``bitstr_len`` > 0 truncates the
    ranges the way squeue does with ``SLURM_BITSTR_LEN`` (default 64 there): the text keeps
    ``bitstr_len - 4`` characters and ends in ``...``. ``%K`` is appended for a limit.
    """
    ordered = sorted(set(indices))
    text = _stepped(ordered)
    if text is None:
        text = format_bitfmt(ordered)
        if bitstr_len > 0:
            text = text[: bitstr_len - 1]
            if len(text) > bitstr_len - 3:
                text = text[: max(bitstr_len - 4, 0)] + "..."
    if max_running:
        text += f"%{max_running}"
    return text


class ArrayTransformer:
    """Rules of ``array.lark``: items become ``(ArrayRange, throttle)`` pairs."""

    def INT(self, token: str) -> int:
        value = int(token)
        if value > MAX_INDEX:
            raise ValueSyntaxError("array index out of range")
        return value

    def step(self, children: List[int]) -> int:
        if children[0] <= 0:
            raise ValueSyntaxError("array step must be positive")
        return children[0]

    def range_end(self, children: List[Optional[int]]) -> Tuple[Optional[int], int]:
        last, step = children
        return last, step or 1

    def throttle(self, children: List[int]) -> int:
        return children[0]

    def item(self, children: List[Any]) -> Tuple[ArrayRange, Optional[int]]:
        first, range_end, throttle = children
        last, step = range_end if range_end is not None else (first, 1)
        if last is None or last < first:
            raise ValueSyntaxError("array range runs backwards")
        return ArrayRange(first, last, step), throttle

    def start(self, children: List[Tuple[ArrayRange, Optional[int]]]) -> ArraySpec:
        throttles = [t for _, t in children if t is not None]
        limit = throttles[0] if throttles and throttles[0] > 0 else None
        return ArraySpec(tuple(r for r, _ in children), limit)


def parse_array(text: str) -> ArraySpec:
    """Parse ``--array``: ``0-15``, ``1,3,5``, ``0-15:4%2``, ``[1-5]``; ``%0`` means no limit."""
    spec: ArraySpec = parse_value("array", text, ArrayTransformer)
    return spec
