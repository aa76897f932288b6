"""A job array's elements that never started, shown as slurmctld keeps them: one record.

slurmctld holds an array's tasks in one job record until a task starts (or is requeued, or
is changed on its own); only then is the task split off with a record of its own. So real
Slurm 22.05 shows ``sbatch --hold --array=0-99`` as one line everywhere: squeue
``260_[0-99]`` (reason JobHeldUser; ``-r`` expands it), ``scontrol show job 260`` one record
with ``ArrayTaskId=0-99``, sacct ``260_[0-99]`` (JobIDRaw 260, NodeList ``None assigned``);
tasks that started are listed on their own beside the line of those still waiting
(``260_[2-9]`` with a ``%2`` limit reached: reason JobArrayTaskLimit) — squeue lists that line
first, sacct after the started tasks.

The backends record every element from the start (a cluster's records are per element); the
local backend folds them in SQL (``backends/local/records.py``), and this is the same rule
over records: :func:`fold_pending_arrays`; :func:`pending_element` is one task of a folded
line as ``scontrol show job <array>_<task>`` shows it.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence

from parsers.formats.states import is_pending
from parsers.job_records import JobRecord, with_changes
from parsers.values.array import format_indices
from parsers.values.bitfmt import parse_bitfmt

TASK_LIMIT_REASON = "JobArrayTaskLimit"
RUNNING = "RUNNING"


def never_started(record: JobRecord) -> bool:
    """An array element slurmctld has not split off yet: pending, never started."""
    return (record.array_job_id is not None and record.array_task_id is not None
            and record.array_pending is None and is_pending(record.state)
            and record.start_time is None and not record.restarts)


def fold_pending_arrays(records: Sequence[JobRecord], waiting_last: bool = False
                        ) -> List[JobRecord]:
    """``records`` with each array's never-started elements as one record (the first
    element's, with the array's id, no task id and ``array_pending`` the tasks), in id order
    of the arrays, a folded line before its started elements (after them with
    ``waiting_last``: sacct's order). A lone waiting element beside running ones keeps its
    own line (the local backend's rule)."""
    waiting: Dict[int, List[JobRecord]] = {}
    running: Dict[int, int] = {}
    kept: List[JobRecord] = []
    for record in records:
        if never_started(record):
            waiting.setdefault(int(record.array_job_id or 0), []).append(record)
            continue
        if record.array_job_id is not None and record.state == RUNNING:
            running[record.array_job_id] = running.get(record.array_job_id, 0) + 1
        kept.append(record)
    for base, elements in waiting.items():
        if len(elements) == 1 and running.get(base):
            kept.append(elements[0])
            continue
        kept.append(_folded(base, elements, running.get(base, 0)))
    kept.sort(key=lambda r: (r.array_job_id or r.job_id,
                             (r.array_pending is None) != waiting_last, r.job_id))
    return kept


def _folded(base: int, elements: Sequence[JobRecord], running: int) -> JobRecord:
    first = min(elements, key=lambda r: r.job_id)
    limit = first.array_throttle
    reason = TASK_LIMIT_REASON if limit and running >= limit else first.reason
    tasks = [int(r.array_task_id or 0) for r in elements]
    return with_changes(first, job_id=base, array_task_id=None,
                        array_pending=format_indices(tasks, limit), reason=reason)


def pending_element(folded: JobRecord, task: int) -> Optional[JobRecord]:
    """Task ``task`` of a folded line as its own record (``scontrol show job 260_5``: the
    array's job id, that task), None when the line does not hold it."""
    if folded.array_pending is None:
        return None
    try:
        tasks = parse_bitfmt(folded.array_pending.partition("%")[0])
    except ValueError:
        return None
    if task not in tasks:
        return None
    return with_changes(folded, array_task_id=task, array_pending=None)
