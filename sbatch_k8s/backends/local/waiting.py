"""Why a pending local job waits, and waiting for a job to end (``sbatch --wait``).

Eligibility follows Slurm: a held job waits (``JobHeldUser``) until released; a ``--begin``
job until its time (``BeginTime``); a job with dependencies until they are satisfied
(``Dependency``), or for ever once they cannot be (``DependencyNeverSatisfied``, or
cancelled with ``--kill-on-invalid-dep=yes``).
"""

from __future__ import annotations

import sqlite3
from functools import lru_cache
from typing import Any, List, Mapping, Optional, Tuple

from parsers.records import COMPLETED, PENDING, RUNNING
from sbatch_k8s import jobdb

TERMINAL = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
            "PREEMPTED", "BOOT_FAIL", "DEADLINE")
HELD, DEPENDENCY, BEGIN_TIME, NEVER = ("JobHeldUser", "Dependency", "BeginTime",
                                       "DependencyNeverSatisfied")


def _targets(conn: sqlite3.Connection, job_id: int, task: Optional[int]) -> List[sqlite3.Row]:
    """The jobs a dependency target names: a job, a whole array, or one array element."""
    if task is not None:
        return jobdb.select_jobs(conn, "array_job_id=? AND array_task_id=?", (job_id, task))
    rows = jobdb.select_jobs(conn, "array_job_id=?", (job_id,))
    return rows or jobdb.select_jobs(conn, "job_id=?", (job_id,))


def _clause_state(conn: sqlite3.Connection, row: sqlite3.Row, clause: object,
                  now: float) -> str:
    """``ok``, ``wait`` or ``never`` for one dependency clause."""
    kind = getattr(clause, "kind")
    if kind == "singleton":
        others = conn.execute(
            "SELECT COUNT(*) FROM jobs WHERE name=? AND uid=? AND job_id<? AND state IN (?, ?)",
            (row["name"], row["uid"], row["job_id"], PENDING, RUNNING)).fetchone()[0]
        return "wait" if others else "ok"
    verdicts = []
    for target in getattr(clause, "targets"):
        task = target.array_task_id
        if kind == "aftercorr" and task is None and row["array_task_id"] is not None:
            task = row["array_task_id"]
        jobs = _targets(conn, target.job_id, task)
        if not jobs:
            verdicts.append("never")
            continue
        for job in jobs:
            verdicts.append(_target_state(kind, job, target.delay_min, now))
    if "never" in verdicts:
        return "never"
    return "wait" if "wait" in verdicts else "ok"


def _target_state(kind: str, job: sqlite3.Row, delay_min: int, now: float) -> str:
    state = job["state"]
    done = state in TERMINAL
    if kind == "after":
        started = job["start_time"] if job["start_time"] else (now if done else None)
        if started is None:
            return "wait"
        return "ok" if now >= started + 60 * delay_min else "wait"
    if not done:
        return "wait"
    if kind in ("afterok", "aftercorr"):
        return "ok" if state == COMPLETED else "never"
    if kind == "afternotok":
        return "never" if state == COMPLETED else "ok"
    return "ok"


@lru_cache(maxsize=4096)
def _parsed(expression: str) -> Any:
    """A ``--dependency`` expression, parsed once per scheduler (they repeat)."""
    from parsers.values.dependency import parse_dependency

    return parse_dependency(expression)


def dependency_state(conn: sqlite3.Connection, row: sqlite3.Row, now: float) -> str:
    """``ok``, ``wait`` or ``never`` for the job's whole ``--dependency`` expression."""
    if not row["dependency"]:
        return "ok"
    spec = _parsed(row["dependency"])
    states = [_clause_state(conn, row, clause, now) for clause in spec.clauses]
    if spec.require_all:
        return "never" if "never" in states else ("wait" if "wait" in states else "ok")
    return "ok" if "ok" in states else ("never" if all(s == "never" for s in states)
                                        else "wait")


def eligibility(conn: sqlite3.Connection, row: sqlite3.Row, now: float) -> Tuple[bool, str]:
    """Whether a pending job may start now, and its reason if not."""
    if row["hold"]:
        return False, HELD
    if row["begin_time"] and now < row["begin_time"]:
        return False, BEGIN_TIME
    verdict = dependency_state(conn, row, now)
    if verdict == "never":
        return False, NEVER
    if verdict == "wait":
        return False, DEPENDENCY
    return True, "None"


#: How often a waiter looks at the database without a wake-up (the scheduler may have died).
WAIT_LOOK_S = 1.0


def exit_code_of(rows: List[sqlite3.Row]) -> int:
    """sbatch --wait's exit code for these finished jobs: the job's (a signal → 1), for an
    array the highest."""
    codes = []
    for row in rows:
        code = int(row["exit_code"] or 0)
        if row["exit_signal"] or (row["state"] != COMPLETED and code == 0):
            code = 1
        codes.append(code)
    return max(codes) if codes else 0


def unfinished(conn: sqlite3.Connection, job_id: int) -> bool:
    """Whether the job (or an element of the array) ``job_id`` is still pending or running."""
    marks = ", ".join("?" for _ in TERMINAL)
    return bool(conn.execute(
        f"SELECT EXISTS(SELECT 1 FROM jobs WHERE (job_id=? OR array_job_id=?) AND state NOT "
        f"IN ({marks}))", (job_id, job_id, *TERMINAL)).fetchone()[0])


def wait_for_job(environ: Mapping[str, str], job_id: int) -> int:
    """Block until the job (every element of the array) ``job_id`` has ended; the exit code
    sbatch --wait returns. Woken by the scheduler when jobs end; it also looks every
    :data:`WAIT_LOOK_S` and restarts the scheduler if it died."""
    from sbatch_k8s.backends.local.wakeup import Waiter, ensure_scheduler

    conn = jobdb.connect(environ)
    waiter = Waiter(environ)
    try:
        while unfinished(conn, job_id):
            ensure_scheduler(environ, nudge=False, conn=conn)
            waiter.wait(WAIT_LOOK_S)
        return exit_code_of(jobdb.select_jobs(conn, "job_id=? OR array_job_id=?",
                                              (job_id, job_id)))
    finally:
        waiter.close()
        conn.close()
