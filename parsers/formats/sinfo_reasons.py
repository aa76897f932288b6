"""``sinfo -R`` and ``sinfo -T``: reasons of down or drained nodes, and reservations.

sbatch-k8s nodes are never down or drained by an administrator and there are no
reservations, so these listings are what Slurm prints for a healthy cluster without
reservations: the reason header alone, and ``No reservations in the system``.
"""

from __future__ import annotations

REASON_HEADER = "REASON               USER      TIMESTAMP           NODELIST\n"
REASON_LONG_HEADER = "REASON               USER         TIMESTAMP           STATE  NODELIST\n"
NO_RESERVATIONS = "No reservations in the system\n"


def format_reasons(long: bool, header: bool) -> str:
    """``sinfo -R`` (``-l``: with the state column) when no node has a reason."""
    if not header:
        return ""
    return REASON_LONG_HEADER if long else REASON_HEADER


def node_state_matches(state: str, wanted: str) -> bool:
    """Whether a node's long state (``mixed``) is one ``-t`` names (``mix``, ``mixed``)."""
    from parsers.formats.sinfo_fields import node_state

    return wanted in (state, node_state(state).compact)
