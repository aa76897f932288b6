"""A job id as the commands take it → the job's record.

``12`` is a job, ``12_3`` an element of array 12 (one still waiting on its array's line
included, as slurmctld shows it), ``12_[3-9%2]`` a pending array's line as squeue prints it.
squeue's view (the live job) answers first, then sacct's (a job that has ended). Who may see
a record is the caller's to say (``visible``): the console shows operators every job and
others their own; on a cluster the API server decides what the commands may read.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable, Optional

from parsers.job_records import JobRecord

if TYPE_CHECKING:
    from sbatch_k8s.backends.base import Backend


def _everyone(record: JobRecord) -> bool:
    return True


def find_job(backend: "Backend", job_text: str,
             visible: Callable[[JobRecord], bool] = _everyone) -> Optional[JobRecord]:
    """The record ``job_text`` names; None when malformed, unknown or not ``visible``."""
    from parsers.formats.array_fold import pending_element

    number, _, task_text = job_text.partition("_")
    folded = task_text.startswith("[") and task_text.endswith("]")
    if not (number.isascii() and number.isdigit()) or int(number) <= 0 or (
            task_text and not (task_text.isascii() and task_text.isdigit()) and not folded):
        return None
    job_id, task = int(number), int(task_text) if task_text.isdigit() else None
    now = int(time.time())
    if folded:   # a pending array's line, as squeue shows it (``12_[3-9%2]``)
        return next((r for r in backend.job_records(True, now, job_ids=[job_id])
                     if r.job_id_text == job_text and visible(r)), None)
    for records in (lambda: backend.job_records(True, now, job_ids=[job_id]),
                    lambda: backend.accounting_records(0, now + 1, [job_id])):
        for record in records():
            if not visible(record):
                continue
            if task is None and record.job_id == job_id and record.array_pending is None:
                return record
            if task is not None and record.array_job_id == job_id:
                if record.array_task_id == task:
                    return record
                if record.array_pending is not None:
                    element = pending_element(record, task)
                    if element is not None:
                        return element
    return None


def with_history(backend: "Backend", record: JobRecord) -> JobRecord:
    """``record`` (squeue's view) with the steps and earlier runs sacct's record of the same
    job holds (squeue's records carry none on some backends)."""
    from parsers.job_records import with_changes

    if record.steps or record.array_pending is not None:
        return record
    now = int(time.time())
    for kept in backend.accounting_records(0, now + 1, [record.job_id]):
        if kept.job_id == record.job_id and kept.array_pending is None:
            return with_changes(record, steps=kept.steps,
                                requeued_runs=kept.requeued_runs or record.requeued_runs)
    return record


def has_ended(backend: "Backend", record: JobRecord) -> bool:
    """Whether the job has ended (a followed log then stops at its end)."""
    from parsers.formats.states import is_pending

    found = find_job(backend, record.job_id_text)
    if found is None:
        return True
    return not (is_pending(found.state) or found.state in (
        "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED"))
