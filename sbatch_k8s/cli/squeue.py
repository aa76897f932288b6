"""``squeue``: jobs (or, with ``-s``, steps) of the local backend, as Slurm prints them."""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, List, Mapping, Optional, Sequence

from sbatch_k8s.cli.common import exit_with, run_command, say_backend
from sbatch_k8s.cli.user_ids import resolve_users

if TYPE_CHECKING:
    from parsers.report_options.squeue_options import SqueueQuery

COMMAND = "squeue"


def _listing(query: "SqueueQuery", environ: Mapping[str, str]) -> str:
    """One listing (``-i`` prints one per period)."""
    from parsers.formats.messages import invalid_job_id_error
    from parsers.formats.squeue_format import format_squeue, format_squeue_fields
    from parsers.formats.squeue_select import expand_pending_arrays, select_jobs, select_steps
    from parsers.formats.squeue_sort import sort_jobs, sort_steps
    from parsers.formats.squeue_steps import format_squeue_steps
    from sbatch_k8s.backends import open_backend

    now = int(time.time())
    backend = open_backend(environ)
    wants_finished = query.all_states or query.states is not None or query.jobs is not None
    named = None if query.jobs is None else [sel.job_id for sel in query.jobs]
    records = backend.job_records(wants_finished, now, job_ids=named)
    if query.single_job_id is not None and not any(
            query.single_job_id in (r.job_id, r.array_job_id) for r in records):
        if not backend.lookup.known(query.single_job_id):
            raise invalid_job_id_error()
    users = resolve_users(COMMAND, query.users, query.me, backend)
    header = not query.noheader
    if query.step_mode:
        running = [r for r in records if r.state == "RUNNING"]
        views = [(r, s) for r in running for s in backend.running_steps(r)]
        chosen = sort_steps(select_steps(views, query, users), query.sort, now)
        return format_squeue_steps(chosen, query.format, now, header,
                                   long_format=query.format_is_long)
    chosen = sort_jobs(select_jobs(records, query, now, users, backend.identity.caller_uid()),
                       query.sort, now)
    if query.array_tasks:
        chosen = expand_pending_arrays(chosen)
    render = format_squeue_fields if query.format_is_long else format_squeue
    return render(chosen, query.format, now, header, date_line=query.date_line)


def _main(argv: List[str]) -> int:
    from parsers.report_options.squeue_options import parse_squeue_args
    from sbatch_k8s.cli.help_text import report_action
    from sbatch_k8s.cli.listing import print_listings

    environ = os.environ
    query = parse_squeue_args(argv, environ)
    if query.action:
        sys.stdout.write(report_action(COMMAND, query.action))
        return 0
    for problem in query.format_errors:
        sys.stderr.write(f"{COMMAND}: error: {problem}\n")
    say_backend(COMMAND, environ, query.verbose)
    return print_listings(COMMAND, query.clusters, query.iterate_s,
                          lambda: _listing(query, environ), environ, query.noheader)


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Console entry point."""
    exit_with(run_command(COMMAND, _main, argv))
