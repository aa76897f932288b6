"""A job's timeline as its record tells it: submitted, eligible, started, each step's start
and end, the end — with the times and states sacct shows, on every backend."""

from __future__ import annotations

from typing import List

from parsers.formats.job_values import exit_code_text
from parsers.job_records import JobRecord
from sbatch_k8s.ui.views import EventView

RECORD = "record"


def record_events(record: JobRecord) -> List[EventView]:
    """The record's moments as events (unordered; the caller sorts)."""
    job = f"job {record.job_id_text}"
    events: List[EventView] = []
    if record.submit_time:
        events.append(EventView(record.submit_time, "Normal", "Submitted",
                                f"to partition {record.partition}", job, RECORD))
    if record.requeued_runs:
        for run in record.requeued_runs:
            if run.end_time:
                events.append(EventView(run.end_time, "Warning", "Requeued",
                                        f"run ended {run.state}, requeued", job, RECORD))
    if record.start_time:
        where = f" on {record.node_list}" if record.node_list else ""
        events.append(EventView(record.start_time, "Normal", "Started",
                                f"{record.node_count} node(s){where}", job, RECORD))
    for step in record.steps:
        subject = f"step {record.job_id_text}.{step.step_id}"
        if step.start_time:
            where = f" on {step.node_list}" if step.node_list else ""
            events.append(EventView(step.start_time, "Normal", "StepStarted",
                                    f"{step.name or step.step_id}{where}", subject, RECORD))
        if step.end_time:
            kind = "Normal" if step.state == "COMPLETED" else "Warning"
            events.append(EventView(step.end_time, kind, "StepEnded",
                                    f"{step.state}, exit code "
                                    f"{exit_code_text(step.exit_code, step.exit_signal)}",
                                    subject, RECORD))
    if record.end_time:
        kind = "Normal" if record.state == "COMPLETED" else "Warning"
        said = f" ({record.system_comment})" if record.system_comment else ""
        events.append(EventView(record.end_time, kind, "Ended",
                                f"{record.state} {record.reason}, exit code "
                                f"{exit_code_text(record.exit_code, record.exit_signal)}{said}",
                                job, RECORD))
    return events
