"""Node names a command reads from a file on this machine (``scancel -w /path/file``)."""

from __future__ import annotations

from typing import FrozenSet

from parsers.job_filters import hosts_of


def node_filter_hosts(nodelist: str) -> FrozenSet[str]:
    """The hosts of scancel's ``-w``: a value containing ``/`` names a file of host names
    (``slurm_read_hostfile``; an unreadable file leaves the value as it is)."""
    if "/" in nodelist:
        try:
            with open(nodelist) as f:
                text = f.read()
        except OSError:
            return hosts_of(nodelist)
        words = [w for line in text.splitlines() for w in line.split("#")[0].split(",")]
        return frozenset().union(*(hosts_of(w.strip()) for w in words if w.strip()))
    return hosts_of(nodelist)
