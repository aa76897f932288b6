"""Local job database rows → the :class:`~parsers.job_records.JobRecord` the reports print.

Pending elements of an array that has not started them yet are shown as Slurm shows them:
one record for the rest (``1234_[5-1024%4]``), with ``JobArrayTaskLimit`` when the ``%``
limit holds them back. Slurm's priority numbers are reproduced in kind: held jobs 0, others a
large number falling with submission order, so ``-S -p`` orders like Slurm.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import replace
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from parsers.job_records import (
    COMPLETING,
    PENDING,
    REQUEUED,
    RUNNING,
    JobRecord,
    StepRecord,
    build,
    with_changes,
)
from parsers.step_usage import StepUsage
from sbatch_k8s import jobdb
from sbatch_k8s.runtime.batch_host.step_log import batch_usage, read_step_log

#: Slurm's priority of the first job (priority/basic: 2^32 - 2^16 - 1, one less per job).
PRIORITY_BASE = 4294901759
#: How long finished jobs stay visible to squeue (Slurm's MinJobAge).
MIN_JOB_AGE_S = 300
ACTIVE_STATES = ("PENDING", "RUNNING", "SUSPENDED", "COMPLETING", "CONFIGURING")


def _int(value: Optional[float]) -> Optional[int]:
    return int(value) if value is not None else None


def _step(row: sqlite3.Row) -> StepRecord:
    return build(
        StepRecord, step_id=row["step_id"], name=row["name"] or "", state=row["state"],
        exit_code=row["exit_code"] or 0, exit_signal=row["exit_signal"] or 0,
        start_time=_int(row["start_time"]), end_time=_int(row["end_time"]),
        node_list=row["node_list"] or "", node_count=row["node_count"] or 0,
        ntasks=row["ntasks"] or 0, cpus=row["cpus"] or 0,
        # what the step held (sacct AllocTRES): its CPUs on its nodes
        tres=f"cpu={row['cpus'] or 0},node={row['node_count'] or 0}" if row["cpus"] else "",
        usage=_usage(row["usage"]))


def _usage(text: Optional[str]) -> Optional[StepUsage]:
    """A step row's usage column (JSON text) as a record; None when empty or unreadable."""
    if not text:
        return None
    try:
        return StepUsage.from_json(json.loads(text))
    except ValueError:
        return None


def to_record(row: Union[sqlite3.Row, Dict[str, Any]], steps: Sequence[StepRecord] = (),
              cluster: str = "") -> JobRecord:
    """One database row as a record."""
    # The row's columns as a dict first: sqlite3.Row finds a name by scanning every column,
    # and this reads forty-odd of them per job, for every job squeue lists.
    col = dict(row) if isinstance(row, dict) else dict(zip(row.keys(), row))
    held = bool(col["hold"]) and col["state"] == PENDING
    state, reason = col["state"], col["reason"] or "None"
    restarts = col["restarts"] or 0
    if state == RUNNING and col.get("requeue_request"):
        # Killed to be requeued: slurmctld's PENDING|COMPLETING|REQUEUE, shown COMPLETING,
        # its restart count already raised by the requeue.
        state, reason, restarts = COMPLETING, "None", restarts + 1
    gpus = col["gpus"] or 0
    return build(
        JobRecord, job_id=col["job_id"], name=col["name"], user=col["user"], uid=col["uid"],
        group=col["grp"], gid=col["gid"], partition=col["partition"] or "debug",
        state=state, account=col["account"] or col["user"], qos=col["qos"] or "normal",
        reason=reason, array_job_id=col["array_job_id"],
        array_task_id=col["array_task_id"], submit_time=_int(col["submit_time"]),
        eligible_time=_int(col["eligible_time"]), start_time=_int(col["start_time"]),
        end_time=_int(col["end_time"]), begin_time=_int(col["begin_time"]),
        time_limit_min=col["time_limit_min"],
        node_count=col["node_count"] or 1, node_list=col["node_list"] or "",
        batch_host=col["batch_host"] or "", cpus=col["cpus"] or 1, ntasks=col["ntasks"],
        batch_cpus=col["batch_cpus"] or 1,
        cpus_per_task=col["cpus_per_task"] or 1, ntasks_per_node=col["ntasks_per_node"],
        min_memory_mb=col["mem_mb"], memory_per_cpu=bool(col["mem_per_cpu"]),
        gres=f"gpu:{gpus}" if gpus else "", exit_code=col["exit_code"] or 0,
        exit_signal=col["exit_signal"] or 0,
        derived_exit_code=col["derived_exit_code"] or 0, cancelled_by=col["cancelled_by"],
        priority=0 if held else max(PRIORITY_BASE - col["job_id"] + 1, 1),
        nice=col["nice"] or 0, requeue=bool(col["requeue"]), restarts=restarts,
        dependency=col["dependency"] or "",
        features=col["features"] or "", work_dir=col["work_dir"] or "",
        command=col["command"] or "", stdout=col["stdout"] or "", stderr=col["stderr"] or "",
        stdin=col["stdin"] or "/dev/null", comment=col["comment"] or "",
        exclusive=col["exclusive"], submit_host=col["submit_host"] or "",
        batch_flag=col.get("batch_flag") != 0,
        array_throttle=col["array_max_running"], cluster=cluster, steps=tuple(steps))


