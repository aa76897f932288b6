"""Why a pending local job waits, and waiting for a job to end (``sbatch --wait``).

Eligibility follows Slurm: a held job waits (``JobHeldUser``) until released; a ``--begin``
job until its time (``BeginTime``); a job with dependencies until they are satisfied
(``Dependency``), or for ever once they cannot be (``DependencyNeverSatisfied``, or
cancelled with ``--kill-on-invalid-dep=yes``).
"""

from __future__ import annotations

import sqlite3
from typing import Callable, List, Mapping, Optional, Tuple

from parsers.dependency_state import (
    TERMINAL,
    parsed_dependency,
    record_dependency,
    spec_verdict,
)
from parsers.job_records import COMPLETED, PENDING, RUNNING, JobRecord, with_changes
from sbatch_k8s import jobdb

HELD, DEPENDENCY, BEGIN_TIME, NEVER = ("JobHeldUser", "Dependency", "BeginTime",
                                       "DependencyNeverSatisfied")


def _targets(conn: sqlite3.Connection, job_id: int, task: Optional[int]
             ) -> List[Tuple[str, Optional[float]]]:
    """The jobs a dependency target names (a job, a whole array, or one array element): their
    state and start time."""
    if task is not None:
        rows = jobdb.select_jobs(conn, "array_job_id=? AND array_task_id=?", (job_id, task))
    else:
        rows = jobdb.select_jobs(conn, "array_job_id=?", (job_id,)) or \
            jobdb.select_jobs(conn, "job_id=?", (job_id,))
    return [(row["state"], row["start_time"]) for row in rows]


def _singleton_waits(conn: sqlite3.Connection, name: str, uid: int, job_id: int
                     ) -> Callable[[], bool]:
    """Whether an earlier pending or running job has this name and uid (``singleton``)."""
    return lambda: bool(conn.execute(
        "SELECT COUNT(*) FROM jobs WHERE name=? AND uid=? AND job_id<? AND state IN (?, ?)",
        (name, uid, job_id, PENDING, RUNNING)).fetchone()[0])


def dependency_state(conn: sqlite3.Connection, row: sqlite3.Row, now: float) -> str:
    """``ok``, ``wait`` or ``never`` for the job's whole ``--dependency`` expression
    (:mod:`parsers.dependency_state` decides; this supplies the database's jobs)."""
    if not row["dependency"]:
        return "ok"

    return spec_verdict(parsed_dependency(row["dependency"]), row["array_task_id"],
                        lambda job_id, task: _targets(conn, job_id, task),
                        _singleton_waits(conn, row["name"], row["uid"], row["job_id"]), now)


def eligibility(conn: sqlite3.Connection, row: sqlite3.Row, now: float) -> Tuple[bool, str]:
    """Whether a pending job may start now, and its reason if not — as slurmctld: held,
    then its dependency, then its begin time (a job with both shows ``Dependency`` until the
    dependency is met, checked against real Slurm 22.05)."""
    if row["hold"]:
        return False, HELD
    verdict = dependency_state(conn, row, now)
    if verdict == "never":
        return False, NEVER
    if verdict == "wait":
        return False, DEPENDENCY
    if row["begin_time"] and now < row["begin_time"]:
        return False, BEGIN_TIME
    return True, "None"


def with_shown_dependencies(conn: sqlite3.Connection, records: List[JobRecord],
                            now: float) -> List[JobRecord]:
    """The records with their dependency as squeue ``%E`` shows it: each item not yet met
    with its state (:func:`parsers.dependency_state.record_dependency`)."""
    def names_array(job_id: int) -> bool:
        return conn.execute("SELECT 1 FROM jobs WHERE array_job_id=? LIMIT 1",
                            (job_id,)).fetchone() is not None

    def shown(record: JobRecord) -> JobRecord:
        text = record_dependency(record, lambda job_id, task: _targets(conn, job_id, task),
                                 _singleton_waits(conn, record.name, record.uid,
                                                  record.job_id), names_array, now)
        return with_changes(record, dependency=text)

    return [shown(r) if r.dependency else r for r in records]


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

    with jobdb.opened(environ) as conn:
        waiter = Waiter(environ)
        try:
            while unfinished(conn, job_id):
                ensure_scheduler(environ, nudge=False, conn=conn)
                waiter.wait(WAIT_LOOK_S)
            return exit_code_of(jobdb.select_jobs(conn, "job_id=? OR array_job_id=?",
                                                  (job_id, job_id)))
        finally:
            waiter.close()
