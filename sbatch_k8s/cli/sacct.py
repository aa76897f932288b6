"""``sacct``: the accounting records of jobs (with their steps), as Slurm prints them.

Slurm's window rules apply (``-S``/``-E``; with ``-j`` alone everything; by default jobs
since midnight); finished jobs stay in the backend's records after squeue has forgotten them. Which
records are listed is :func:`parsers.job_filters.sacct_selects`.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, List, Optional, Sequence

from sbatch_k8s.cli.common import exit_with, run_command, say_backend
from sbatch_k8s.user_messages import print_warning

if TYPE_CHECKING:
    from parsers.job_records import JobRecord
    from sbatch_k8s.backends.base import Backend
    from parsers.report_options.sacct_options import SacctQuery

COMMAND = "sacct"


def _texts(backend: "Backend", query: "SacctQuery", records: Sequence["JobRecord"]) -> str:
    """``--batch-script`` or ``--env-vars`` of the selected jobs."""
    from parsers.formats.sacct_texts import format_batch_scripts, format_env_vars

    texts = [(r.job_id_text, backend.job_texts(r)) for r in records]
    if query.batch_script:
        return format_batch_scripts([(job, t[0]) for job, t in texts if t[0] is not None])
    return format_env_vars([(job, t[1]) for job, t in texts if t[1] is not None])


def _main(argv: List[str]) -> int:
    from parsers.formats.sacct_format import format_sacct, unrecorded_steps_notes
    from parsers.job_filters import hosts_of, named_steps, sacct_selects, truncated_to
    from parsers.report_options.sacct_options import parse_sacct_args
    from sbatch_k8s.backends import open_backend
    from sbatch_k8s.cli.help_text import report_action
    from sbatch_k8s.cli.user_ids import resolve_users

    environ = os.environ
    now = int(time.time())
    query = parse_sacct_args(argv, environ, now)
    if query.action:
        sys.stdout.write(report_action(COMMAND, query.action))
        return 0
    say_backend(COMMAND, environ, query.verbose)
    backend = open_backend(environ)
    ids = None if query.jobs is None else [j.job_id for j in query.jobs]
    records = backend.accounting_records(query.start_time, query.end_time, ids)
    if query.duplicates:  # a requeued job's earlier runs too, each before the next
        records = [run for r in records for run in (*r.requeued_runs, r)]
    if query.clusters is not None and backend.config.cluster_name not in query.clusters:
        # -M names clusters this one is not among (``all`` parsed as None: every cluster)
        records = []
    everyone = query.all_users or query.jobs is not None or (
        not query.users and backend.identity.operators_see_all
        and backend.identity.caller_is_operator())
    uids = None if everyone else resolve_users(COMMAND, query.users, not query.users,
                                               backend)
    hosts = hosts_of(query.nodelist) if query.nodelist is not None else None
    chosen = [r for r in records if sacct_selects(r, query, uids, hosts)]
    if query.batch_script or query.env_vars:
        sys.stdout.write(_texts(backend, query, chosen))
        return 0
    if query.truncate:
        chosen = [truncated_to(r, query.start_time, query.end_time) for r in chosen]
    only_steps = {r.job_id: steps for r in chosen
                  for steps in [named_steps(r, query.jobs)] if steps is not None}
    sys.stdout.write(format_sacct(chosen, query.fields, now, query.parsable, query.header,
                                  query.delimiter or "|", query.allocations_only,
                                  only_steps=only_steps, convert=not query.noconvert,
                                  units=query.units))
    if not query.allocations_only:
        sys.stdout.flush()
        for note in unrecorded_steps_notes(chosen):
            print_warning(COMMAND, note)
    return 0


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Console entry point."""
    exit_with(run_command(COMMAND, _main, argv))
