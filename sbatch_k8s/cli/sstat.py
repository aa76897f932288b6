"""``sstat``: the usage so far of running steps, as Slurm prints it.

Slurm's sstat asks each step's slurmstepd for a fresh sample. Here the usage comes from the
job's record, where node 0 keeps every running step's (and the batch script's) latest
sample: it is as fresh as the sampling interval (``--acctg-freq``, 30 s by default), and a
step not sampled yet is not listed. Which steps, and the errors, are sstat's: ``-j JOB``
is the job's first running numbered step, ``-a`` every running one with the batch script's
first (the extern step has no processes here, so it is not listed); errors go to stderr after
the header, and sstat still exits 0.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from sbatch_k8s.cli.common import exit_with, run_command, say_backend

if TYPE_CHECKING:
    from parsers.job_records import JobRecord, StepRecord
    from parsers.report_options.ids import JobId
    from parsers.report_options.sstat_options import SstatQuery

COMMAND = "sstat"


def _running(record: "JobRecord") -> List["StepRecord"]:
    """The record's running steps in sstat's ``-a`` order: batch, then by number."""
    from parsers.job_records import RUNNING

    steps = [s for s in record.steps if s.state == RUNNING and s.step_id != "extern"]
    return sorted(steps, key=lambda s: -1 if s.step_id == "batch" else int(s.step_id)
                  if s.step_id.isdigit() else -2)


def _chosen(query: "SstatQuery", wanted: "JobId", record: Optional["JobRecord"]
            ) -> Tuple[List["StepRecord"], Optional[str]]:
    """The steps one ``-j`` item names, or sstat's error for it."""
    from parsers.job_records import PENDING, RUNNING

    if record is None or record.state not in (RUNNING, PENDING):
        return [], f"couldn't get steps for job {wanted.job_id}"
    running = _running(record)
    if record.state == PENDING:
        return [], f"No steps running for job {wanted.job_id}"
    if wanted.step is not None:
        found = [s for s in running if s.step_id == wanted.step]
        return found, None if found else \
            f"StepId={record.job_id_text}.{wanted.step} not found running."
    if query.all_steps:
        return running, None
    return [s for s in running if s.step_id.isdigit()][:1], None


def _main(argv: List[str]) -> int:
    from parsers.formats.sstat_format import format_sstat, helpformat
    from parsers.report_options.sstat_options import parse_sstat_args
    from sbatch_k8s.backends import open_backend
    from sbatch_k8s.cli.help_text import report_action

    query = parse_sstat_args(argv)
    if query.action == "helpformat":
        sys.stdout.write(helpformat())
        return 0
    if query.action:
        sys.stdout.write(report_action(COMMAND, query.action))
        return 0
    environ = os.environ
    say_backend(COMMAND, environ, query.verbose)
    backend = open_backend(environ)
    ids = sorted({j.job_id for j in query.jobs})
    records = {r.job_id: r for r in backend.accounting_records(0, 2**31 - 1, ids)
               if r.array_task_id is None or r.job_id in ids}
    lines: List[Tuple["JobRecord", "StepRecord"]] = []
    errors: List[str] = []
    for wanted in query.jobs:
        record = records.get(wanted.job_id)
        steps, error = _chosen(query, wanted, record)
        if error:
            errors.append(error)
        lines.extend((record, step) for step in steps if record is not None)
    sys.stdout.write(format_sstat(lines, query.fields, query.parsable, query.header,
                                  convert=not query.noconvert))
    sys.stdout.flush()
    for error in errors:
        sys.stderr.write(f"{COMMAND}: error: {error}\n")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Console entry point."""
    exit_with(run_command(COMMAND, _main, argv))
