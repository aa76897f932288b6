"""``sacct``: the accounting records of local jobs (with their steps), as Slurm prints them.

Slurm's window rules apply (``-S``/``-E``; with ``-j`` alone everything; by default jobs
since midnight); finished jobs stay in the database after squeue has forgotten them.
"""

from __future__ import annotations

import os
import sys
import time
from typing import List, Optional, Sequence

from sbatch_k8s.cli.common import exit_with, run_command

COMMAND = "sacct"


def _where(query: object) -> "tuple[str, list]":
    """SQL for the window and the job list (finer filters are applied in Python)."""
    clauses = ["(end_time IS NULL OR end_time >= ?)", "submit_time < ?"]
    params: list = [getattr(query, "start_time"), getattr(query, "end_time")]
    jobs = getattr(query, "jobs")
    if jobs is not None:
        ids = [j.job_id for j in jobs]
        marks = ", ".join("?" for _ in ids)
        clauses.append(f"(job_id IN ({marks}) OR array_job_id IN ({marks}))")
        params += ids + ids
    return " AND ".join(clauses), params


def _keep(record: object, query: object, uids: "Optional[set]") -> bool:
    if uids is not None and getattr(record, "uid") not in uids:
        return False
    for attr, field in (("names", "name"), ("partitions", "partition"), ("accounts", "account"),
                        ("qos", "qos")):
        wanted = getattr(query, attr)
        if wanted is not None and getattr(record, field) not in wanted:
            return False
    states = getattr(query, "states")
    if states is not None and getattr(record, "state") not in states:
        return False
    jobs = getattr(query, "jobs")
    if jobs is not None and not any(
            j.job_id == getattr(record, "job_id") or (
                j.job_id == getattr(record, "array_job_id") and
                j.array_task_id in (None, getattr(record, "array_task_id")))
            for j in jobs):
        return False
    return True


def _main(argv: List[str]) -> int:
    from parsers.formats.sacct import format_sacct
    from parsers.report_options.sacct import parse_sacct_args
    from sbatch_k8s import jobdb
    from sbatch_k8s.backends.local.layout import job_dir_of
    from sbatch_k8s.backends.local.records import accounting_records
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
    where, params = _where(query)
    records = accounting_records(jobdb.connect(environ), where, params, config.cluster_name,
                                 lambda job_id: job_dir_of(environ, job_id))
    uids = None if query.all_users or query.jobs is not None else resolve_users(
        COMMAND, query.users, not query.users)
    chosen = [r for r in records if _keep(r, query, uids)]
    sys.stdout.write(format_sacct(chosen, query.fields, now, query.parsable, query.header,
                                  query.delimiter or "|", query.allocations_only))
    return 0


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Console entry point."""
    exit_with(run_command(COMMAND, _main, argv))
