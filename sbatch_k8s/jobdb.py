"""The per-user job database: what sbatch submitted, what happened, for squeue and sacct.

SQLite under the state directory (``$SBATCHK8S_STATE_DIR``, else
``$XDG_STATE_HOME/sbatch-k8s``, else ``~/.local/state/sbatch-k8s``), in WAL mode with a busy
timeout so concurrent commands and the scheduler never corrupt or lose a write. The database
is the truth the local scheduler (:mod:`sbatch_k8s.backends.local.scheduler`) works from:
a pending job is a row, nothing more. sqlite-utils
creates and migrates the schema (once per schema version, tracked in ``user_version``); the
hot paths — sbatch, squeue — use plain SQL through :mod:`sqlite3` to stay fast.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import contextmanager
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence

from sbatch_k8s.paths import make_state_dir

SCHEMA_VERSION = 7
BUSY_TIMEOUT_MS = 30000

JOB_COLUMNS: Dict[str, type] = {
    "job_id": int, "array_job_id": int, "array_task_id": int, "name": str, "user": str,
    "uid": int, "grp": str, "gid": int, "partition": str, "account": str, "qos": str,
    "state": str, "reason": str, "submit_time": float, "eligible_time": float,
    "start_time": float, "end_time": float, "time_limit_min": int, "node_count": int,
    "node_list": str, "batch_host": str, "cpus": int, "gpus": int, "gpu_ids": str,
    "ntasks": int, "cpus_per_task": int, "ntasks_per_node": int, "mem_mb": int,
    "mem_per_cpu": int, "exit_code": int, "exit_signal": int, "derived_exit_code": int,
    "cancelled_by": int,
    "dependency": str, "kill_on_invalid_dep": int, "hold": int, "begin_time": float,
    "priority": int, "nice": int, "work_dir": str, "command": str, "stdout": str,
    "stderr": str, "stdin": str, "job_dir": str, "node0_pid": int, "node_pids": str,
    "array_spec": str, "array_max_running": int, "comment": str, "exclusive": str,
    "submit_host": str, "features": str, "requeue": int, "port": int, "batch_cpus": int,
    # Requeue (backends/local/requeue.py): runs so far, a requeue asked of the running job
    # (``requeue`` or ``hold``), and the earlier runs as sacct --duplicates lists them.
    "restarts": int, "requeue_request": str, "requeued_runs": str,
    # 0 for the job of an ``srun`` outside a job (Slurm's BatchFlag=0; never requeued).
    "batch_flag": int,
}
STEP_COLUMNS: Dict[str, type] = {
    "job_id": int, "step_id": str, "name": str, "state": str, "exit_code": int,
    "exit_signal": int, "start_time": float, "end_time": float, "node_list": str,
    "node_count": int, "ntasks": int, "cpus": int, "seq": int,
    # The step's resource usage (parsers.step_usage.StepUsage.to_json, as JSON text).
    "usage": str,
}


def _create_schema(path: str) -> None:
    """Create or migrate the schema with sqlite-utils, once: any number of commands may
    find a new (or older) database at the same moment — a workflow manager starts with
    several at once — so they take turns on a lock file beside it, and whoever comes after
    the first finds the version current and leaves. Every connection waits for SQLite's
    locks (``journal_mode=WAL`` needs the database to itself for a moment)."""
    import fcntl

    with open(f"{path}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        try:
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                _migrate(conn)
        finally:
            conn.close()


def _migrate(conn: sqlite3.Connection) -> None:
    """The schema of :data:`SCHEMA_VERSION` on ``conn`` (under the lock file)."""
    import sqlite_utils

    db = sqlite_utils.Database(conn)
    db.execute("PRAGMA journal_mode=WAL")
    db["counters"].create({"name": str, "value": int}, pk="name", if_not_exists=True)
    db["jobs"].create(JOB_COLUMNS, pk="job_id", if_not_exists=True)
    db["steps"].create(STEP_COLUMNS, pk=("job_id", "step_id"), if_not_exists=True)
    jobs = db["jobs"]
    for column, kind in JOB_COLUMNS.items():
        if column not in jobs.columns_dict:
            jobs.add_column(column, kind)
    steps = db["steps"]
    for column, kind in STEP_COLUMNS.items():
        if column not in steps.columns_dict:
            steps.add_column(column, kind)
    jobs.create_index(["state"], if_not_exists=True)
    jobs.create_index(["state", "hold"], if_not_exists=True)
    jobs.create_index(["array_job_id"], if_not_exists=True)
    jobs.create_index(["end_time"], if_not_exists=True)
    db.execute("INSERT OR IGNORE INTO counters (name, value) VALUES ('job_id', 0)")
    db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")


def connect(environ: Mapping[str, str]) -> sqlite3.Connection:
    """A connection to the job database, creating it on first use. An unusable state
    directory or database is a :class:`~sbatch_k8s.operation_errors.ConfigurationError` naming the
    path."""
    path = os.path.join(make_state_dir(environ), "jobs.db")
    try:
        return _open(path)
    except sqlite3.Error as e:
        from sbatch_k8s.operation_errors import ConfigurationError

        raise ConfigurationError(f"job database {path}: {e}") from e


@contextmanager
def opened(environ: Mapping[str, str]) -> Iterator[sqlite3.Connection]:
    """:func:`connect`, closed on leaving. Every short use takes this: a connection sits in
    a reference cycle (its statement cache calls it), so one merely dropped keeps its file
    descriptors until a full garbage collection, and a command looking every second (``logs
    -f``, a console) would pile them up."""
    conn = connect(environ)
    try:
        yield conn
    finally:
        conn.close()


def _open(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
        conn.close()
        _create_schema(path)
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.row_factory = sqlite3.Row
    return conn


def allocate_job_ids(conn: sqlite3.Connection, count: int = 1) -> int:
    """Reserve ``count`` consecutive job ids atomically; returns the first."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        first = conn.execute("SELECT value FROM counters WHERE name='job_id'").fetchone()[0] + 1
        conn.execute("UPDATE counters SET value=? WHERE name='job_id'", (first + count - 1,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return int(first)


def insert_jobs(conn: sqlite3.Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert job rows in one transaction."""
    if not rows:
        return
    columns = list(rows[0])
    sql = (f"INSERT INTO jobs ({', '.join(columns)}) VALUES "
           f"({', '.join('?' for _ in columns)})")
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany(sql, ([row[c] for c in columns] for row in rows))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def update_job(conn: sqlite3.Connection, job_id: int, **values: Any) -> None:
    """Set columns of one job."""
    assignments = ", ".join(f"{k}=?" for k in values)
    conn.execute(f"UPDATE jobs SET {assignments} WHERE job_id=?", (*values.values(), job_id))


def get_job(conn: sqlite3.Connection, job_id: int) -> Optional[sqlite3.Row]:
    """One job row, or None."""
    return conn.execute("SELECT * FROM jobs WHERE job_id=?", (job_id,)).fetchone()


def select_jobs(conn: sqlite3.Connection, where: str = "", params: Iterable[Any] = (),
                order: str = "job_id") -> List[sqlite3.Row]:
    """Job rows matching a WHERE clause."""
    clause = f" WHERE {where}" if where else ""
    return list(conn.execute(f"SELECT * FROM jobs{clause} ORDER BY {order}", tuple(params)))


def put_step(conn: sqlite3.Connection, row: Mapping[str, Any]) -> None:
    """Insert or replace one step row."""
    columns = list(row)
    conn.execute(f"INSERT OR REPLACE INTO steps ({', '.join(columns)}) VALUES "
                 f"({', '.join('?' for _ in columns)})", [row[c] for c in columns])


def steps_of(conn: sqlite3.Connection, job_ids: Sequence[int]) -> Dict[int, List[sqlite3.Row]]:
    """Step rows of the given jobs, per job, in sacct's order."""
    found: Dict[int, List[sqlite3.Row]] = {j: [] for j in job_ids}
    if not job_ids:
        return found
    for chunk_start in range(0, len(job_ids), 500):
        chunk = list(job_ids[chunk_start:chunk_start + 500])
        marks = ", ".join("?" for _ in chunk)
        for row in conn.execute(f"SELECT * FROM steps WHERE job_id IN ({marks}) "
                                "ORDER BY job_id, seq", chunk):
            found[row["job_id"]].append(row)
    return found
