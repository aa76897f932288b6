"""sinfo's fields, one table: ``-O`` name, ``-o`` letter, title, value, and the node value a
field splits a partition's lines by.

Fields follow ``_parse_format``/``_parse_long_format`` in ``src/sinfo/opts.c`` and the printers
in ``src/sinfo/print.c`` of Slurm 22.05: every letter and name it knows is here, printed as it
prints it (checked letter by letter against the real sinfo: ``tests/conformance``); any other
is refused in its words (:func:`parsers.formats.sinfo_format.parse_sinfo_format`). A field's
``match`` tells which node value splits a partition into several lines when the field is
printed (sinfo's ``match_flags``); aggregate fields (counts, node lists) have none. Values the
nodes do not report (a Kubernetes node's load, a daemon's port) print ``N/A`` as sinfo prints
an unknown one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Dict, Optional, Sequence, Tuple

from parsers.formats.cells import convert_num_unit, format_timestamp
from parsers.formats.sinfo_fields import NodeInfo, cpus_aiot, node_state
from parsers.values.hostlist import compress_hostlist_sorted, compress_hostlist_unique
from parsers.values.time import format_elapsed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from parsers.formats.sinfo_format import SinfoRow

RowGetter = Callable[["SinfoRow"], Optional[str]]
Match = Optional[Callable[[NodeInfo], object]]
#: What sinfo prints for a value it does not have.
UNKNOWN = "N/A"


@dataclass(frozen=True)
class SinfoField:
    """One field: ``-O`` name, ``-o`` letter, title, value, and the node value it splits on."""

    name: str
    letter: str
    header: str
    value: RowGetter
    match: Match = None
    header_cut: bool = True


def _min_max(values: Sequence[int], suffix: bool = True) -> str:
    """``_build_min_max_32_string``: ``4``, or ``4+`` when the nodes differ."""
    low, high = min(values), max(values)
    text = convert_num_unit(low, "") if suffix else str(low)
    return text if low == high else f"{text}+"


def _count(row: "SinfoRow", column: str) -> int:
    return sum(1 for n in row.nodes if node_state(n.state).aiot == column)


def _state(row: "SinfoRow", compact: bool) -> str:
    if not row.nodes:
        return "n/a"
    node = row.nodes[0]
    name = node_state(node.state).compact if compact else node.state
    return name + node.state_suffix


def _partition(row: "SinfoRow") -> str:
    return row.partition.name + ("*" if row.partition.default else "")


def _time(row: "SinfoRow") -> str:
    limit = row.partition.max_time_min
    return "infinite" if limit is None else format_elapsed(60 * limit)


def _or_null(text: str) -> Optional[str]:
    return text or None


def _reason_time(row: "SinfoRow") -> str:
    """``_print_timestamp``: when the reason was set, ``Unknown`` when not known."""
    node = row.nodes[0] if row.nodes else None
    return format_timestamp(node.reason_time if node else None)


def _reason_user(row: "SinfoRow") -> str:
    """``_print_user`` (and ``_print_user_long``): who set the reason, ``Unknown`` when not
    known (nodes carry a user name only, so the long form has no ``(uid)``)."""
    node = row.nodes[0] if row.nodes else None
    return node.reason_user if node is not None and node.reason_user else "Unknown"


def _nodes_stat(get: Callable[[NodeInfo], int], suffix: bool = True) -> RowGetter:
    return lambda row: _min_max([get(n) for n in row.nodes], suffix) if row.nodes else "0"


def _first(get: Callable[[NodeInfo], Optional[str]]) -> RowGetter:
    """The first node's value (the line's nodes agree on it: it is the field's match)."""
    return lambda row: (get(row.nodes[0]) or UNKNOWN) if row.nodes else UNKNOWN


def _cpu_load(row: "SinfoRow") -> str:
    """``_print_cpu_load``: the load average as ``%.2f``, ``min-max`` when the nodes
    differ."""
    loads = [n.cpu_load for n in row.nodes if n.cpu_load is not None]
    if not loads:
        return UNKNOWN
    low, high = min(loads), max(loads)
    return f"{low:.2f}" if low == high else f"{low:.2f}-{high:.2f}"


