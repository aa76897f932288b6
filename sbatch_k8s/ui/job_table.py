"""The Jobs page's table: squeue's lines, then sacct's history, in one set of columns.

Each column names the squeue field (``-O`` name) that fills it for a job squeue still shows
and the sacct field for a job only the history has, so every cell is what those commands
print (:mod:`parsers.formats.squeue_fields`, :mod:`parsers.formats.sacct_fields`). Beside
the text each row carries sort values (numbers where the text does not sort: ids, times,
counts) and what the page needs to link and act on it.

The filters are the commands' options: :func:`filter_argv` turns the page's filter fields
into squeue's and sacct's command lines, which their own parsers read.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from parsers.formats import job_values as jv
from parsers.formats.sacct_format import FIELDS_BY_NAME
from parsers.formats.squeue_fields import JobContext, job_field_by_name
from parsers.formats.states import state_compact
from parsers.job_records import JobRecord

SQUEUE, SACCT = "squeue", "sacct"


class Column(NamedTuple):
    """One column: its key, title, squeue ``-O`` field and sacct field."""

    key: str
    title: str
    squeue: str
    sacct: str


COLUMNS: Tuple[Column, ...] = (
    Column("job", "JOBID", "JobID", "JobID"),
    Column("partition", "PARTITION", "Partition", "Partition"),
    Column("name", "NAME", "Name", "JobName"),
    Column("user", "USER", "UserName", "User"),
    Column("state", "STATE", "State", "State"),
    Column("time", "TIME", "TimeUsed", "Elapsed"),
    Column("limit", "TIME_LIMIT", "TimeLimit", "Timelimit"),
    Column("nodes", "NODES", "NumNodes", "NNodes"),
    Column("where", "NODELIST(REASON)", "ReasonList", "NodeList"),
    Column("exit", "EXIT_CODE", "exit_code", "ExitCode"),
    Column("submit", "SUBMIT_TIME", "SubmitTime", "Submit"),
)

#: The page's filter fields → squeue's and sacct's options (None: the command has none).
FILTERS: Tuple[Tuple[str, Optional[str], Optional[str]], ...] = (
    ("states", "--states", "--state"),
    ("partitions", "--partition", "--partition"),
    ("names", "--name", "--name"),
    ("users", "--user", "--user"),
    ("jobs", "--jobs", "--jobs"),
)


def filter_argv(fields: Mapping[str, str]) -> Tuple[List[str], List[str]]:
    """squeue's and sacct's arguments for the page's filters (empty fields: none); the
    ``array`` box is squeue's ``-r``, ``since`` sacct's ``-S``."""
    squeue: List[str] = []
    sacct: List[str] = []
    for name, squeue_option, sacct_option in FILTERS:
        value = (fields.get(name) or "").strip()
        if not value:
            continue
        if squeue_option:
            squeue.append(f"{squeue_option}={value}")
        if sacct_option and not (name == "states" and value.lower() == "all"):
            # squeue's "all" is every state, which is sacct without --state
            sacct.append(f"{sacct_option}={value}")
    if fields.get("array") in ("1", "true", "on"):
        squeue.append("--array")
    since = (fields.get("since") or "").strip()
    sacct.append(f"--starttime={since}" if since else "--starttime=midnight")
    return squeue, sacct


def row_key(record: JobRecord) -> str:
    """A row's identity across updates: the job's id text."""
    return record.job_id_text


def _sort_job(record: JobRecord) -> List[float]:
    array = record.array_job_id if record.array_job_id is not None else record.job_id
    task = record.array_task_id if record.array_task_id is not None else -1
    return [float(array), float(task)]


def squeue_row(record: JobRecord, now: int) -> Dict[str, Any]:
    """A job squeue shows, its cells as squeue prints them."""
    ctx = JobContext(now)
    cells = {}
    for column in COLUMNS:
        field = job_field_by_name(column.squeue)
        value = field.value(record, ctx) if field is not None else ""
        cells[column.key] = "" if value is None else value
    return _row(record, cells, SQUEUE, jv.time_used_s(record, now))


def sacct_row(record: JobRecord, now: int) -> Dict[str, Any]:
    """A job only the history has, its cells as sacct prints them."""
    from parsers.formats.sacct_fields import elapsed_s

    ctx = JobContext(now)
    cells = {}
    for column in COLUMNS:
        value = FIELDS_BY_NAME[column.sacct].value(record, None, ctx)
        cells[column.key] = "" if value is None else value
    return _row(record, cells, SACCT, elapsed_s(record.start_time, record.end_time, now))


def _row(record: JobRecord, cells: Dict[str, str], source: str, used_s: int
         ) -> Dict[str, Any]:
    return {
        "key": row_key(record), "source": source, "cells": cells,
        "state": record.state, "st": state_compact(record.state), "uid": record.uid,
        "array": record.array_job_id is not None,
        "sort": {"job": _sort_job(record), "time": used_s, "nodes": record.node_count,
                 "submit": record.submit_time or 0, "limit": record.time_limit_min or 0},
    }


def table_rows(active: Sequence[JobRecord], history: Sequence[JobRecord], now: int
               ) -> List[Dict[str, Any]]:
    """squeue's rows, then the history's rows of jobs squeue no longer shows (a pending
    array's line of sacct included: squeue may list the same elements one by one, -r)."""
    rows = [squeue_row(r, now) for r in active]
    shown = {row["key"] for row in rows}
    arrays = {r.array_job_id for r in active if r.array_job_id is not None}
    rows += [sacct_row(r, now) for r in history if row_key(r) not in shown
             and not (r.array_pending is not None and r.array_job_id in arrays)]
    return rows


def columns_json() -> List[Dict[str, str]]:
    """The columns, for the page's header."""
    return [{"key": c.key, "title": c.title} for c in COLUMNS]
