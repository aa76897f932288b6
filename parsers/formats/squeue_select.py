"""Which jobs and steps squeue lists for a query (``_filter_job``/``_filter_step``).

The caller resolves what needs the system — user names to uids (``user_ids``, which
includes ``--me``), its own uid for ``--notme`` — and passes records in the controller's
order; the result goes to :func:`parsers.formats.squeue_sort.sort_jobs`. A query naming
tasks of a pending array (``-j 69_3``) narrows the array's pending line to those tasks, as
squeue does.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Collection, List, Optional, Sequence, Set

from parsers.input_errors import ValueSyntaxError
from parsers.formats import job_values as jv
from parsers.formats.squeue_steps import StepView
from parsers.formats.states import SQUEUE_DEFAULT_STATES, is_pending
from parsers.job_records import JobRecord, with_changes
from parsers.values.bitfmt import format_bitfmt, parse_bitfmt
from parsers.values.hostlist import expand_hostlist

if TYPE_CHECKING:
    from parsers.report_options.squeue_options import SqueueQuery


def pending_tasks(job: JobRecord) -> Set[int]:
    """The task indices of a pending array line (``3-6%2`` → {3, 4, 5, 6})."""
    if job.array_pending is None:
        return set()
    try:
        return set(parse_bitfmt(job.array_pending.partition("%")[0]))
    except ValueSyntaxError:
        return set()


def _hosts(node_list: str) -> Set[str]:
    try:
        return set(expand_hostlist(node_list))
    except ValueSyntaxError:
        return set()


def _by_job_list(job: JobRecord, wanted: Sequence[Any]) -> Optional[JobRecord]:
    """The record if ``-j`` selects it (narrowed for partly selected pending arrays)."""
    tasks: Set[int] = set()
    for sel in wanted:
        if sel.array_task_id is None and sel.job_id in (job.array_job_id, job.job_id):
            return job
        if sel.array_task_id is not None and sel.job_id == job.array_job_id:
            if sel.array_task_id == job.array_task_id:
                return job
            if sel.array_task_id in pending_tasks(job):
                tasks.add(sel.array_task_id)
    if not tasks:
        return None
    if len(tasks) == 1:
        return replace(job, array_task_id=tasks.pop(), array_pending=None)
    return replace(job, array_pending=format_bitfmt(tasks))


def _names_match(value: str, wanted: Optional[Sequence[str]]) -> bool:
    return wanted is None or any(value.lower() == w.lower() for w in wanted)


def select_jobs(records: Sequence[JobRecord], query: "SqueueQuery", now: int,
                user_ids: Optional[Collection[int]] = None,
                my_uid: Optional[int] = None) -> List[JobRecord]:
    """The records squeue prints for ``query`` (a :class:`SqueueQuery`)."""
    selected: List[JobRecord] = []
    nodes = set(query.nodes) if query.nodes is not None else None
    for job in records:
        if query.jobs is not None:
            narrowed = _by_job_list(job, query.jobs)
            if narrowed is None:
                continue
            job = narrowed
        if not (_names_match(job.account, query.accounts) and _names_match(job.qos, query.qos)
                and _names_match(job.name, query.names)):
            continue
        if query.licenses is not None:
            continue
        if query.reservation is not None and job.reservation != query.reservation:
            continue
        if not query.all_states:
            allowed = query.states if query.states is not None else SQUEUE_DEFAULT_STATES
            if job.state not in allowed:
                continue
        if nodes is not None and not (nodes & _hosts(job.node_list)):
            continue
        if query.notme and my_uid is not None and job.uid == my_uid:
            continue
        if user_ids is not None and job.uid not in user_ids:
            continue
        if query.partitions is not None and not (
                set(job.partition.split(",")) & set(query.partitions)):
            continue
        used = jv.time_used_s(job, now)
        running = job.state == "RUNNING"
        if query.running_over_s and (not running or used < query.running_over_s):
            continue
        if query.running_under_s and (not running or used >= query.running_under_s):
            continue
        selected.append(job)
    return selected


def select_steps(steps: Sequence[StepView], query: "SqueueQuery",
                 user_ids: Optional[Collection[int]] = None) -> List[StepView]:
    """The ``(job, step)`` pairs ``squeue -s`` prints (pending steps never)."""
    selected: List[StepView] = []
    nodes = set(query.nodes) if query.nodes is not None else None
    for job, step in steps:
        if is_pending(step.state):
            continue
        if query.jobs is not None and not any(
                (s.array_task_id is None and s.job_id in (job.array_job_id, job.job_id))
                or (s.array_task_id == job.array_task_id and s.job_id == job.array_job_id)
                for s in query.jobs):
            continue
        if query.partitions is not None and job.partition not in query.partitions:
            continue
        if query.steps is not None and not any(
                s.step == step.step_id and (
                    (s.array_task_id is None and s.job_id in (job.array_job_id, job.job_id))
                    or (s.array_task_id == job.array_task_id and s.job_id == job.array_job_id))
                for s in query.steps):
            continue
        if nodes is not None and not (nodes & _hosts(step.node_list)):
            continue
        if user_ids is not None and job.uid not in user_ids:
            continue
        selected.append((job, step))
    return selected


def expand_pending_arrays(records: Sequence[JobRecord]) -> List[JobRecord]:
    """``squeue -r``: a pending array line becomes one line per task, in place (after
    sorting, as squeue expands them while printing); the ``%`` limit is dropped."""
    expanded: List[JobRecord] = []
    for job in records:
        tasks = sorted(pending_tasks(job))
        if not tasks:
            expanded.append(job)
            continue
        expanded.extend(with_changes(job, array_task_id=t, array_pending=None) for t in tasks)
    return expanded
