"""``sinfo -R``, ``sinfo -T`` and ``-t``: reasons of down or drained nodes, reservations, and
which node states a ``-t`` name selects.

``-R`` lists each node with a reason once (whatever partitions it is in), grouped by reason,
user and time, in sinfo's ``-R`` formats; there are no reservations.
"""

from __future__ import annotations

from typing import Callable, Dict, Sequence

from parsers.formats.sinfo_fields import NodeInfo, PartitionInfo

#: sinfo's ``-R`` formats (``-l`` adds the state and the long user form).
REASON_FORMAT = "%20E %9u %19H %N"
REASON_LONG_FORMAT = "%20E %12U %19H %6t %N"
NO_RESERVATIONS = "No reservations in the system\n"


def format_reasons(partitions: Sequence[PartitionInfo], long: bool, header: bool,
                   now: int = 0) -> str:
    """``sinfo -R`` (``-l``: with the date line and the state column): the nodes of
    ``partitions`` that have a reason."""
    from parsers.formats.sinfo_format import format_sinfo

    seen: Dict[str, NodeInfo] = {}
    for partition in partitions:
        for node in partition.nodes:
            if node.reason:
                seen.setdefault(node.name, node)
    listed = [PartitionInfo("", tuple(seen.values()))] if seen else []
    return format_sinfo(listed, REASON_LONG_FORMAT if long else REASON_FORMAT, long=long,
                        header=header, now=now)


def _base(node: NodeInfo) -> str:
    """The node's base state as ``-t`` sees it: a drained node is idle (down when it does not
    respond), a draining one mixed or allocated."""
    if node.state == "drained":
        return "down" if "*" in node.state_suffix else "idle"
    if node.state == "draining":
        return "allocated" if node.alloc_cpus >= node.cpus else "mixed"
    return node.state


#: ``-t`` names that are flags or state groups rather than one state (``_filter_out``).
STATE_SELECTORS: Dict[str, Callable[[NodeInfo], bool]] = {
    "drain": lambda n: n.state in ("drained", "draining"),
    "drained": lambda n: n.state == "drained",
    "draining": lambda n: n.state == "draining",
    "no_respond": lambda n: "*" in n.state_suffix,
    "idle": lambda n: _base(n) == "idle",
    "mixed": lambda n: _base(n) == "mixed",
    "mix": lambda n: _base(n) == "mixed",
    "allocated": lambda n: _base(n) == "allocated",
    "alloc": lambda n: _base(n) == "allocated",
    "down": lambda n: _base(n) == "down",
}


def node_state_matches(node: NodeInfo, wanted: str) -> bool:
    """Whether ``node`` is in a state ``-t`` names (``mix``, ``mixed``, ``drain``…)."""
    from parsers.formats.sinfo_fields import node_state

    selector = STATE_SELECTORS.get(wanted)
    if selector is not None:
        return selector(node)
    return wanted in (node.state, node_state(node.state).compact)
