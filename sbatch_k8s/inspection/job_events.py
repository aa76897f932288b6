"""A job's moments as events, from what its record holds, on every backend.

Two sources, told apart by :attr:`~sbatch_k8s.inspection.values.EventView.source`:

* ``record`` — the job as the controller sees it: submitted, started, ended (with the times,
  state, reason and exit code sacct shows);
* ``runtime`` — what the runtime did and reported: each node up (the node's own start, when
  the backend can tell it), each step's start and end with its exit code, a step or job
  ended by a signal, each earlier run ended by a requeue.

Kubernetes' own events (scheduling, image pulls, OOM kills, evictions) are added by
:mod:`.kubernetes_events`; :func:`merged` puts them all in time order.
"""

from __future__ import annotations

import signal
from typing import Iterable, List, Mapping, Optional

from parsers.formats.job_values import exit_code_text
from parsers.job_records import CANCELLED, TIMEOUT, JobRecord, StepRecord
from sbatch_k8s.inspection.values import EventView

RECORD, RUNTIME = "record", "runtime"


def record_events(record: JobRecord) -> List[EventView]:
    """The record's own moments: submitted, started, ended (unordered)."""
    job = f"job {record.job_id_text}"
    events: List[EventView] = []
    if record.submit_time:
        events.append(EventView(record.submit_time, "Normal", "Submitted",
                                f"to partition {record.partition}", job, RECORD))
    if record.start_time:
        where = f" on {record.node_list}" if record.node_list else ""
        events.append(EventView(record.start_time, "Normal", "Started",
                                f"{record.node_count} node(s){where}", job, RECORD))
    if record.end_time:
        kind = "Normal" if record.state == "COMPLETED" else "Warning"
        said = f" ({record.system_comment})" if record.system_comment else ""
        why = f" ({record.reason})" if record.reason not in ("", "None") else ""
        events.append(EventView(record.end_time, kind, "Ended",
                                f"{record.state}{why}, exit code "
                                f"{exit_code_text(record.exit_code, record.exit_signal)}{said}",
                                job, RECORD))
    return events


def signal_name(number: int) -> str:
    """``9`` → ``SIGKILL`` (the number itself when this system has no name for it)."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _step_events(job_text: str, step: StepRecord) -> List[EventView]:
    subject = f"step {job_text}.{step.step_id}"
    events = []
    if step.start_time:
        where = f" on {step.node_list}" if step.node_list else ""
        events.append(EventView(step.start_time, "Normal", "StepStarted",
                                f"{step.name or step.step_id}{where}", subject, RUNTIME))
    if step.end_time:
        kind = "Normal" if step.state == "COMPLETED" else "Warning"
        events.append(EventView(step.end_time, kind, "StepEnded",
                                f"{step.state}, exit code "
                                f"{exit_code_text(step.exit_code, step.exit_signal)}",
                                subject, RUNTIME))
        if step.exit_signal:
            events.append(EventView(step.end_time, "Warning", "Signal",
                                    f"its tasks ended by {signal_name(step.exit_signal)}",
                                    subject, RUNTIME))
    return events


def _job_signal(record: JobRecord) -> Optional[EventView]:
    """The signal that ended the job, as its state tells it: a cancel, the time limit."""
    if not record.end_time:
        return None
    job = f"job {record.job_id_text}"
    if record.state == CANCELLED:
        by = f" by uid {record.cancelled_by}" if record.cancelled_by is not None else ""
        return EventView(record.end_time, "Warning", "Signal",
                         f"cancelled{by}", job, RUNTIME)
    if record.state == TIMEOUT:
        return EventView(record.end_time, "Warning", "Signal",
                         "time limit reached", job, RUNTIME)
    if record.exit_signal:
        return EventView(record.end_time, "Warning", "Signal",
                         f"batch script ended by {signal_name(record.exit_signal)}", job,
                         RUNTIME)
    return None


def runtime_events(record: JobRecord, nodes_up: Mapping[str, int]) -> List[EventView]:
    """What the runtime did: ``nodes_up`` (node name → when it came up), the steps of the
    current run and of each earlier one, signals, requeues (unordered)."""
    job = f"job {record.job_id_text}"
    events = [EventView(when, "Normal", "NodeUp", "the node's runtime started", f"node {name}",
                        RUNTIME) for name, when in nodes_up.items()]
    for run in record.requeued_runs:
        for step in run.steps:
            events.extend(_step_events(record.job_id_text, step))
        if run.end_time:
            events.append(EventView(run.end_time, "Warning", "Requeued",
                                    f"run ended {run.state}, requeued", job, RUNTIME))
    for step in record.steps:
        events.extend(_step_events(record.job_id_text, step))
    ended = _job_signal(record)
    return events + ([ended] if ended is not None else [])


#: Within one second (the records keep whole seconds), events go in the order they can
#: happen: the job starts, its nodes come up and the batch (and extern) step starts before
#: anything else, and they end after everything else. Others (Kubernetes' events too) keep
#: the order given.
SAME_SECOND_RANK = {"Submitted": 0, "Started": 1, "NodeUp": 2, "StepStarted": 3,
                    "StepEnded": 5, "Signal": 6, "Ended": 7}
#: The steps that span the whole job.
WHOLE_JOB_STEPS = (".batch", ".extern")


def _same_second_rank(event: EventView) -> int:
    if event.source not in (RECORD, RUNTIME):
        return 4                 # a Kubernetes event's reason is its own vocabulary
    rank = SAME_SECOND_RANK.get(event.reason, 4)
    if event.reason in ("StepStarted", "StepEnded", "Signal") and \
            not event.subject.endswith(WHOLE_JOB_STEPS):
        return 4
    return rank


def merged(*groups: Iterable[EventView]) -> List[EventView]:
    """Every event of ``groups`` in time order (those without a time last; ties by
    :data:`SAME_SECOND_RANK`, else in the order given)."""
    return sorted((e for group in groups for e in group),
                  key=lambda e: (e.time is None, e.time or 0, _same_second_rank(e)))
