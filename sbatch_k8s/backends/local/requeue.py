"""``scontrol requeue`` and ``requeuehold`` of local jobs: the job runs again under its id.

As slurmctld does it (``_job_requeue_op``):

* a running job is killed as scancel kills it (slurmstepd's line saying ``DUE TO JOB
  REQUEUE``); when the scheduler records its end
  (:func:`record_end`), the run is kept as an earlier run ended ``REQUEUED`` instead;
* a job that already ended (within MinJobAge, while squeue still shows it) is requeued at
  once;
* the requeued job is ``PENDING`` again with its restart count one higher, its submit time
  now and reason ``BeginTime``: Slurm lets it start only after its credentials of the earlier
  run expired (``begin_time`` = now + :func:`requeue_delay_s`, 121 s by default as
  slurmctld's; ``SBATCHK8S_REQUEUE_DELAY`` sets it in seconds); with ``requeuehold`` it is
  also held (reason ``job requeued in held state``, as user hold) until ``scontrol release``;
* the earlier run (its row as it ended, state ``REQUEUED``, end time now, and its steps) is
  kept in the row's ``requeued_runs`` for ``sacct --duplicates``, and its node files move to
  ``requeued-<n>/`` in the job directory, so that the next run starts with clean ones.

The machine requeues too, as slurmctld requeues a job on a node's failure and on preemption
with ``PreemptMode=REQUEUE``: a job that may be requeued (``--requeue``, or Slurm's default
JobRequeue=1; not ``--no-requeue``; never the job of an ``srun`` outside a job, a batch job
here but not in Slurm) whose run ended ``NODE_FAIL`` (a node process other than node 0
died: node 0 lost it) or ``PREEMPTED`` (one was stopped by SIGTERM or SIGINT and said so
before it went) — :data:`REQUEUED_ENDS` — is requeued by the scheduler process the moment it
records that end (:func:`record_end`; no command needs to run), the run kept in
``requeued_runs`` as it ended (its state, end time, exit code and steps), the job pending
with reason ``BeginTime`` for the delay of its submitter's ``SBATCHK8S_REQUEUE_DELAY`` (kept
with the job's launch settings; 121 s without). A ``--no-requeue`` job stays so.

The next run gets ``SLURM_RESTART_COUNT`` and ``%r`` from ``restart_count`` in its
``job.json`` (:func:`~sbatch_k8s.backends.local.supervisor.launch`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from typing import Any, Dict, List, Mapping, Optional

from parsers.job_records import PENDING, REQUEUED, RUNNING
from sbatch_k8s import jobdb
from sbatch_k8s.backends.base import BATCH_ONLY, DISABLED, DONE, NOT_STARTED, UNKNOWN
from sbatch_k8s.backends.local.node_processes import ElementRun
from sbatch_k8s.backends.local.records import MIN_JOB_AGE_S
from sbatch_k8s.backends.requeue_rules import (
    DEFAULT_REQUEUE_DELAY_S,
    REQUEUED_ENDS,
    requeue_delay_s,
)
from sbatch_k8s.runtime.cluster.release import HELD_REQUEUE_REASON

#: The requests a running job carries until its end is recorded (:func:`_request`).
REQUEUE, REQUEUE_HOLD = "requeue", "hold"
#: Columns of a run that are not the run's own (the requeue bookkeeping).
BOOKKEEPING = ("requeued_runs", "requeue_request")


def earlier_runs(row: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """The earlier runs a row keeps: each ``{"row": …, "steps": […]}``, oldest first."""
    text = row["requeued_runs"] if "requeued_runs" in row.keys() else None
    return list(json.loads(text)) if text else []


def _keep_node_files(job_dir: str, restarts: int) -> None:
    """Move the run's node files (``node-*``) to ``requeued-<restarts>/``."""
    try:
        names = [n for n in os.listdir(job_dir) if n.startswith("node-")]
    except OSError:
        return
    if not names:
        return
    kept = os.path.join(job_dir, f"requeued-{restarts}")
    os.makedirs(kept, mode=0o700, exist_ok=True)
    for name in names:
        os.replace(os.path.join(job_dir, name), os.path.join(kept, name))


