"""What the console does to jobs: the backend's verbs, answered in Slurm's words.

Cancel, hold, release and requeue call :class:`~sbatch_k8s.backends.base.Backend`'s verbs
for the one job, element or step the page names, and word the outcome as ``scancel`` and
``scontrol`` do (:mod:`parsers.formats.messages`, scontrol's requeue table): a refused
action shows Slurm's message. Holds follow ``scontrol hold``: the user's hold is
``JobHeldUser``, an operator's ``JobHeldAdmin``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from parsers.job_records import PENDING, JobRecord
from sbatch_k8s.ui.views import ActionResult

if TYPE_CHECKING:
    from sbatch_k8s.backends.base import Backend

#: The outcomes of the verbs (:mod:`sbatch_k8s.backends.base`).
DONE, REFUSED, UNKNOWN = "done", "refused", "unknown"


def _targets(backend: "Backend", record: JobRecord, whole_array: bool = False) -> List[int]:
    """The job ids one row means: the job or element, every task still waiting on a
    pending array's line, or (``whole_array``) every element of the job's array."""
    from parsers.formats.squeue_select import pending_tasks

    if record.array_job_id is None:
        return [record.job_id]
    if whole_array:
        return backend.lookup.expand_id(record.array_job_id, None)
    tasks = sorted(pending_tasks(record)) if record.array_pending is not None else \
        [record.array_task_id]
    return [job_id for task in tasks
            for job_id in backend.lookup.expand_id(record.array_job_id, task)]


def cancel(backend: "Backend", record: JobRecord, step: Optional[str],
           whole_array: bool = False) -> ActionResult:
    """``scancel JOB`` or ``scancel JOB.STEP`` (``whole_array``: ``scancel ARRAY``), as
    scancel words what it came to."""
    from parsers.formats.messages import kill_job_error, kill_refused_error

    number = int(step) if step is not None and step.isdecimal() else None
    outcomes = [backend.cancel(target, None, step == "batch", False, number)
                for target in _targets(backend, record, whole_array and step is None)]
    job_text = str(record.array_job_id) if whole_array and record.array_job_id is not None \
        else record.job_id_text
    text = job_text if step is None else f"{job_text}.{step}"
    if outcomes and all(o == DONE for o in outcomes):
        return ActionResult(True)
    if whole_array and DONE in outcomes and REFUSED not in outcomes and \
            UNKNOWN not in outcomes:
        return ActionResult(True)      # scancel ARRAY: elements already ended do not count
    if REFUSED in outcomes:
        refused = kill_refused_error(job_text, step is not None)
        return ActionResult(False, refused.render("scancel").strip())
    reason = ("Invalid job id specified" if UNKNOWN in outcomes
              else "Job/step already completing or completed")
    error = kill_job_error(text, step is not None, False, reason)
    return ActionResult(False, error.render("scancel").strip())


def hold(backend: "Backend", record: JobRecord, release: bool) -> ActionResult:
    """``scontrol hold|release JOB`` for one pending job (or a pending array's line)."""
    text = record.job_id_text
    if record.state != PENDING:
        return ActionResult(False, f"Job has already finished for job {text}\n"
                                   "slurm_suspend error: Job has already finished")
    reason = None if release else (
        "JobHeldAdmin" if backend.identity.caller_is_operator() else "JobHeldUser")
    outcomes = [backend.set_hold(target, reason) for target in _targets(backend, record)]
    if REFUSED in outcomes:
        return ActionResult(False, f"Invalid user id for job {text}\n"
                                   "slurm_suspend error: Invalid user id")
    if outcomes and all(o == DONE for o in outcomes):
        return ActionResult(True)
    if UNKNOWN in outcomes:
        return ActionResult(False, f"Invalid job id specified for job {text}")
    return ActionResult(False, f"Job has already finished for job {text}\n"
                               "slurm_suspend error: Job has already finished")


def requeue(backend: "Backend", record: JobRecord) -> ActionResult:
    """``scontrol requeue JOB`` for one job or element, in scontrol's words."""
    from sbatch_k8s.cli.scontrol import REQUEUE_MESSAGES
    from sbatch_k8s.operation_errors import SbatchK8sError

    if record.array_pending is not None:
        return ActionResult(False, f"{record.job_id_text}: {REQUEUE_MESSAGES['pending']}")
    try:
        outcome = backend.requeue(record.job_id, False)
    except SbatchK8sError as e:
        return ActionResult(False, f"scontrol: error: {e}")
    if outcome == DONE:
        return ActionResult(True)
    return ActionResult(False, f"{REQUEUE_MESSAGES.get(outcome, outcome)} for job "
                               f"{record.job_id_text}")
