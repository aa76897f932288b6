"""sinfo's data (:class:`PartitionInfo`, :class:`NodeInfo`), node states, and its fields.

Fields follow ``fmt_data`` in ``src/sinfo/opts.c`` and the printers in ``src/sinfo/print.c``.
A field's ``match`` tells which node value splits a partition into several lines when the
field is printed (sinfo's ``match_flags``); aggregate fields (counts, node lists) have none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Dict, Mapping, Optional, Sequence, Tuple

from parsers.formats.cells import convert_num_unit, format_timestamp
from parsers.values.hostlist import compress_hostlist_sorted, compress_hostlist_unique
from parsers.values.time import format_elapsed

if TYPE_CHECKING:  # pragma: no cover - typing only
    from parsers.formats.sinfo import SinfoRow


@dataclass(frozen=True)
class NodeInfo:
    """One node: its long lower-case state (``idle``, ``allocated``, ``mixed``, ``down``,
    ``drained``…), an optional state suffix (``*`` not responding, ``~`` powered off…) and
    its resources."""

    name: str
    state: str = "idle"
    cpus: int = 1
    alloc_cpus: int = 0
    memory_mb: int = 1
    sockets: int = 1
    cores: int = 1
    threads: int = 1
    gres: str = ""
    features: str = ""
    reason: str = ""
    weight: int = 1
    tmp_disk_mb: int = 0
    state_suffix: str = ""
    #: The node's host name (sinfo ``%n``), when it differs from its Slurm name.
    hostname: str = ""
    #: What ``scontrol show node`` adds: memory and GPUs our jobs hold, the node's machine
    #: (``Arch``, ``NodeAddr``, ``OS``, daemon ``Version``; empty when unknown), times as
    #: epochs (None: unknown) and who set the reason (None: unknown).
    alloc_memory_mb: int = 0
    alloc_gpus: int = 0
    arch: str = ""
    address: str = ""
    os: str = ""
    version: str = ""
    boot_time: Optional[int] = None
    start_time: Optional[int] = None
    last_busy: Optional[int] = None
    reason_time: Optional[int] = None
    reason_user: Optional[str] = None
    #: Set on nodes that all draw on one pool (the local machine's nodes): ``cpus`` (and
    #: ``memory_mb``, ``gres``) is that pool, and this is how many of its CPUs jobs hold on
    #: any node. Totals count the pool once, not once per node (:func:`counted_once`).
    pool_alloc_cpus: Optional[int] = None


@dataclass(frozen=True)
class PartitionInfo:
    """One partition in configuration order: ``default`` marks it with ``*``; ``avail`` is
    ``up``, ``down``, ``drain`` or ``inactive``; ``max_time_min`` None is ``infinite``."""

    name: str
    nodes: Tuple[NodeInfo, ...] = ()
    default: bool = False
    avail: str = "up"
    max_time_min: Optional[int] = None
    root_only: bool = False
    groups: Optional[str] = None
    oversubscribe: str = "NO"
    #: ``DefaultTime`` in minutes (None: ``NONE``) and ``DefMemPerCPU`` in MiB (None: the
    #: partition sets none, ``DefMemPerNode=UNLIMITED``), for ``scontrol show partition``.
    default_time_min: Optional[int] = None
    def_mem_per_cpu_mb: Optional[int] = None


@dataclass(frozen=True)
class NodeState:
    """A node state's compact name, its sort order (``node_state`` value) and its
    A/I/O column (allocated, idle, other)."""

    compact: str
    order: int
    aiot: str


DRAIN, COMPLETING = 0x200, 0x400
NODE_STATES: Mapping[str, NodeState] = {
    "unknown": NodeState("unk", 0, "O"),
    "down": NodeState("down", 1, "O"),
    "idle": NodeState("idle", 2, "I"),
    "allocated": NodeState("alloc", 3, "A"),
    "error": NodeState("err", 4, "O"),
    "mixed": NodeState("mix", 5, "A"),
    "future": NodeState("futr", 6, "O"),
    "drained": NodeState("drain", 2 | DRAIN, "O"),
    "draining": NodeState("drng", 3 | DRAIN, "A"),
    "completing": NodeState("comp", 3 | COMPLETING, "A"),
    "fail": NodeState("fail", 1 | 0x2000, "O"),
    "failing": NodeState("failg", 3 | 0x2000, "A"),
    "maint": NodeState("maint", 2 | 0x80000, "O"),
    "reserved": NodeState("resv", 2 | 0x8000, "I"),
    "planned": NodeState("plnd", 2 | 0x4000000, "I"),
    "inval": NodeState("inval", 0 | 0x40000000, "O"),
    "blocked": NodeState("block", 2 | 0x10000000, "O"),
}


def node_state(long: str) -> NodeState:
    """The row of a node state; unknown names print as given and sort first."""
    return NODE_STATES.get(long) or NodeState(long, -1, "O")


RowGetter = Callable[["SinfoRow"], Optional[str]]
Match = Optional[Callable[[NodeInfo], object]]


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
    text = convert_num_unit(low, "", exact=True) if suffix else str(low)
    return text if low == high else f"{text}+"


def _count(row: "SinfoRow", column: str) -> int:
    return sum(1 for n in row.nodes if node_state(n.state).aiot == column)


def counted_once(nodes: Sequence[NodeInfo]) -> Tuple[NodeInfo, ...]:
    """The nodes whose resources add up to a total: each node of its own, and one node for
    the shared pool (nodes with ``pool_alloc_cpus``), which every one of its nodes shows."""
    own = tuple(n for n in nodes if n.pool_alloc_cpus is None)
    pooled = [n for n in nodes if n.pool_alloc_cpus is not None]
    return own + tuple(pooled[:1])


def _own_cpus(nodes: Sequence[NodeInfo]) -> Tuple[int, int, int, int]:
    """CPUS(A/I/O/T) of nodes with CPUs of their own, as sinfo sums them: a node in an
    "other" state (down, drained…) counts all its CPUs as other."""
    up = [n for n in nodes if node_state(n.state).aiot != "O"]
    down = [n for n in nodes if node_state(n.state).aiot == "O"]
    return (sum(n.alloc_cpus for n in up), sum(n.cpus - n.alloc_cpus for n in up),
            sum(n.cpus for n in down), sum(n.cpus for n in nodes))


def _pool_cpus(nodes: Sequence[NodeInfo]) -> Tuple[int, int, int, int]:
    """CPUS(A/I/O/T) of nodes sharing one pool, counted once: allocated is what jobs hold on
    these nodes, idle what the pool has left, other what jobs hold on its other nodes (so a
    line of all the pool's nodes reads held/free/0/pool, and one node's line still adds up)."""
    if not nodes:
        return 0, 0, 0, 0
    pool = max(n.cpus for n in nodes)
    used = min(max(n.pool_alloc_cpus or 0 for n in nodes), pool)
    here = min(sum(n.alloc_cpus for n in nodes), used)
    return here, pool - used, used - here, pool


def cpus_aiot(nodes: Sequence[NodeInfo]) -> Tuple[int, int, int, int]:
    """``CPUS(A/I/O/T)`` of a line's nodes: sums over nodes, a shared pool counted once."""
    own = _own_cpus([n for n in nodes if n.pool_alloc_cpus is None])
    pool = _pool_cpus([n for n in nodes if n.pool_alloc_cpus is not None])
    return own[0] + pool[0], own[1] + pool[1], own[2] + pool[2], own[3] + pool[3]


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