def _requeue_ended(conn: sqlite3.Connection, row: sqlite3.Row, hold: bool, now: float,
                   delay_s: float, killed: bool, as_ended: bool = False) -> None:
    """Keep the ended run of ``row`` as an earlier run and make the job pending again
    (inside the caller's transaction). ``killed``: the requeue ended the run, which then
    keeps exit code 0:0 as in slurmctld (its batch step shows the signal). ``as_ended``:
    the machine ended the run (:data:`REQUEUED_ENDS`), which is kept as it ended; else it
    is kept ``REQUEUED`` at ``now``."""
    job_id = row["job_id"]
    held_before = bool(row["hold"]) and row["start_time"] is None  # cancelled while held
    reason = HELD_REQUEUE_REASON if hold else row["reason"] if held_before else "BeginTime"
    run = {k: row[k] for k in row.keys() if k not in BOOKKEEPING}
    if not as_ended:
        run.update(state=REQUEUED, end_time=now)
    if killed:
        run.update(exit_code=0, exit_signal=0, derived_exit_code=0, cancelled_by=None)
    steps = [dict(zip(s.keys(), s)) for s in jobdb.steps_of(conn, [job_id])[job_id]]
    runs = earlier_runs(row) + [{"row": run, "steps": steps}]
    conn.execute("DELETE FROM steps WHERE job_id=?", (job_id,))
    restarts = int(row["restarts"] or 0) + 1
    jobdb.update_job(
        conn, job_id, state=PENDING, reason=reason, hold=1 if hold or held_before else 0,
        restarts=restarts, submit_time=now, eligible_time=now + delay_s,
        begin_time=now + delay_s, start_time=None, end_time=None, exit_code=0, exit_signal=0,
        derived_exit_code=0, cancelled_by=None, node_list="", batch_host="", port=None,
        node0_pid=None, node_pids=None, gpu_ids="", requeue_request=None,
        requeued_runs=json.dumps(runs, sort_keys=True, separators=(",", ":")))
    if row["job_dir"]:
        _keep_node_files(row["job_dir"], restarts)


def requeue_job(environ: Mapping[str, str], job_id: int, hold: bool) -> str:
    """``scontrol requeue``/``requeuehold`` of one job (or array element): ``done``,
    ``pending`` for a job not started, ``disabled`` for one submitted with
    ``--no-requeue``, ``unknown`` for no such job (or one ended before MinJobAge)."""
    from sbatch_k8s.backends.local.wakeup import ensure_scheduler, wake_waiters
    from sbatch_k8s.paths import state_dir

    with jobdb.opened(environ) as conn:
        now = time.time()
        conn.execute("BEGIN IMMEDIATE")
        try:
            row = jobdb.get_job(conn, job_id)
            outcome = _outcome(row, now)
            if outcome == DONE and row["state"] == RUNNING:
                jobdb.update_job(conn, job_id, requeue_request=_request(hold, environ))
            elif outcome == DONE:
                _requeue_ended(conn, row, hold, now, requeue_delay_s(environ), killed=False)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        if outcome != DONE:
            return outcome
        ensure_scheduler(environ, conn=conn)
        if row["state"] == RUNNING:
            _kill(conn, job_id)
        else:
            wake_waiters(state_dir(environ))
        return DONE


def _kill(conn: sqlite3.Connection, job_id: int) -> None:
    """End the running job as scancel does (a job that ended meanwhile has its end recorded
    as requeued all the same)."""
    from sbatch_k8s.backends.local.control import send_while_running

    send_while_running(conn, job_id, {"type": "cancel", "signal": None, "batch": False,
                                      "full": False, "requeue": True})


def _request(hold: bool, environ: Mapping[str, str]) -> str:
    """What a running job carries until its end: ``requeue <delay>`` or ``hold <delay>``
    (the delay of the command that asked, not of whoever records the end)."""
    return f"{REQUEUE_HOLD if hold else REQUEUE} {requeue_delay_s(environ)}"


def _outcome(row: Optional[sqlite3.Row], now: float) -> str:
    """What a requeue of ``row`` does, before it does it."""
    if row is None or (row["end_time"] is not None and row["state"] != RUNNING
                       and row["end_time"] < now - MIN_JOB_AGE_S):
        return UNKNOWN
    if row["batch_flag"] == 0:
        return BATCH_ONLY
    if not row["requeue"]:
        return DISABLED
    if row["state"] == PENDING:
        return NOT_STARTED
    return DONE


def record_end(conn: sqlite3.Connection, run: ElementRun) -> None:
    """The scheduler's recording of a job's end: as it ended, or as an earlier run with the
    job pending again — when a requeue was asked of it while it ran (kept ``REQUEUED``), or
    when the machine ended a job that may be requeued (kept as it ended; module docstring)
    — in one transaction, so no reader ever sees a requeued run as the job's end."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        run.finish(conn)
        row = jobdb.get_job(conn, run.job_id)
        if row is not None and row["requeue_request"]:
            kind, _, delay = str(row["requeue_request"]).partition(" ")
            _requeue_ended(conn, row, kind == REQUEUE_HOLD, time.time(),
                           float(delay or DEFAULT_REQUEUE_DELAY_S), killed=True)
        elif row is not None and row["requeue"] and row["batch_flag"] != 0 \
                and row["state"] in REQUEUED_ENDS:
            _requeue_ended(conn, row, False, time.time(), requeue_delay_s(run.settings),
                           killed=False, as_ended=True)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
