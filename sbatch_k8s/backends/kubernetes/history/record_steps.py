"""A cluster job's steps as sacct lists them: ``batch``, ``extern``, then the numbered ones.

Node 0's runtime writes its steps into its termination message (compact entries, keys
``id name state exit_code exit_signal start end node_list node_count ntasks cpus``, zero
values left out, the numbered ones packed when they do not fit as they are; see
:mod:`sbatch_k8s.runtime.batch_host.step_log`, whose
:func:`~sbatch_k8s.runtime.batch_host.step_log.reported_steps` reads them). When it has not (the job
still runs, or node 0 died without a word) the ``batch`` and ``extern`` steps are made from the job,
as slurmctld has them: running while the job runs, then ended with the job. While it runs, node 0
with API access publishes its numbered steps in the record
(:mod:`sbatch_k8s.runtime.cluster.step_publisher`; read by :func:`published_steps`): the running
ones and the last ended ones, which follow ``batch`` and ``extern`` as ``squeue -s`` and ``sacct``
list them. Once the job has ended, node 0's report is what its steps are made of; ended steps it
published fill in only those the report had no room for (it keeps the last ones), so that what sacct
listed while the job ran is still listed after.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from parsers.job_records import (
    CANCELLED,
    COMPLETED,
    FAILED,
    NODE_FAIL,
    OUT_OF_MEMORY,
    PENDING,
    PREEMPTED,
    RUNNING,
    TIMEOUT,
    JobRecord,
    StepRecord,
    build,
    with_changes,
)
from parsers.step_usage import StepUsage
from sbatch_k8s.runtime.batch_host.step_log import reported_steps

#: The batch step's state when the job ended in a given state (slurmstepd's view: a job
#: ended by the cluster had its batch script killed, which Slurm records as CANCELLED).
BATCH_STEP_STATE: Dict[str, str] = {
    COMPLETED: COMPLETED,
    FAILED: FAILED,
    CANCELLED: CANCELLED,
    TIMEOUT: CANCELLED,
    PREEMPTED: CANCELLED,
    NODE_FAIL: CANCELLED,
    OUT_OF_MEMORY: OUT_OF_MEMORY,
}
#: Compact key in the termination message → StepRecord field.
COMPACT_KEYS: Tuple[Tuple[str, str], ...] = (
    ("id", "step_id"), ("name", "name"), ("state", "state"), ("exit_code", "exit_code"),
    ("exit_signal", "exit_signal"), ("start", "start_time"), ("end", "end_time"),
    ("node_list", "node_list"), ("node_count", "node_count"), ("ntasks", "ntasks"),
    ("cpus", "cpus"),
)


def batch_step_state(job_state: str) -> str:
    """The batch step's state for a job that ended in ``job_state`` (total: unknown final
    states carry over)."""
    return BATCH_STEP_STATE.get(job_state, job_state)


def step_from_entry(entry: Mapping[str, Any]) -> StepRecord:
    """One compact entry of node 0's report as a step."""
    values: Dict[str, Any] = {"step_id": "", "name": "", "state": COMPLETED}
    for compact, field in COMPACT_KEYS:
        if entry.get(compact) is not None:
            values[field] = entry[compact]
    values["step_id"] = str(values["step_id"])
    values["usage"] = StepUsage.from_json(entry.get("usage"))
    return build(StepRecord, **values)


def _batch(job: JobRecord, final: bool, entry: Optional[Mapping[str, Any]],
           live: Optional[StepRecord] = None) -> StepRecord:
    """The batch step: node 0's entry with what only the login side knows filled in, else
    made from the job (while it runs, with the script's usage so far that node 0
    published: ``live``)."""
    if entry is not None:
        step = step_from_entry(entry)
        return with_changes(
            step, node_list=step.node_list or job.batch_host, node_count=1, ntasks=1,
            cpus=step.cpus or job.batch_cpus, start_time=step.start_time or job.start_time,
            end_time=step.end_time or job.end_time)
    if not final:
        return build(StepRecord, step_id="batch", name="batch", state=RUNNING,
                     start_time=job.start_time, node_list=job.batch_host, node_count=1,
                     ntasks=1, cpus=job.batch_cpus, usage=live.usage if live else None)
    return build(StepRecord, step_id="batch", name="batch", state=batch_step_state(job.state),
                 exit_code=job.exit_code, exit_signal=job.exit_signal,
                 start_time=job.start_time, end_time=job.end_time, node_list=job.batch_host,
                 node_count=1, ntasks=1, cpus=job.batch_cpus)


