"""``seff JOB``: a job's CPU and memory efficiency, as Slurm's ``contribs/seff`` reports it.

Options as seff's: ``-h`` (or not exactly one job) prints the usage and exits 1, ``-v`` its
version (exit 1), ``-d`` the raw figures first; an unknown job is ``Job not found.`` (exit 2).
The figures are the job's accounting record's (:mod:`parsers.formats.seff_report`).
"""

from __future__ import annotations

import getopt
import os
import sys
import time
from typing import List, Optional, Sequence

from sbatch_k8s.cli.common import exit_with, run_command

COMMAND = "seff"
VERSION = "seff Version 2.1"
USAGE = ("Usage: seff [Options] <Jobid>\n"
         "       Options:\n"
         "       -h    Help menu\n"
         "       -v    Version\n"
         "       -d    Debug mode: display raw Slurm data\n")
DEBUG_TITLES = ("JobID ArrayJobID User Group State Clustername Ncpus Nnodes Ntasks Reqmem "
                "PerNode Cput Walltime Mem ExitStatus")


def _main(argv: List[str]) -> int:
    from parsers.formats.seff_report import seff_report, seff_figures
    from parsers.report_options.ids import parse_sacct_jobs
    from sbatch_k8s.backends import open_backend

    try:
        flags, operands = getopt.getopt(argv, "hvdf:")
    except getopt.GetoptError:
        flags, operands = [("-h", "")], []
    given = {flag for flag, _ in flags}
    if "-v" in given:
        sys.stdout.write(VERSION + "\n")
        return 1
    if "-h" in given or len(operands) != 1:
        sys.stdout.write(USAGE)
        return 1
    wanted = parse_sacct_jobs(operands[0])[0]
    backend = open_backend(os.environ)
    now = int(time.time())
    records = backend.accounting_records(0, 2**31 - 1, [wanted.job_id])
    if wanted.array_task_id is not None:
        records = [r for r in records if r.array_task_id == wanted.array_task_id]
    else:
        records = [r for r in records if r.job_id == wanted.job_id]
    if not records:
        sys.stderr.write("Job not found.\n")
        return 2
    job = records[0]
    if "-d" in given:
        sys.stdout.write(f"Slurm data: {DEBUG_TITLES}\n"
                         f"Slurm data: {seff_figures(job, now, wanted.step)}\n\n")
    sys.stdout.write(seff_report(job, now, wanted.step))
    return 0


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Console entry point."""
    exit_with(run_command(COMMAND, _main, argv))
