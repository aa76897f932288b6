"""The start and eligible times of pending jobs, against real Slurm 22.05.

Recorded on the real-slurm cluster (``sbatch --begin=now+1hour``, ``-H``, ``-d afterok:``,
a job pending on Resources, ``-H --begin``/``-d --begin`` with ``-t 2``, a job requeued with
``scontrol requeue`` and ``-t 10``): a pending job shows its begin time as ``StartTime``
while that lies ahead, whatever else it waits for, and ``EndTime`` is that plus a finite
limit; other pending jobs show ``Unknown``/``N/A`` (until the backfill scheduler estimates
one, which sbatch-k8s does not). ``sacct``'s ``Start`` stays ``Unknown``; ``Eligible`` is the
begin time, or ``Unknown`` for a held or dependent job without one.
"""

from __future__ import annotations

from typing import List

import pytest

from parsers.formats import job_values as jv
from parsers.formats.sacct_format import format_sacct, parse_format
from parsers.formats.scontrol_show import show_job_lines
from parsers.formats.squeue_format import format_squeue, format_squeue_fields
from parsers.formats.squeue_sort import sort_jobs
from parsers.job_records import JobRecord
from tests.pod_side.formats.builders import job, ts

SUBMIT = ts("2026-11-23T14:21:33")
NOW = ts("2026-11-23T14:21:36")


def _pending(job_id: int, reason: str, **fields: object) -> JobRecord:
    base = dict(submit_time=SUBMIT, reason=reason)
    base.update(fields)
    return job(job_id, "wrap", "PENDING", **base)


#: Jobs 497-501 of the recording, and 515-516 (submitted at 14:25:21 with -t 2).
BEGIN = _pending(497, "BeginTime", begin_time=ts("2026-11-23T15:21:33"),
                 eligible_time=ts("2026-11-23T15:21:33"))
HELD = _pending(498, "JobHeldUser", priority=0)
DEPENDENT = _pending(500, "Dependency", dependency="afterok:499(unfulfilled)")
RESOURCES = _pending(501, "Resources", eligible_time=SUBMIT)
LATER = ts("2026-11-23T15:25:21")
HELD_BEGIN = _pending(515, "JobHeldUser", priority=0, submit_time=ts("2026-11-23T14:25:21"),
                      begin_time=LATER, eligible_time=LATER, time_limit_min=2)
DEPENDENT_BEGIN = _pending(516, "Dependency", submit_time=ts("2026-11-23T14:25:21"),
                           begin_time=LATER, eligible_time=LATER, time_limit_min=2,
                           dependency="afterok:510(unfulfilled)")
#: Job 509, requeued at 14:22:41: begins 121 s later; its limit is 10 minutes.
REQUEUED_AT = ts("2026-11-23T14:22:41")
REQUEUED = _pending(509, "BeginTime", submit_time=REQUEUED_AT, restarts=1,
                    begin_time=REQUEUED_AT + 121, eligible_time=REQUEUED_AT + 121,
                    time_limit_min=10)


def _times(record: JobRecord, now: int) -> List[str]:
    """The time lines of ``scontrol show job`` (without the AccrueTime line)."""
    return [line for line in show_job_lines(record, now)
            if line.startswith(("SubmitTime=", "StartTime="))]


@pytest.mark.parametrize("record, lines", [
    (BEGIN, ["SubmitTime=2026-11-23T14:21:33 EligibleTime=2026-11-23T15:21:33",
             "StartTime=2026-11-23T15:21:33 EndTime=Unknown Deadline=N/A"]),
    (HELD, ["SubmitTime=2026-11-23T14:21:33 EligibleTime=Unknown",
            "StartTime=Unknown EndTime=Unknown Deadline=N/A"]),
    (DEPENDENT, ["SubmitTime=2026-11-23T14:21:33 EligibleTime=Unknown",
                 "StartTime=Unknown EndTime=Unknown Deadline=N/A"]),
    (RESOURCES, ["SubmitTime=2026-11-23T14:21:33 EligibleTime=2026-11-23T14:21:33",
                 "StartTime=Unknown EndTime=Unknown Deadline=N/A"]),
    (HELD_BEGIN, ["SubmitTime=2026-11-23T14:25:21 EligibleTime=2026-11-23T15:25:21",
                  "StartTime=2026-11-23T15:25:21 EndTime=2026-11-23T15:27:21 Deadline=N/A"]),
    (DEPENDENT_BEGIN, ["SubmitTime=2026-11-23T14:25:21 EligibleTime=2026-11-23T15:25:21",
                       "StartTime=2026-11-23T15:25:21 EndTime=2026-11-23T15:27:21 "
                       "Deadline=N/A"]),
    (REQUEUED, ["SubmitTime=2026-11-23T14:22:41 EligibleTime=2026-11-23T14:24:42",
                "StartTime=2026-11-23T14:24:42 EndTime=2026-11-23T14:34:42 Deadline=N/A"]),
], ids=["begin", "held", "dependency", "resources", "held-begin", "dependency-begin",
        "requeued"])
