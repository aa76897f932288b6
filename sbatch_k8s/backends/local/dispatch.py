"""One look of the local scheduler at the pending jobs: which start now, why the others wait.

Pending jobs are taken in priority order (Slurm's priority/basic: submission order, which is
job id order). A job starts when it is eligible (not held, its begin time reached, its
dependencies satisfied — :func:`~sbatch_k8s.backends.local.waiting.eligibility`), its
array's ``%`` limit allows one more element, and its CPUs, GPUs and memory fit beside the
running jobs (:class:`~sbatch_k8s.backends.local.capacity.Capacity`). A job that does not
fit does not stop smaller jobs behind it from starting; the elements of one array start in
index order (the first that cannot start holds back the rest of its array).

Deciding reads the database; starting is one short write transaction in which each chosen
row goes from PENDING to RUNNING only if it is still PENDING and not held — a job cancelled
or held meanwhile is left alone, and no job is ever started twice.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

from parsers.job_records import CANCELLED, PENDING, RUNNING
from sbatch_k8s.backends.local.capacity import Capacity, gpu_ids_text, local_cpus
from sbatch_k8s.backends.local.waiting import BEGIN_TIME, NEVER, eligibility
from translators.config import LocalConfig

RESOURCES = "Resources"
#: Columns a look needs of the running jobs, and of the pending ones.
RUNNING_COLUMNS = ("job_id, array_job_id, cpus, gpu_ids, mem_mb, mem_per_cpu, node_count, "
                   "exclusive")
PENDING_COLUMNS = ("job_id, array_job_id, array_task_id, array_max_running, hold, begin_time, "
                   "dependency, kill_on_invalid_dep, reason, cpus, gpus, node_count, mem_mb, "
                   "mem_per_cpu, name, uid, restarts, exclusive")
#: The pending jobs a look considers, in priority order. Left out in SQL (so that 10,000
#: jobs waiting for resources cost milliseconds, not a Python loop): those already known to
#: wait for resources, with nothing else to wait for, that do not fit in what is free now —
#: nothing this look does can change their state or reason.
PENDING_SQL = (f"SELECT {PENDING_COLUMNS} FROM jobs WHERE state='PENDING' AND hold=0 AND NOT ("
               "reason='Resources' AND COALESCE(dependency, '')='' AND (begin_time IS NULL OR "
               "begin_time <= :now) AND ((CASE WHEN exclusive='node' THEN :pool ELSE cpus END) "
               "> :cpus OR COALESCE(gpus, 0) * (CASE WHEN exclusive='node' THEN 1 ELSE "
               "node_count END) > :gpus "
               "OR (:mem >= 0 AND COALESCE(mem_mb, 0) * (CASE WHEN mem_per_cpu = 1 THEN cpus "
               "ELSE node_count END) > :mem))) ORDER BY job_id")


@dataclass
class Look:
    """What one look decided."""

    #: Rows now RUNNING in the database, with their GPU ids per node: to launch.
    started: List[Tuple[sqlite3.Row, List[List[int]]]] = field(default_factory=list)
    #: Jobs cancelled because their dependencies can never be satisfied.
    cancelled: List[int] = field(default_factory=list)
    #: The earliest begin time still ahead (when to look again without news).
    next_due: Optional[float] = None


def _running(conn: sqlite3.Connection) -> List[sqlite3.Row]:
    return list(conn.execute(f"SELECT {RUNNING_COLUMNS} FROM jobs WHERE state=?", (RUNNING,)))


def _decide(conn: sqlite3.Connection, config: LocalConfig, now: float, look: Look
            ) -> Tuple[List[Tuple[sqlite3.Row, List[List[int]]]], Dict[int, str]]:
    """The jobs to start and the reasons that change, from one read of the database."""
    running = _running(conn)
    capacity = Capacity(config, running)
    per_array: Dict[int, int] = {}
    for row in running:
        if row["array_job_id"] is not None:
            per_array[row["array_job_id"]] = per_array.get(row["array_job_id"], 0) + 1
    held_back: Set[int] = set()
    chosen: List[Tuple[sqlite3.Row, List[List[int]]]] = []
    reasons: Dict[int, str] = {}
    pending = conn.execute(PENDING_SQL, {
        "now": now, "cpus": capacity.free_cpus, "gpus": len(capacity.free_gpus),
        "pool": local_cpus(config),
        "mem": -1 if capacity.free_memory_mb is None else capacity.free_memory_mb,
    })  # streamed, not fetched at once: the first look after a mass release sees them all
    for row in pending:
        base = row["array_job_id"]
        if base is not None:
            limit = row["array_max_running"]
            if base in held_back or (limit and per_array.get(base, 0) >= limit):
                held_back.add(base)
                continue
        if row["dependency"] or (row["begin_time"] and now < row["begin_time"]):
            ok, reason = eligibility(conn, row, now)
        else:  # the common case, kept cheap: 10,000 pending jobs are looked at often
            ok, reason = True, "None"
        gpu_ids = capacity.take(row) if ok else None
        if gpu_ids is None:
            reason = reason if not ok else RESOURCES
            if reason == NEVER and row["kill_on_invalid_dep"]:
                look.cancelled.append(row["job_id"])
            elif reason != row["reason"]:
                reasons[row["job_id"]] = reason
            if reason == BEGIN_TIME:
                due = float(row["begin_time"])
                look.next_due = due if look.next_due is None else min(look.next_due, due)
            if base is not None:
                held_back.add(base)
            continue
        chosen.append((row, gpu_ids))
        if base is not None:
            per_array[base] = per_array.get(base, 0) + 1
    return chosen, reasons


def look_once(conn: sqlite3.Connection, config: LocalConfig) -> Look:
    """Decide, then record: RUNNING for the jobs that start, the new reasons of the others,
    CANCELLED for those ``--kill-on-invalid-dep`` ends."""
    look = Look()
    now = time.time()
    chosen, reasons = _decide(conn, config, now, look)
    if not chosen and not reasons and not look.cancelled:
        return look
    conn.execute("BEGIN IMMEDIATE")
    try:
        for row, gpu_ids in chosen:
            changed = conn.execute(
                "UPDATE jobs SET state=?, reason='None', start_time=?, gpu_ids=?, "
                "eligible_time=COALESCE(eligible_time, ?) WHERE job_id=? AND state=? AND hold=0",
                (RUNNING, now, gpu_ids_text(gpu_ids), now, row["job_id"], PENDING)).rowcount
            if changed:
                look.started.append((row, gpu_ids))
        # A job that waits for resources only is eligible (since now, if it had waited for a
        # dependency: submission gave it no eligible time).
        conn.executemany("UPDATE jobs SET reason=?, eligible_time=COALESCE(eligible_time, ?) "
                         "WHERE job_id=? AND state=? AND hold=0",
                         [(reason, now if reason == RESOURCES else None, job_id, PENDING)
                          for job_id, reason in reasons.items()])
        for job_id in list(look.cancelled):
            if not conn.execute("UPDATE jobs SET state=?, reason=?, start_time=?, "
                                "end_time=? WHERE job_id=? AND state=?",
                                (CANCELLED, NEVER, now, now, job_id, PENDING)).rowcount:
                look.cancelled.remove(job_id)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return look
