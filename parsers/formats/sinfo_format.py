"""sinfo's output: partitions (or nodes) grouped by what the format shows.

sinfo makes one line per group of nodes that agree on every per-node value the format prints
(state, CPUs, memory…) within a partition — so the default format splits a partition by node
state, and ``-s`` (which prints no per-node value) gives one line per partition. Lines are
sorted ``#P,-t`` (partition in configuration order, then node state descending: mixed,
allocated, idle, down), or by node name with ``-N``, where each node is a line of its own.
The default formats are Slurm 22.05's; the ``PARTITION`` and ``-N``'s ``NODELIST`` columns of
a default format are as wide as their longest value (at least 9).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from parsers.formats.cells import ctime_line, squeue_cell
from parsers.formats.sinfo_fields import NODE_STATES, NodeInfo, PartitionInfo
from parsers.formats.sinfo_table import (
    ALL_FORMAT,
    SinfoField,
    sinfo_field_by_letter,
    sinfo_field_by_name,
)
from parsers.formats.squeue_format import FormatItem, ParsedFormat, parse_format, parse_long_format
from parsers.values.hostlist import compress_hostlist_sorted
from parsers.values.hostranges import split_host

__all__ = ["format_sinfo", "SinfoRow"]

DEFAULT_FORMAT2 = "partition:9 ,available:.5 ,time:.10 ,nodes:.6 ,statecompact:.6 ,nodelist:0"
LONG_FORMAT2 = ("partition:9 ,available:.5 ,time:.10 ,size:.10 ,root:.4 ,oversubscribe:.8 ,"
                "groups:.10 ,nodes:.6 ,statelong:.11 ,nodelist:0")
SUMMARIZE_FORMAT2 = "partition:9 ,available:.5 ,time:.10 ,nodeaiot:.16 ,nodelist:0"
NODE_FORMAT2 = "nodelist:0 ,nodes:.6 ,partition:.9 ,statecompact:6"
NODE_LONG_FORMAT2 = ("nodelist:0 ,nodes:.6 ,partition:.9 ,statelong:.11 ,cpus:4 ,"
                     "socketcorethread:.8 ,memory:.6 ,disk:.8 ,weight:.6 ,features:.8 ,"
                     "reason:20")
MIN_FIELD_WIDTH = 9


@dataclass(frozen=True)
class SinfoRow:
    """One output line: a partition (its index in configuration order) and its nodes."""

    partition: PartitionInfo
    index: int
    nodes: Tuple[NodeInfo, ...]
    #: The cluster's name when sinfo was asked about named clusters (``-M``), else "".
    cluster: str = ""


def _group(partitions: Sequence[PartitionInfo], fields: Sequence[SinfoField],
           node_oriented: bool, cluster: str = "") -> List[SinfoRow]:
    rows: List[SinfoRow] = []
    for index, partition in enumerate(partitions):
        groups: Dict[Tuple[object, ...], List[NodeInfo]] = {}
        for number, node in enumerate(partition.nodes):
            key: Tuple[object, ...] = tuple(f.match(node) for f in fields if f.match)
            groups.setdefault((number,) if node_oriented else key, []).append(node)
        if not partition.nodes:
            rows.append(SinfoRow(partition, index, (), cluster))
        rows.extend(SinfoRow(partition, index, tuple(nodes), cluster)
                    for nodes in groups.values())
    return rows


def _state_order(row: SinfoRow) -> int:
    return NODE_STATES[row.nodes[0].state].order if row.nodes else -1


def _first_node(row: SinfoRow) -> Tuple[str, int]:
    keys = [(p, -1 if n is None else n) for p, n, _w in (split_host(x.name) for x in row.nodes)]
    return min(keys) if keys else ("", -1)


def sort_rows(rows: List[SinfoRow], node_oriented: bool) -> List[SinfoRow]:
    """``#P,-t`` for partitions, ``N`` for nodes (stable, as sinfo's list sort)."""
    if node_oriented:
        return sorted(rows, key=_first_node)
    rows = sorted(rows, key=_state_order, reverse=True)
    return sorted(rows, key=lambda r: r.index)


def _computed_widths(items: Sequence[FormatItem], rows: Sequence[SinfoRow],
                     node_oriented: bool) -> List[FormatItem]:
    """Default formats size PARTITION (and NODELIST with ``-N``) to the longest value."""
    part = max([MIN_FIELD_WIDTH] + [len(r.partition.name) + int(r.partition.default)
                                    for r in rows])
    nodes = max([MIN_FIELD_WIDTH] + [len(compress_hostlist_sorted([n.name for n in r.nodes]))
                                     for r in rows])
    sized = []
    for item in items:
        name = item.field.name if item.field is not None else ""
        if name == "Partition":
            item = FormatItem(item.field, part, item.right, item.suffix)
        elif name == "NodeList" and node_oriented:
            item = FormatItem(item.field, nodes, item.right, item.suffix)
        sized.append(item)
    return sized


def _line(items: Sequence[FormatItem], row: Optional[SinfoRow]) -> str:
    out = []
    for item in items:
        field = item.field
        if field is not None:
            if row is None:
                out.append(squeue_cell(field.header, item.width, item.right, field.header_cut))
            else:
                out.append(squeue_cell(field.value(row), item.width, item.right))
        out.append(item.suffix)
    return "".join(out)


def default_format(summarize: bool = False, node_oriented: bool = False,
                   long: bool = False) -> str:
    """The ``-O`` list sinfo uses when no format is given."""
    if summarize:
        return SUMMARIZE_FORMAT2
    if node_oriented:
        return NODE_LONG_FORMAT2 if long else NODE_FORMAT2
    return LONG_FORMAT2 if long else DEFAULT_FORMAT2


def parse_sinfo_format(fmt: str, long_format: bool = False) -> ParsedFormat:
    """Read an ``-o`` format (or an ``-O`` list); errors in sinfo's words."""
    if long_format:
        everything = parse_format("%all", sinfo_field_by_letter, "node", ALL_FORMAT)
        return parse_long_format(fmt, sinfo_field_by_name, "job", everything)
    return parse_format(fmt, sinfo_field_by_letter, "node", ALL_FORMAT)


def format_sinfo(
    partitions: Sequence[PartitionInfo],
    fmt: Optional[str] = None,
    long_format: bool = False,
    summarize: bool = False,
    node_oriented: bool = False,
    long: bool = False,
    header: bool = True,
    now: int = 0,
    cluster: str = "",
) -> str:
    """sinfo's listing. ``fmt`` is an ``-o`` format (an ``-O`` list when ``long_format``);
    None selects the default for ``summarize`` (``-s``), ``node_oriented`` (``-N``) and
    ``long`` (``-l``, which also prints the date first); ``cluster`` names the cluster
    asked about with ``-M`` (sinfo's ``%V``)."""
    computed = fmt is None
    parsed = parse_sinfo_format(default_format(summarize, node_oriented, long)
                                if fmt is None else fmt, long_format or computed)
    fields = [item.field for item in parsed.items if item.field is not None]
    rows = sort_rows(_group(partitions, [] if summarize else fields, node_oriented, cluster),
                     node_oriented)
    items = _computed_widths(parsed.items, rows, node_oriented) if computed else parsed.items
    lines: List[str] = []
    if header:
        if long:
            lines.append(ctime_line(now))
        lines.append(_line(items, None))
    lines.extend(_line(items, row) for row in rows)
    return "".join(line + "\n" for line in lines)