def _extern(job: JobRecord, final: bool) -> StepRecord:
    return build(StepRecord, step_id="extern", name="extern",
                 state=COMPLETED if final else RUNNING, start_time=job.start_time,
                 end_time=job.end_time if final else None, node_list=job.node_list,
                 node_count=job.node_count, ntasks=job.node_count, cpus=job.cpus)


def published_steps(text: str) -> Tuple[StepRecord, ...]:
    """The steps node 0 published (a JSON list of compact entries): an entry without a state
    runs; a ``batch`` entry is the script's usage so far (kept only with one); none when the
    text is not such a list (a record must stay readable whatever that key holds)."""
    try:
        entries = json.loads(text)
        return tuple(with_changes(step_from_entry(e), state=str(e.get("state") or RUNNING))
                     for e in entries
                     if isinstance(e, dict) and (str(e.get("id", "")).isdigit() or (
                         e.get("id") == "batch" and isinstance(e.get("usage"), dict))))
    except (ValueError, TypeError, AttributeError):
        return ()


def _this_run(job: JobRecord, steps: Sequence[StepRecord]) -> List[StepRecord]:
    """The numbered ``steps`` that started in the job's current run (a requeued job's record
    may still hold the steps of the run before)."""
    return [s for s in steps if s.step_id.isdigit() and
            (s.start_time is None or job.start_time is None or s.start_time >= job.start_time)]


def job_steps(job: JobRecord, final: bool, report: Optional[Mapping[str, Any]],
              published: Sequence[StepRecord] = ()) -> Tuple[StepRecord, ...]:
    """The steps of ``job`` (its live state, times and nodes already set): none while it
    pends or when it ended without ever starting; else ``batch``, ``extern`` and node 0's
    numbered steps in id order: while it runs without a report, the ``published`` ones
    (running and ended) of this run; once ended, those of its report, and the ended
    ``published`` ones of this run it left out (module docstring)."""
    if job.state == PENDING or job.start_time is None:
        return ()
    entries: Sequence[Mapping[str, Any]] = reported_steps(report or {})
    batch = next((e for e in entries if str(e.get("id")) == "batch"), None)
    numbered = [step_from_entry(e) for e in entries
                if str(e.get("id")) not in ("batch", "extern")]
    if not final and report is None:
        numbered.extend(_this_run(job, published))
    else:
        reported = {s.step_id for s in numbered}
        numbered.extend(s for s in _this_run(job, published)
                        if s.state != RUNNING and s.step_id not in reported)
    numbered.sort(key=lambda s: int(s.step_id) if s.step_id.isdigit() else -1)
    live = next((s for s in published if s.step_id == "batch"), None)
    return (_batch(job, final, batch, live), _extern(job, final)) + tuple(numbered)


def cancelled_steps(steps: Sequence[StepRecord], now: int) -> Tuple[StepRecord, ...]:
    """``steps`` as slurmctld closes them when a running job is cancelled: every step still
    running ends CANCELLED by SIGTERM (``0:15``) at ``now``, except ``extern``, which
    completes; ended steps keep what they had."""
    closed: List[StepRecord] = []
    for step in steps:
        if step.state != RUNNING:
            closed.append(step)
        elif step.step_id == "extern":
            closed.append(with_changes(step, state=COMPLETED, end_time=now))
        else:
            closed.append(with_changes(step, state=CANCELLED, exit_code=0, exit_signal=15,
                                       end_time=now))
    return tuple(closed)