def test_scontrol_times(record: JobRecord, lines: List[str]) -> None:
    assert _times(record, NOW if record.job_id < 509 else REQUEUED_AT + 1) == lines


def test_begin_time_gone_by_shows_unknown() -> None:
    """Once the begin time has passed a job still pending shows no start (real Slurm: the
    requeued job 509 at 14:25, a held job whose begin time came); the eligible time stays."""
    later = REQUEUED_AT + 200
    assert _times(REQUEUED, later) == [
        "SubmitTime=2026-11-23T14:22:41 EligibleTime=2026-11-23T14:24:42",
        "StartTime=Unknown EndTime=Unknown Deadline=N/A"]
    assert format_squeue([REQUEUED], "%i %S %T %r", later, header=False) == \
        "509 N/A PENDING BeginTime\n"


def test_squeue_start_column() -> None:
    out = format_squeue([BEGIN, DEPENDENT, RESOURCES, HELD], "%i %S %T %r", NOW)
    assert out == ("JOBID START_TIME STATE REASON\n"
                   "497 2026-11-23T15:21:33 PENDING BeginTime\n"
                   "500 N/A PENDING Dependency\n"
                   "501 N/A PENDING Resources\n"
                   "498 N/A PENDING JobHeldUser\n")


def test_squeue_start_eligible_end_fields() -> None:
    dependent = _pending(517, "Dependency", submit_time=ts("2026-11-23T14:25:21"),
                         time_limit_min=2, dependency="afterok:510(unfulfilled)")
    out = format_squeue_fields([DEPENDENT_BEGIN, dependent, HELD_BEGIN],
                               "JobID,StartTime,EligibleTime,EndTime,Reason", NOW)
    assert out == (
        "JOBID               START_TIME          ELIGIBLE_TIME       END_TIME            "
        "REASON              \n"
        "516                 2026-11-23T15:25:21 2026-11-23T15:25:21 2026-11-23T15:27:21 "
        "Dependency          \n"
        "517                 N/A                 N/A                 N/A                 "
        "Dependency          \n"
        "515                 2026-11-23T15:25:21 2026-11-23T15:25:21 2026-11-23T15:27:21 "
        "JobHeldUser         \n")


def test_sacct_start_stays_unknown() -> None:
    out = format_sacct([BEGIN, HELD, DEPENDENT, RESOURCES, HELD_BEGIN],
                       parse_format("JobID,Start,Eligible,State"), NOW)
    assert out == (
        "JobID                      Start            Eligible      State \n"
        "------------ ------------------- ------------------- ---------- \n"
        "497                      Unknown 2026-11-23T15:21:33    PENDING \n"
        "498                      Unknown             Unknown    PENDING \n"
        "500                      Unknown             Unknown    PENDING \n"
        "501                      Unknown 2026-11-23T14:21:33    PENDING \n"
        "515                      Unknown 2026-11-23T15:25:21    PENDING \n")


def test_sort_by_start_time_ranks_begin_times() -> None:
    """``-S S``: jobs with a start time (a begin time ahead counts) by it, the others after."""
    sooner = _pending(520, "BeginTime", begin_time=NOW + 60, eligible_time=NOW + 60)
    order = sort_jobs([BEGIN, RESOURCES, sooner], "S", NOW)
    assert [j.job_id for j in order][:2] == [520, 497]


@pytest.mark.parametrize("state, begin, start, shown", [
    ("PENDING", NOW + 5, None, NOW + 5),
    ("PENDING", NOW, None, None),
    ("PENDING", NOW - 5, None, None),
    ("PENDING", None, None, None),
    ("PENDING", None, NOW - 9, None),  # a stale start of an earlier run is not shown
    ("RUNNING", NOW - 5, NOW - 2, NOW - 2),
    ("COMPLETED", None, NOW - 9, NOW - 9),
])
def test_shown_start(state: str, begin: object, start: object, shown: object) -> None:
    record = job(1, "x", state, begin_time=begin, start_time=start)
    assert jv.shown_start(record, NOW) == shown


@pytest.mark.parametrize("begin, waits, eligible", [
    (NOW + 60, True, NOW + 60),   # held or dependent with a begin time ahead: the begin time
    (NOW + 60, False, NOW + 60),
    (NOW - 60, False, NOW),       # released after its begin time: now
    (NOW - 60, True, None),
    (None, True, None),           # held, or waiting for a dependency
    (None, False, NOW),
])
def test_eligible_from(begin: object, waits: bool, eligible: object) -> None:
    assert jv.eligible_from(begin, waits, NOW) == eligible


def test_squeue_end_of_a_shown_start_without_limit() -> None:
    """``%e``: NONE for a job without limit that shows a start (real: a held job with
    ``--begin``), N/A for one that shows none."""
    held_begin = _pending(515, "JobHeldUser", priority=0, begin_time=LATER, eligible_time=LATER)
    out = format_squeue([held_begin, HELD], "%i %S %e", NOW, header=False)
    assert out == "515 2026-11-23T15:25:21 NONE\n498 N/A N/A\n"
