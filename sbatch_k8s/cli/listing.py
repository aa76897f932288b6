"""squeue's and sinfo's output loop: the ``-M`` cluster lines, then one listing, or one per
``-i`` period until interrupted; the clusters a command's ``-M`` and ``SLURM_CLUSTERS`` choose
(:func:`chosen_clusters`, for every command that takes them)."""

from __future__ import annotations

import sys
import time
from typing import Callable, Mapping, Optional, Tuple


def chosen_clusters(command: str, option: Optional[str], environ: Mapping[str, str],
                    env_source: str = "SLURM_CLUSTERS") -> Optional[Tuple[str, ...]]:
    """The clusters ``-M``/``--clusters`` (``option``, else ``SLURM_CLUSTERS``) choose; None
    when neither is given. Slurm checks ``SLURM_CLUSTERS`` first (a bad one ends the command
    even when ``-M`` overrides it), naming it ``env_source`` in its refusal (scancel and
    sbatch say ``--cluster``); each name no database knows gets its error line here
    (:func:`parsers.report_options.clusters.choose_clusters`)."""
    from parsers.report_options.clusters import FROM_OPTION, choose_clusters

    from_env = environ.get("SLURM_CLUSTERS")
    texts = [(from_env, env_source)] if from_env is not None else []
    if option is not None and option != from_env:
        texts.append((option, FROM_OPTION))
    if not texts:
        return None
    from sbatch_k8s.config_file import load_config

    known = load_config(environ)[0].cluster_name
    chosen: Tuple[str, ...] = ()
    for text, source in texts:
        chosen, skipped = choose_clusters(text, known, source)
        for line in skipped:
            sys.stderr.write(f"{command}: error: {line}\n")
    return chosen


def print_listings(command: str, clusters: Optional[str], iterate_s: Optional[float],
                   listing: Callable[[], str], environ: Mapping[str, str],
                   noheader: bool = False) -> int:
    """Print ``listing()`` (after ``CLUSTER:`` lines when ``-M`` named clusters, unless
    ``noheader``), again every ``iterate_s`` seconds when set; the exit status."""
    from parsers.report_options.clusters import cluster_line

    chosen = chosen_clusters(command, clusters, environ)
    first = "".join(cluster_line(c) for c in chosen) \
        if chosen is not None and not noheader else ""
    while True:
        sys.stdout.write(first + listing())
        if not iterate_s:
            return 0
        sys.stdout.write("\n")
        sys.stdout.flush()
        time.sleep(iterate_s)
