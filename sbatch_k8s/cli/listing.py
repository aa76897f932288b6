"""squeue's and sinfo's output loop: the ``-M`` cluster lines, then one listing, or one per
``-i`` period until interrupted."""

from __future__ import annotations

import sys
import time
from typing import Callable, Mapping, Optional, Sequence


def print_listings(command: str, clusters: Optional[Sequence[str]], iterate_s: Optional[float],
                   listing: Callable[[], str], environ: Mapping[str, str]) -> int:
    """Print ``listing()`` (after ``CLUSTER:`` lines when ``-M`` named clusters), again every
    ``iterate_s`` seconds when set; the exit status."""
    from parsers.report_options.clusters import check_clusters, cluster_line

    first = ""
    if clusters is not None:
        from sbatch_k8s.config import load_config

        name = load_config(environ)[0].cluster_name
        first = "".join(cluster_line(c) for c in check_clusters(command, clusters, name))
    while True:
        sys.stdout.write(first + listing())
        if not iterate_s:
            return 0
        sys.stdout.write("\n")
        sys.stdout.flush()
        time.sleep(iterate_s)