#: Array elements squeue folds into one record: pending, never started (a requeued element
#: stays on a line of its own, as slurmctld split it off when it started).
NOT_STARTED_ELEMENT = ("array_job_id IS NOT NULL AND state = 'PENDING' AND start_time IS NULL "
                       "AND COALESCE(restarts, 0) = 0")


def _not_started_groups(conn: sqlite3.Connection, narrow: str = "",
                        params: Sequence[object] = ()) -> List[sqlite3.Row]:
    """Per array, its first not-started element's row and every such element's task id
    (``narrow``: an extra SQL condition on the elements). Folded in SQL: a 10,000-task
    array is one row here, not 10,000."""
    return list(conn.execute(
        "SELECT jobs.*, grouped.ids AS folded_ids, grouped.n AS folded_count FROM jobs JOIN "
        "(SELECT MIN(job_id) AS first, group_concat(array_task_id) AS ids, COUNT(*) AS n "
        f"FROM jobs WHERE {NOT_STARTED_ELEMENT}{narrow} GROUP BY array_job_id) AS grouped "
        "ON jobs.job_id = grouped.first", list(params)))


def _fold_arrays(rows: List[sqlite3.Row], groups: List[sqlite3.Row],
                 cluster: str) -> List[JobRecord]:
    """Records of ``rows``, plus one per array for its not-yet-started pending elements."""
    from parsers.values.array import format_indices

    records = [to_record(row, cluster=cluster) for row in rows]
    running: Dict[int, int] = {}
    for row in rows:
        base = row["array_job_id"]
        if base is not None and row["state"] == RUNNING:
            running[base] = running.get(base, 0) + 1
    for first in groups:
        base = first["array_job_id"]
        record = to_record(first, cluster=cluster)
        if first["folded_count"] == 1 and running.get(base):
            records.append(record)
            continue
        limit = first["array_max_running"]
        reason = record.reason
        if limit and running.get(base, 0) >= limit:
            reason = "JobArrayTaskLimit"
        ids = [int(i) for i in first["folded_ids"].split(",")]
        records.append(replace(record, job_id=base, array_task_id=None,
                               array_pending=format_indices(ids, limit), reason=reason))
    records.sort(key=lambda r: (r.array_job_id or r.job_id, r.array_pending is None,
                                r.job_id))
    return records


def active_records(conn: sqlite3.Connection, include_finished: bool, now: float,
                   cluster: str = "", job_ids: Optional[Sequence[int]] = None
                   ) -> List[JobRecord]:
    """What squeue sees: active jobs, and with ``include_finished`` those that ended within
    MinJobAge; with ``job_ids``, only those whose id or array id is among them."""
    marks = ", ".join("?" for _ in ACTIVE_STATES)
    where = f"state IN ({marks})"
    params: List[object] = list(ACTIVE_STATES)
    if include_finished:
        where = f"({where}) OR end_time >= ?"
        params.append(now - MIN_JOB_AGE_S)
    narrow, narrow_params = _id_clause(job_ids)
    rows = jobdb.select_jobs(conn, f"({where}) AND NOT ({NOT_STARTED_ELEMENT}){narrow}",
                             params + narrow_params)
    from sbatch_k8s.backends.local.waiting import with_shown_dependencies

    return with_shown_dependencies(
        conn, _fold_arrays(rows, _not_started_groups(conn, narrow, narrow_params), cluster),
        now)