def _free_mem(row: "SinfoRow") -> str:
    """``_print_free_mem``: free memory in MB, ``min-max`` when the nodes differ."""
    free = [n.free_mem_mb for n in row.nodes if n.free_mem_mb is not None]
    if not free:
        return UNKNOWN
    low, high = min(free), max(free)
    return str(low) if low == high else f"{low}-{high}"


def _gres_used(row: "SinfoRow") -> Optional[str]:
    """``_print_gres_used``: each GRES of the first node with the count jobs hold
    (``gpu:0``); ``(null)`` for a node without GRES."""
    node = row.nodes[0] if row.nodes else None
    if node is None or not node.gres:
        return None
    name = node.gres.split(":")[0]
    return f"{name}:{node.alloc_gpus}" if name == "gpu" else f"{name}:0"


def _addresses(row: "SinfoRow") -> str:
    return compress_hostlist_unique([n.address or n.name for n in row.nodes])


def _cluster(row: "SinfoRow") -> str:
    """``_print_cluster_name``: the cluster's name only when sinfo was asked about named
    clusters (``-M``), else ``N/A``."""
    return row.cluster or UNKNOWN


SINFO_FIELDS: Tuple[SinfoField, ...] = (
    SinfoField("AllocMem", "", "ALLOCMEM", _nodes_stat(lambda n: n.alloc_memory_mb, False),
               lambda n: n.alloc_memory_mb),
    SinfoField("AllocNodes", "S", "ALLOCNODES", lambda r: "all"),
    SinfoField("Available", "a", "AVAIL", lambda r: r.partition.avail),
    SinfoField("Cluster", "V", "CLUSTER", _cluster),
    SinfoField("Comment", "", "COMMENT", lambda r: None),
    SinfoField("Cores", "Y", "CORES", _nodes_stat(lambda n: n.cores), lambda n: n.cores),
    SinfoField("CPUs", "c", "CPUS", _nodes_stat(lambda n: n.cpus), lambda n: n.cpus),
    SinfoField("CPUsLoad", "O", "CPU_LOAD", _cpu_load, lambda n: n.cpu_load),
    SinfoField("CPUsState", "C", "CPUS(A/I/O/T)",
               lambda r: "/".join(str(x) for x in cpus_aiot(r.nodes))),
    SinfoField("DefaultTime", "L", "DEFAULTTIME", lambda r: "n/a"),
    SinfoField("Disk", "d", "TMP_DISK", _nodes_stat(lambda n: n.tmp_disk_mb, False),
               lambda n: n.tmp_disk_mb),
    SinfoField("Extra", "", "EXTRA", lambda r: None),
    SinfoField("Features", "f", "AVAIL_FEATURES",
               lambda r: _or_null(r.nodes[0].features) if r.nodes else None,
               lambda n: n.features),
    SinfoField("features_act", "b", "ACTIVE_FEATURES",
               lambda r: _or_null(r.nodes[0].features) if r.nodes else None,
               lambda n: n.features),
    SinfoField("FreeMem", "e", "FREE_MEM", _free_mem, lambda n: n.free_mem_mb),
    SinfoField("Gres", "G", "GRES", lambda r: _or_null(r.nodes[0].gres) if r.nodes else None,
               lambda n: n.gres),
    SinfoField("GresUsed", "", "GRES_USED", _gres_used, lambda n: (n.gres, n.alloc_gpus)),
    SinfoField("Groups", "g", "GROUPS", lambda r: r.partition.groups or "all"),
    SinfoField("MaxCPUsPerNode", "B", "MAX_CPUS_PER_NODE", lambda r: "UNLIMITED"),
    SinfoField("Memory", "m", "MEMORY", _nodes_stat(lambda n: n.memory_mb, False),
               lambda n: n.memory_mb),
    SinfoField("NodeAddr", "o", "NODE_ADDR", _addresses, lambda n: n.address or n.name),
    SinfoField("NodeAI", "A", "NODES(A/I)", lambda r: f"{_count(r, 'A')}/{_count(r, 'I')}"),
    SinfoField("NodeAIOT", "F", "NODES(A/I/O/T)", lambda r: "/".join(
        str(x) for x in (_count(r, "A"), _count(r, "I"), _count(r, "O"), len(r.nodes)))),
    SinfoField("NodeHost", "n", "HOSTNAMES",
               lambda r: compress_hostlist_unique([n.hostname or n.name for n in r.nodes]),
               header_cut=False),
    SinfoField("NodeList", "N", "NODELIST",
               lambda r: compress_hostlist_sorted([n.name for n in r.nodes]), header_cut=False),
    SinfoField("Nodes", "D", "NODES", lambda r: str(len(r.nodes))),
    SinfoField("OverSubscribe", "h", "OVERSUBSCRIBE", lambda r: r.partition.oversubscribe),
    SinfoField("Partition", "P", "PARTITION", _partition),
    SinfoField("PartitionName", "R", "PARTITION", lambda r: r.partition.name),
    SinfoField("Port", "", "PORT", lambda r: str(r.nodes[0].port or 0) if r.nodes else "0",
               lambda n: n.port),
    SinfoField("PreemptMode", "M", "PREEMPT_MODE", lambda r: "OFF"),
    SinfoField("PriorityJobFactor", "I", "PRIO_JOB_FACTOR", lambda r: "1"),
    SinfoField("PriorityTier", "p", "PRIO_TIER", lambda r: "1"),
    SinfoField("Reason", "E", "REASON",
               lambda r: (r.nodes[0].reason or "none") if r.nodes else "none",
               lambda n: n.reason),
    SinfoField("Root", "r", "ROOT", lambda r: "yes" if r.partition.root_only else "no"),
    SinfoField("Size", "s", "JOB_SIZE", lambda r: "1-infinite"),
    SinfoField("Sockets", "X", "SOCKETS", _nodes_stat(lambda n: n.sockets), lambda n: n.sockets),
    SinfoField("SocketCoreThread", "z", "S:C:T", lambda r: ":".join(
        _min_max([getattr(n, a) for n in r.nodes]) if r.nodes else "0"
        for a in ("sockets", "cores", "threads")),
               lambda n: (n.sockets, n.cores, n.threads)),
    SinfoField("StateCompact", "t", "STATE", lambda r: _state(r, True),
               lambda n: (n.state, n.state_suffix)),
    SinfoField("StateComplete", "", "STATECOMPLETE", lambda r: _state(r, False),
               lambda n: (n.state, n.state_suffix)),
    SinfoField("StateLong", "T", "STATE", lambda r: _state(r, False),
               lambda n: (n.state, n.state_suffix)),
    SinfoField("Threads", "Z", "THREADS", _nodes_stat(lambda n: n.threads), lambda n: n.threads),
    SinfoField("Time", "l", "TIMELIMIT", _time),
    SinfoField("Timestamp", "H", "TIMESTAMP", _reason_time, lambda n: n.reason_time),
    SinfoField("User", "u", "USER", _reason_user, lambda n: n.reason_user),
    SinfoField("UserLong", "U", "USER", _reason_user, lambda n: n.reason_user),
    SinfoField("Version", "v", "VERSION", _first(lambda n: n.version),
               lambda n: n.version),
    SinfoField("Weight", "w", "WEIGHT", _nodes_stat(lambda n: n.weight, False),
               lambda n: n.weight),
)

_BY_LETTER: Dict[str, SinfoField] = {f.letter: f for f in reversed(SINFO_FIELDS) if f.letter}
_BY_NAME: Dict[str, SinfoField] = {f.name.lower(): f for f in SINFO_FIELDS}
#: ``%all`` (and ``-O All``): every letter, a to z joined by ``|``, then A to Z each with
#: ``|`` before it and a space after it (``_parse_format``); letters sinfo lacks are skipped.
ALL_FORMAT = "%a" + "".join(f"|%{c}" for c in "bcdefghijklmnopqrstuvwxyz") + \
    "".join(f"|%{c} " for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def sinfo_field_by_letter(letter: str) -> Optional[SinfoField]:
    """The field of an ``-o`` letter, or None."""
    return _BY_LETTER.get(letter)


def sinfo_field_by_name(name: str) -> Optional[SinfoField]:
    """The field of an ``-O`` name (any case), or None."""
    return _BY_NAME.get(name.lower())
