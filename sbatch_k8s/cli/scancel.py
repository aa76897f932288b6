"""``scancel``: cancel or signal local jobs, with Slurm's selection rules and messages.

Without ``--signal`` a job is cancelled (SIGTERM to its steps and batch shell, SIGKILL
after KillWait; state CANCELLED). With ``--signal`` only the steps get it, or the batch
shell with ``-b``, or both and the shell's children with ``-f``. ``<job>.<step>`` cancels
(SIGKILL) or signals one step. Unknown or finished jobs are silent (Slurm says so only with
``-v``), as in Slurm 22.05.
"""

from __future__ import annotations

import os
import sys
from typing import Iterable, List, Optional, Sequence

from sbatch_k8s.cli.common import exit_with, run_command

COMMAND = "scancel"


def _matching_ids(request: object, environ: object) -> List[int]:
    """Job ids selected by scancel's filters (no ids given)."""
    from sbatch_k8s import jobdb
    from sbatch_k8s.backends.local.records import ACTIVE_STATES
    from sbatch_k8s.cli.user_ids import resolve_users

    conn = jobdb.connect(environ)  # type: ignore[arg-type]
    marks = ", ".join("?" for _ in ACTIVE_STATES)
    rows = jobdb.select_jobs(conn, f"state IN ({marks})", ACTIVE_STATES)
    users = resolve_users(COMMAND, [getattr(request, "user")] if getattr(request, "user")
                          else None, bool(getattr(request, "me")))
    chosen = []
    for row in rows:
        checks = (("name", row["name"]), ("partition", row["partition"]),
                  ("account", row["account"]), ("qos", row["qos"]))
        if any(getattr(request, key) and value not in str(getattr(request, key)).split(",")
               for key, value in checks):
            continue
        if getattr(request, "state") and row["state"] != getattr(request, "state"):
            continue
        if users is not None and row["uid"] not in users:
            continue
        chosen.append(row["job_id"])
    return chosen


def _targets(conn: object, job_id: int, task: Optional[int]) -> Iterable[int]:
    """Job ids a scancel id means: a job, all elements of an array, or one element."""
    from sbatch_k8s import jobdb

    if task is not None:
        rows = jobdb.select_jobs(conn, "array_job_id=? AND array_task_id=?",  # type: ignore
                                 (job_id, task))
        return [r["job_id"] for r in rows]
    rows = jobdb.select_jobs(conn, "array_job_id=?", (job_id,))  # type: ignore[arg-type]
    return [r["job_id"] for r in rows] or [job_id]


def _main(argv: List[str]) -> int:
    from parsers.formats.messages import kill_job_error
    from parsers.report_options.scancel import parse_scancel_args, verbose_line
    from sbatch_k8s import jobdb
    from sbatch_k8s.cli.cancel_local import cancel_job
    from sbatch_k8s.cli.help_text import report_action

    environ = os.environ
    request = parse_scancel_args(argv, environ)
    if request.action:
        sys.stdout.write(report_action(COMMAND, request.action))
        return 0
    for line in request.warnings:
        sys.stderr.write(f"{COMMAND}: {line}\n")
    conn = jobdb.connect(environ)
    code = 0
    selections = [(j.job_id, j.array_task_id, str(j), j.step) for j in request.jobs]
    if not selections:
        selections = [(job_id, None, str(job_id), None) for job_id in
                      _matching_ids(request, environ)]
    for job_id, task, text, step in selections:
        if request.verbose > 0:
            sys.stderr.write(verbose_line(request, text, step))
        batch = request.batch or step == "batch"
        number = int(step) if step is not None and step.isdecimal() else None
        outcomes = [cancel_job(environ, target, os.getuid(), request.signal, batch,
                               request.full, number)
                    for target in _targets(conn, job_id, task)]
        if all(o == "done" for o in outcomes) and outcomes:
            continue
        reason = ("Invalid job id specified" if "unknown" in outcomes else
                  "Job/step already completing or completed")
        error = kill_job_error(text, step is not None, request.signal is not None, reason)
        if error.exit_code or request.verbose > 0:
            sys.stderr.write(error.render(COMMAND))
        code = max(code, error.exit_code)
    return code


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Console entry point."""
    exit_with(run_command(COMMAND, _main, argv))
