"""``srun``: inside a job, launch a step; outside, create a job for it and stream its output.

Inside an allocation (the runtime's variables are set) this is the runtime's srun. Outside,
as Slurm's srun does, it first obtains an allocation with the same options and runs the step
in it: the backend's :meth:`~sbatch_k8s.backends.base.Backend.run_outside`.
"""

from __future__ import annotations

import os
import sys
from typing import List, Mapping, Optional, Sequence

from parsers.getopt import parse_args
from parsers.options import SRUN
from sbatch_k8s.cli.common import exit_with, run_command, say_backend

COMMAND = "srun"
FOLLOW_INTERVAL_S = 0.02


def _inside_allocation(environ: Mapping[str, str]) -> bool:
    return "SBATCHK8S_NODE_ADDRS" in environ and "SBATCHK8S_JOB_DIR" in environ


def _main(argv: List[str]) -> int:
    if _inside_allocation(os.environ):
        from sbatch_k8s.runtime.srun.step import main as step_main

        return step_main(argv, os.environ)
    given = parse_args(SRUN, argv).options
    names = {g.option.long for g in given}
    if names & {"help", "usage", "version"}:
        from sbatch_k8s.cli.help_text import answer

        sys.stdout.write(answer(COMMAND, {n: None for n in names}))
        return 0
    clusters = [g.raw for g in given if g.option.long == "clusters"]
    if clusters or "SLURM_CLUSTERS" in os.environ:
        from parsers.report_options.clusters import FROM_OPTION
        from sbatch_k8s.cli.listing import chosen_clusters

        chosen_clusters(COMMAND, clusters[-1] if clusters else None, os.environ, FROM_OPTION)
    from sbatch_k8s.backends import open_backend
    from sbatch_k8s.backends.base import OutputSink

    say_backend(COMMAND, os.environ, sum(1 for g in given if g.option.long == "verbose"))
    sys.stdout.flush()   # the step's output goes straight to the descriptors
    return open_backend(os.environ).run_outside(argv, OutputSink())


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Console entry point."""
    exit_with(run_command(COMMAND, _main, argv))
