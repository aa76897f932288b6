"""``-M``/``--clusters`` (and ``SLURM_CLUSTERS``): sbatch-k8s is one cluster, named in its
configuration; the commands choose among clusters as Slurm 22.05's do.

squeue, sinfo, scancel, scontrol, sbatch and srun look each name up in the database
(``slurmdb_get_info_cluster``): the whole value ``all`` (any case) is every cluster; a name
the database does not know gets ``No cluster 'x' known by database.`` and is skipped; when
no name is left the command ends with the ``can't be reached`` line naming the value and
where it came from (``--cluster`` or ``SLURM_CLUSTERS``), exit 1. squeue and sinfo then print
a ``CLUSTER: <name>`` line before each cluster's listing.

sacct only filters its records by cluster name: ``all`` or ``-1`` (the whole value) is every
cluster, any other list keeps the records of the clusters it names — none for an unknown
one, without a word.

``--federation``, ``--local`` and ``--sibling`` (squeue, sinfo, scontrol, sacct) change
nothing for a cluster that is in no federation, as on a Slurm without one.
"""

from __future__ import annotations

from typing import NamedTuple, Optional, Tuple

from parsers.input_errors import EXIT_SUBMIT_ERROR, SlurmInputError

#: Where a cluster list came from, as Slurm names it in its refusal.
FROM_OPTION = "--cluster"
FROM_ENVIRONMENT = "SLURM_CLUSTERS"
#: The whole values that name every cluster.
ALL_CLUSTERS = "all"
SACCT_ALL_CLUSTERS = ("all", "-1")


class ClusterChoice(NamedTuple):
    """The clusters chosen, and the error lines for the names skipped (printed, not fatal)."""

    names: Tuple[str, ...]
    skipped: Tuple[str, ...]


def choose_clusters(text: str, known: str, source: str = FROM_OPTION) -> ClusterChoice:
    """The clusters ``text`` names among the one ``known`` (see the module docstring);
    SlurmInputError (exit 1) when it names none of them."""
    if text.lower() == ALL_CLUSTERS:
        return ClusterChoice((known,), ())
    names = [name for name in text.split(",") if name]
    skipped = tuple(f"No cluster '{name}' known by database." for name in names
                    if name != known)
    if known not in names:
        raise SlurmInputError(
            *skipped,
            f"'{text}' can't be reached now, or it is an invalid entry for {source}.  Use "
            "'sacctmgr list clusters' to see available clusters.",
            exit_code=EXIT_SUBMIT_ERROR)
    return ClusterChoice((known,), skipped)


def sacct_clusters(text: str) -> Optional[Tuple[str, ...]]:
    """sacct's cluster filter: None for every cluster, else the names (see the module
    docstring)."""
    if text.lower() in SACCT_ALL_CLUSTERS:
        return None
    return tuple(name for name in text.split(",") if name)


def cluster_line(name: str) -> str:
    """The line squeue and sinfo print before a named cluster's listing."""
    return f"CLUSTER: {name}\n"
