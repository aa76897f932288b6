"""sinfo's data (:class:`PartitionInfo`, :class:`NodeInfo`), node states, and the sums its
fields make of a line's nodes (the fields themselves: :mod:`parsers.formats.sinfo_table`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Sequence, Tuple


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
    #: What slurmd reports of its machine when known (sinfo ``%O``, ``%e``): the load
    #: average and the free memory in MB; None prints ``N/A``.
    cpu_load: Optional[float] = None
    free_mem_mb: Optional[int] = None
    #: The port the node's daemon listens on (sinfo ``-O Port``); None: unknown.
    port: Optional[int] = None


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
