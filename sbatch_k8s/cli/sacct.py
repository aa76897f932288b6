"""``sacct``: the accounting records of local jobs (with their steps), as Slurm prints them.

Slurm's window rules apply (``-S``/``-E``; with ``-j`` alone everything; by default jobs
since midnight); finished jobs stay in the database after squeue has forgotten them. Which
records are listed is :func:`parsers.job_filters.sacct_selects`.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, List, Mapping, Optional, Sequence

from sbatch_k8s.cli.common import exit_with, run_command

if TYPE_CHECKING:
    from parsers.records import JobRecord
    from parsers.report_options.sacct import SacctQuery

COMMAND = "sacct"


def _texts(environ: Mapping[str, str], query: "SacctQuery",
           records: Sequence["JobRecord"]) -> str:
    """``--batch-script`` or ``--env-vars`` of the selected jobs."""
    from parsers.formats.sacct_texts import format_batch_scripts, format_env_vars
    from sbatch_k8s.backends.local.job_files import batch_script, start_environment

    if query.batch_script:
        scripts = [(r.job_id_text, batch_script(environ, r)) for r in records]
        return format_batch_scripts([(job, text) for job, text in scripts if text is not None])
    found = [(r.job_id_text, start_environment(environ, r)) for r in records]
    return format_env_vars([(job, env) for job, env in found if env is not None])


def _main(argv: List[str]) -> int:
    from parsers.formats.sacct import format_sacct
    from parsers.job_filters import hosts_of, sacct_selects, truncated_to
    from parsers.report_options.sacct import parse_sacct_args
    from sbatch_k8s.backends.local.layout import job_dir_of
    from sbatch_k8s.backends.local.records import accounting_records
    from sbatch_k8s import jobdb
    from sbatch_k8s.cli.help_text import report_action
    from sbatch_k8s.cli.user_ids import resolve_users
    from sbatch_k8s.config import load_config

    environ = os.environ
    now = int(time.time())
    query = parse_sacct_args(argv, environ, now)
    if query.action:
        sys.stdout.write(report_action(COMMAND, query.action))
        return 0
    config, _ = load_config(environ)
    ids = None if query.jobs is None else [j.job_id for j in query.jobs]
    clauses = ["(end_time IS NULL OR end_time >= ?)", "submit_time < ?"]
    params: list = [query.start_time, query.end_time]
    if ids is not None:
        marks = ", ".join("?" for _ in ids)
        clauses.append(f"(job_id IN ({marks}) OR array_job_id IN ({marks}))")
        params += ids + ids
    records = accounting_records(jobdb.connect(environ), " AND ".join(clauses), params,
                                 config.cluster_name, lambda job_id: job_dir_of(environ, job_id))
    if query.clusters is not None and config.cluster_name not in query.clusters:
        records = []
    uids = None if query.all_users or query.jobs is not None else resolve_users(
        COMMAND, query.users, not query.users)
    hosts = hosts_of(query.nodelist) if query.nodelist is not None else None
    chosen = [r for r in records if sacct_selects(r, query, uids, hosts)]
    if query.batch_script or query.env_vars:
        sys.stdout.write(_texts(environ, query, chosen))
        return 0
    if query.truncate:
        chosen = [truncated_to(r, query.start_time, query.end_time) for r in chosen]
    sys.stdout.write(format_sacct(chosen, query.fields, now, query.parsable, query.header,
                                  query.delimiter or "|", query.allocations_only))
    return 0


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Console entry point."""
    exit_with(run_command(COMMAND, _main, argv))
