"""``sbatch-k8s events JOB``: what happened to a job, in time order, one line each.

The job's record (submitted, started, ended), the runtime's own events (each node up, each
step's start and end with its exit code, signals, requeues) and, on a cluster, the Kubernetes
events of its workload and pods (scheduling, image pulls, evictions) with what the pods'
statuses say of their containers' ends (an OOM kill): :meth:`~sbatch_k8s.inspection.
inspector.JobInspector.events`. The table has kubectl's shape; times are Slurm's
(``2026-11-28T08:10:26``, local time).
"""

from __future__ import annotations

import os
import sys
from typing import List, Sequence

import click

from sbatch_k8s.inspection.values import EventView
from sbatch_k8s.tool.job_argument import CommandError, fail_with, find_record, parse_job_argument

COMMAND = "events"
#: The columns, each with what it shows (the message last: it may hold blanks).
COLUMNS = ("TIME", "TYPE", "REASON", "OBJECT", "SOURCE", "MESSAGE")


def event_row(event: EventView) -> List[str]:
    """One event's cells, in :data:`COLUMNS` order."""
    from parsers.formats.cells import format_timestamp

    when = format_timestamp(event.time, None, 0) if event.time is not None else "Unknown"
    count = f" (x{event.count})" if event.count > 1 else ""
    return [when, event.type, event.reason, event.subject, event.source,
            event.message.replace("\n", " ") + count]


def format_events(events: Sequence[EventView]) -> str:
    """The table: a header, then one padded line per event."""
    rows = [list(COLUMNS)] + [event_row(e) for e in events]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS) - 1)]
    return "".join("   ".join([cell.ljust(width) for cell, width in zip(row, widths)]
                              + [row[-1]]).rstrip() + "\n" for row in rows)


def _events(job: str) -> str:
    from sbatch_k8s.backends import open_backend
    from sbatch_k8s.inspection.inspector import JobInspector

    wanted = parse_job_argument(job, steps=False)
    backend = open_backend(os.environ)
    record = find_record(backend, wanted.job)
    return format_events(JobInspector(backend).events(record))


@click.command(name=COMMAND)
@click.argument("job", metavar="JOB")
def command(job: str) -> None:
    """What happened to a job: its record's, its runtime's and (on a cluster) its
    Kubernetes events, in time order."""
    try:
        sys.stdout.write(_events(job))
    except CommandError as e:
        raise fail_with(COMMAND, e) from None
