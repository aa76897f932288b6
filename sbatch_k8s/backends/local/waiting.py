"""Why a pending local job waits, and waiting for a job to end (``sbatch --wait``).

Eligibility follows Slurm: a held job waits (``JobHeldUser``) until released; a ``--begin``
job until its time (``BeginTime``); a job with dependencies until they are satisfied
(``Dependency``), or for ever once they cannot be (``DependencyNeverSatisfied``, or
cancelled with ``--kill-on-invalid-dep=yes``).
"""

from __future__ import annotations

import fcntl
import sqlite3
from typing import IO, List, Optional, Tuple

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


def dependency_state(conn: sqlite3.Connection, row: sqlite3.Row, now: float) -> str:
    """``ok``, ``wait`` or ``never`` for the job's whole ``--dependency`` expression."""
    if not row["dependency"]:
        return "ok"
    from parsers.values.dependency import parse_dependency

    spec = parse_dependency(row["dependency"])
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


def hold_lock(lock_path: str) -> IO[bytes]:
    """Open and exclusively lock the supervisor's lock file (inherited by the child)."""
    handle = open(lock_path, "wb")
    fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
    return handle


def wait_for_job(conn: sqlite3.Connection, lock: IO[bytes], job_id: int) -> int:
    """Block until the supervisor of ``job_id`` is gone; the job's exit code as sbatch --wait
    returns it (signal → 1; arrays: the highest)."""
    path = lock.name
    lock.close()
    with open(path, "rb") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_SH)
    rows = jobdb.select_jobs(conn, "job_id=? OR array_job_id=?", (job_id, job_id))
    codes = []
    for row in rows:
        code = int(row["exit_code"] or 0)
        if row["exit_signal"] or (row["state"] != COMPLETED and code == 0):
            code = 1
        codes.append(code)
    return max(codes) if codes else 0