SINFO_FIELDS: Tuple[SinfoField, ...] = (
    SinfoField("Available", "a", "AVAIL", lambda r: r.partition.avail),
    SinfoField("Cores", "Y", "CORES", _nodes_stat(lambda n: n.cores), lambda n: n.cores),
    SinfoField("CPUs", "c", "CPUS", _nodes_stat(lambda n: n.cpus), lambda n: n.cpus),
    SinfoField("CPUsLoad", "O", "CPU_LOAD", lambda r: "N/A"),
    SinfoField("CPUsState", "C", "CPUS(A/I/O/T)",
               lambda r: "/".join(str(x) for x in cpus_aiot(r.nodes))),
    SinfoField("DefaultTime", "L", "DEFAULTTIME", lambda r: "n/a"),
    SinfoField("Disk", "d", "TMP_DISK", _nodes_stat(lambda n: n.tmp_disk_mb, False),
               lambda n: n.tmp_disk_mb),
    SinfoField("Features", "f", "AVAIL_FEATURES",
               lambda r: _or_null(r.nodes[0].features) if r.nodes else None,
               lambda n: n.features),
    SinfoField("FreeMem", "e", "FREE_MEM", lambda r: "N/A"),
    SinfoField("Gres", "G", "GRES", lambda r: _or_null(r.nodes[0].gres) if r.nodes else None,
               lambda n: n.gres),
    SinfoField("Groups", "g", "GROUPS", lambda r: r.partition.groups or "all"),
    SinfoField("Memory", "m", "MEMORY", _nodes_stat(lambda n: n.memory_mb, False),
               lambda n: n.memory_mb),
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
    SinfoField("StateLong", "T", "STATE", lambda r: _state(r, False),
               lambda n: (n.state, n.state_suffix)),
    SinfoField("Threads", "Z", "THREADS", _nodes_stat(lambda n: n.threads), lambda n: n.threads),
    SinfoField("Time", "l", "TIMELIMIT", _time),
    SinfoField("Timestamp", "H", "TIMESTAMP", _reason_time, lambda n: n.reason_time),
    SinfoField("User", "u", "USER", _reason_user, lambda n: n.reason_user),
    SinfoField("UserLong", "U", "USER", _reason_user, lambda n: n.reason_user),
    SinfoField("Weight", "w", "WEIGHT", _nodes_stat(lambda n: n.weight, False),
               lambda n: n.weight),
)

_BY_LETTER: Dict[str, SinfoField] = {f.letter: f for f in reversed(SINFO_FIELDS) if f.letter}
_BY_NAME: Dict[str, SinfoField] = {f.name.lower(): f for f in SINFO_FIELDS}


def sinfo_field_by_letter(letter: str) -> Optional[SinfoField]:
    """The field of an ``-o`` letter, or None."""
    return _BY_LETTER.get(letter)


def sinfo_field_by_name(name: str) -> Optional[SinfoField]:
    """The field of an ``-O`` name (any case), or None."""
    return _BY_NAME.get(name.lower())
