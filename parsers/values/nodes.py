"""``-N/--nodes`` values: ``4``, ``2-8``, ``1k``, and size lists ``1,5,9`` / ``1-15:4``.

Follows ``verify_node_count``/``str_to_nodes`` (``src/common/proc_args.c``). A value with
``,`` or ``:`` is a size list (Slurm 24.11+): the job may get any of the listed counts; its
``min``/``max`` are the first and last, ``allowed_counts`` holds them all; numbers there take no
suffix and must be below 16384. ``0`` parses (min 0): refusing it ("Node count specification
invalid") is the caller's business. ``min-0`` means "at least min" (Slurm keeps max 0 = no
maximum); any other max below min is an error, as in Slurm.

Deviations: Slurm's ``strtol`` also takes leading blanks and a sign; counts that overflow a C
``int`` are errors here (Slurm turns an overflowing minimum into 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

from parsers.input_errors import ValueSyntaxError
from parsers.values.bitfmt import parse_bitfmt
from parsers.values.grammar import parse_value

#: Size lists are bitmaps of this many bits (``MAX_JOB_SIZE_BITMAP``).
MAX_JOB_SIZE_BITMAP = 16384
MAX_NODES = 2**31 - 1


@dataclass(frozen=True)
class NodeRange:
    """Requested node counts; ``max_nodes`` 0 (only from ``N-0``) means no maximum."""

    min_nodes: int
    max_nodes: int
    allowed_counts: Tuple[int, ...] = ()


class NodesTransformer:
    """Rules of ``nodes.lark``."""

    def count(self, children: List[Any]) -> int:
        digits, kilo, mega = children
        nodes = int(digits) * (1024 if kilo else 1) * (1048576 if mega else 1)
        if nodes > MAX_NODES:
            raise ValueSyntaxError("node count out of range")
        return nodes

    def single(self, children: List[int]) -> NodeRange:
        return NodeRange(children[0], children[0])

    def span(self, children: List[Optional[int]]) -> NodeRange:
        min_nodes, max_nodes = children
        return NodeRange(1 if min_nodes is None else min_nodes, int(max_nodes or 0))


def parse_node_range(text: str) -> NodeRange:
    """Parse ``--nodes``: ``N``, ``min-max``, ``2k``, ``1,5,9`` or ``1-15:4``."""
    if "," in text or ":" in text:
        counts = parse_bitfmt(text, MAX_JOB_SIZE_BITMAP - 1)
        return NodeRange(counts[0], counts[-1], counts)
    nodes: NodeRange = parse_value("nodes", text, NodesTransformer)
    if nodes.max_nodes and nodes.max_nodes < nodes.min_nodes:
        raise ValueSyntaxError(
            f"Maximum node count {nodes.max_nodes} is less than minimum node count"
            f" {nodes.min_nodes}"
        )
    return nodes
