"""``-M``/``--clusters`` of the reporting commands: sbatch-k8s answers for one cluster.

squeue, sinfo and scancel accept the names of clusters the database knows and fail with
Slurm's two lines for any other; ``all`` means every cluster. squeue and sinfo then print a
``CLUSTER: <name>`` line first, as Slurm does when asked about named clusters.
"""

from __future__ import annotations

from typing import Tuple

from parsers.errors import EXIT_SUBMIT_ERROR, SlurmInputError
from parsers.report_options.argv import comma_list


def check_clusters(command: str, text: str, known: str) -> Tuple[str, ...]:
    """The clusters ``text`` names (``all``: the known one); an unknown name raises
    ``No cluster 'x' known by database.`` and the ``can't be reached`` line (exit 1)."""
    names = comma_list(text)
    if any(name.lower() == "all" for name in names):
        return (known,)
    for name in names:
        if name != known:
            raise SlurmInputError(
                f"No cluster '{name}' known by database.",
                f"'{name}' can't be reached now, or it is an invalid entry "
                "for --cluster.  Use 'sacctmgr list clusters' to see available clusters.",
                exit_code=EXIT_SUBMIT_ERROR)
    return names


def cluster_line(name: str) -> str:
    """The line squeue and sinfo print before a named cluster's listing."""
    return f"CLUSTER: {name}\n"
