"""A job's page: its record as ``scontrol show job`` prints it, its steps as sacct lists
them, why it waits, what it depends on, and what the page may offer to do with it."""

from __future__ import annotations

from typing import Any, Dict, List, Sequence

from parsers.formats.job_values import exit_code_text
from parsers.formats.states import is_pending, state_compact
from parsers.job_records import JobRecord, StepRecord
from sbatch_k8s.ui.reasons import pending_sentence

#: States in which a job still holds (or waits for) resources: cancel applies.
ACTIVE_STATES = ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED",
                 "REQUEUED", "RESIZING")
#: Pending reasons that are holds: release applies, hold does not.
HELD_REASONS = ("JobHeldUser", "JobHeldAdmin", "job requeued in held state")


def dependency_ids(record: JobRecord) -> List[int]:
    """The jobs ``--dependency`` names (empty when none, or when it cannot be read)."""
    from parsers.dependency_state import dependency_targets, parsed_dependency

    if not record.dependency:
        return []
    try:
        return dependency_targets(parsed_dependency(record.dependency.split("(")[0]))
    except Exception:  # a stored expression the parser refuses: shown as text only
        return []


def step_rows(record: JobRecord, running: Sequence[StepRecord]) -> List[Dict[str, Any]]:
    """The record's steps (sacct's), then running ones it does not hold yet (squeue -s)."""
    steps = list(record.steps)
    known = {s.step_id for s in steps}
    steps += [s for s in running if s.step_id not in known]
    return [{"id": f"{record.job_id_text}.{s.step_id}", "step": s.step_id, "name": s.name,
             "state": s.state, "st": state_compact(s.state) if s.state else "",
             "exit": exit_code_text(s.exit_code, s.exit_signal), "nodes": s.node_list,
             "ntasks": s.ntasks, "start": s.start_time, "end": s.end_time,
             "cancellable": s.state == "RUNNING" and s.step_id not in ("extern",)}
            for s in steps]


def actions(record: JobRecord) -> Dict[str, bool]:
    """The buttons the page shows (the backend still decides, and says why it refuses)."""
    active = record.state in ACTIVE_STATES
    pending = is_pending(record.state)
    return {"cancel": active, "hold": pending and record.reason not in HELD_REASONS,
            "release": pending and record.reason in HELD_REASONS,
            "requeue": True, "resubmit": True}


def job_json(record: JobRecord, running: Sequence[StepRecord], now: int) -> Dict[str, Any]:
    """Everything the job page shows besides nodes, logs, events and YAML."""
    from parsers.formats.scontrol_show import format_show_jobs

    return {
        "key": record.job_id_text, "job_id": record.job_id, "name": record.name,
        "user": record.user, "uid": record.uid, "partition": record.partition,
        "state": record.state, "st": state_compact(record.state), "reason": record.reason,
        "array_job_id": record.array_job_id, "array_task_id": record.array_task_id,
        "node_count": record.node_count, "node_list": record.node_list,
        "submit_time": record.submit_time, "start_time": record.start_time,
        "end_time": record.end_time,
        "exit": exit_code_text(record.exit_code, record.exit_signal),
        "work_dir": record.work_dir, "comment": record.system_comment,
        "pending": pending_sentence(record),
        "dependency": record.dependency, "depends_on": dependency_ids(record),
        "steps": step_rows(record, running), "actions": actions(record),
        "scontrol": format_show_jobs([record], now),
    }
