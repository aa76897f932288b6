"""Cancelling and signalling local jobs: the work behind scancel (and srun's Ctrl-C)."""

from __future__ import annotations

import time
from typing import Mapping, Optional

from parsers.job_records import CANCELLED, PENDING, RUNNING
from sbatch_k8s import jobdb
from sbatch_k8s.backends.local.control import send_while_running
from sbatch_k8s.backends.local.wakeup import ensure_scheduler, wake_waiters
from sbatch_k8s.paths import state_dir


def cancel_job(environ: Mapping[str, str], job_id: int, uid: int,
               signum: Optional[int] = None, batch: bool = False, full: bool = False,
               step: Optional[int] = None) -> str:
    """Cancel (or, with ``signum``, signal) one job or one of its steps; ``done``,
    ``finished`` or ``unknown``."""
    with jobdb.opened(environ) as conn:
        row = jobdb.get_job(conn, job_id)
        if row is None:
            return "unknown"
        if step is not None:
            if row["state"] != RUNNING:
                return "finished"
            request = {"type": "cancel", "signal": signum, "step": step}
            return "done" if send_while_running(conn, job_id, request) else "finished"
        if row["state"] == PENDING:
            if signum is not None:
                return "done"
            if conn.execute("UPDATE jobs SET state=?, end_time=?, cancelled_by=? "
                            "WHERE job_id=? AND state=?", (CANCELLED, time.time(), uid, job_id,
                                                           PENDING)).rowcount:
                # Jobs depending on it, and whoever waits for it, learn now.
                ensure_scheduler(environ, conn=conn)
                wake_waiters(state_dir(environ))
                return "done"
            row = jobdb.get_job(conn, job_id)
        if row["state"] != RUNNING:
            return "finished"
        if signum is None:
            jobdb.update_job(conn, job_id, cancelled_by=uid)
        request = {"type": "cancel", "signal": signum, "batch": batch, "full": full}
        ensure_scheduler(environ, nudge=False, conn=conn)  # someone must record the end
        return "done" if send_while_running(conn, job_id, request) else "finished"


def signal_batch_shell(environ: Mapping[str, str], job_id: int, signum: int) -> None:
    """Deliver ``signum`` to the job's batch shell only (``scancel -b -s``)."""
    cancel_job(environ, job_id, 0, signum=signum, batch=True)
