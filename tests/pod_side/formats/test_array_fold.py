"""An array's never-started elements as one record (:mod:`parsers.formats.array_fold`), as
slurmctld keeps them and real Slurm 22.05 shows them: ``--hold --array=0-99`` is
``260_[0-99]``; with ``%2`` reached, the waiting line says JobArrayTaskLimit beside the two
running tasks — squeue's line first, sacct's last; ``scontrol show job 260_7`` is task 7
of the line."""

from __future__ import annotations

from parsers.formats.array_fold import fold_pending_arrays, pending_element
from parsers.job_records import JobRecord
from tests.pod_side.formats.builders import job


def _element(task: int, state: str = "PENDING", **fields: object) -> JobRecord:
    return job(260 + task, "wrap", state, array_job_id=260, array_task_id=task, **fields)


def test_a_held_array_is_one_record() -> None:
    folded = fold_pending_arrays([_element(t, reason="JobHeldUser") for t in range(100)])
    assert len(folded) == 1
    line = folded[0]
    assert (line.job_id, line.array_task_id, line.array_pending, line.reason) == (
        260, None, "0-99", "JobHeldUser")
    assert line.job_id_text == "260_[0-99]"


def test_started_tasks_stand_apart_and_a_reached_limit_is_the_reason() -> None:
    elements = [_element(0, "RUNNING", start_time=1), _element(1, "RUNNING", start_time=1)] + \
        [_element(t, reason="None", array_throttle=2) for t in range(2, 6)]
    squeue = fold_pending_arrays(elements)
    assert [(r.job_id_text, r.reason) for r in squeue] == [
        ("260_[2-5%2]", "JobArrayTaskLimit"), ("260_0", "None"), ("260_1", "None")]
    sacct = fold_pending_arrays(elements, waiting_last=True)
    assert [r.job_id_text for r in sacct] == ["260_0", "260_1", "260_[2-5%2]"]


def test_a_requeued_element_keeps_its_line_and_other_jobs_pass_through() -> None:
    lone = job(5, "other", "PENDING")
    requeued = _element(3, restarts=1)
    folded = fold_pending_arrays([lone, requeued, _element(4)])
    assert [r.job_id_text for r in folded] == ["5", "260_[4]", "260_3"]


def test_one_task_of_a_line_as_scontrol_shows_it() -> None:
    line, = fold_pending_arrays([_element(t, reason="JobHeldUser") for t in range(10)])
    seven = pending_element(line, 7)
    assert seven is not None
    assert (seven.job_id, seven.array_task_id, seven.array_pending) == (260, 7, None)
    assert pending_element(line, 70) is None