def _id_clause(job_ids: Optional[Sequence[int]]) -> Tuple[str, List[object]]:
    """SQL narrowing rows to ``job_ids`` (by job id or array id), with its parameters."""
    if job_ids is None:
        return "", []
    ids = sorted(set(int(i) for i in job_ids)) or [-1]
    marks = ", ".join("?" for _ in ids)
    return (f" AND (job_id IN ({marks}) OR array_job_id IN ({marks}))",
            [*ids, *ids])


def accounting_records(conn: sqlite3.Connection, where: str, params: Iterable[object],
                       cluster: str = "", job_dirs: Optional[Callable[[int], str]] = None
                       ) -> List[JobRecord]:
    """What sacct sees: jobs with their steps — recorded ones for finished jobs, and for
    running jobs (``job_dirs`` gives their directories) the steps node 0 logs as it goes."""
    rows = jobdb.select_jobs(conn, where, params)
    steps = jobdb.steps_of(conn, [r["job_id"] for r in rows])
    records = []
    for row in rows:
        record = to_record(row, [_step(s) for s in steps[row["job_id"]]], cluster)
        if record.state == COMPLETING:  # a run being requeued: accounted REQUEUED at once
            record = with_changes(record, state=REQUEUED)
        if row["requeued_runs"]:
            record = with_changes(record, requeued_runs=tuple(
                to_record(run["row"], [_step(s) for s in run["steps"]], cluster)
                for run in json.loads(row["requeued_runs"])))
        if row["state"] == RUNNING and job_dirs is not None and not record.steps:
            record = with_changes(record, steps=tuple(
                live_steps(record, job_dirs(record.job_id), finished=True)))
        records.append(record)
    return records


def running_steps(conn: sqlite3.Connection, record: JobRecord,
                  job_dir: str) -> List[StepRecord]:
    """The steps of a running job still running: batch, extern, and the numbered ones."""
    return live_steps(record, job_dir, finished=False)


def live_steps(record: JobRecord, job_dir: str, finished: bool) -> List[StepRecord]:
    """A running job's steps from node 0's step log: ``batch`` and ``extern`` (running),
    then the numbered steps — with ``finished``, those that ended too, in their end state."""
    from parsers.values.hostlist import compress_hostlist

    start = record.start_time
    log_path = os.path.join(job_dir, "node-0", "steps.jsonl")
    steps = [StepRecord("batch", "batch", RUNNING, start_time=start,
                        node_list=record.batch_host, node_count=1, ntasks=1,
                        cpus=record.batch_cpus,
                        usage=StepUsage.from_json(batch_usage(log_path))),
             StepRecord("extern", "extern", RUNNING, start_time=start,
                        node_list=record.node_list, node_count=record.node_count,
                        ntasks=record.node_count, cpus=record.cpus)]
    starts, ends = read_step_log(log_path)
    for event in starts.values():
        ended = ends.get(event["step_id"])
        if ended is not None and not finished:
            continue
        nodes = event.get("nodes") or []
        steps.append(StepRecord(
            str(event["step_id"]), event.get("name", ""),
            ended.get("state", "COMPLETED") if ended else RUNNING,
            exit_code=int(ended.get("exit_code") or 0) if ended else 0,
            exit_signal=int(ended.get("signal") or 0) if ended else 0,
            start_time=event.get("time"), end_time=ended.get("time") if ended else None,
            node_list=compress_hostlist(nodes), node_count=len(nodes),
            ntasks=event.get("ntasks", 0), cpus=event.get("ntasks", 0),
            usage=StepUsage.from_json((ended or {}).get("usage") or event.get("usage"))))
    return steps
