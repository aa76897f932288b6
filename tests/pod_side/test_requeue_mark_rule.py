"""A requeued job is not over (:mod:`sbatch_k8s.runtime.cluster.release`, ``requeueing``): while its
record carries a requeue's mark, node 0's decisions count it as not ended, so nothing waiting
for it is released or failed by the run that ended. Runs on Python 3.8."""

from __future__ import annotations

import json
from typing import Any, Dict, Optional

from parsers.vocabulary import REPORT_KEY
from sbatch_k8s.runtime.cluster.job_end import known_from_config_map
from sbatch_k8s.runtime.cluster.release import (
    DEPENDENCY,
    NEVER_SATISFIED,
    REQUEUE_MARK_TTL_S,
    REQUEUEING_ANNOTATION,
    Waiting,
    eligibility,
    known_job,
    requeueing,
)
from parsers.vocabulary import RECORD_KEY
from sbatch_k8s.runtime.cluster.workload_gates import ELIGIBLE

NOW = 1_800_000_000


def _record(job_id: int, state: str, mark: Optional[str] = None, label: str = "active",
            report: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    values = {"job_id": job_id, "name": "a", "user": "u", "state": state, "start_time": NOW - 9}
    data = {RECORD_KEY: json.dumps(values)}
    if report is not None:
        data[REPORT_KEY] = json.dumps(report)
    annotations = {REQUEUEING_ANNOTATION: mark} if mark is not None else {}
    return {"metadata": {"name": f"sbatch-k8s-job-{job_id}", "annotations": annotations,
                         "labels": {"sbatch-k8s.io/state": label}}, "data": data}


def _waiting(dependency: str) -> Waiting:
    job = known_job({"job_id": 2, "name": "b", "user": "u", "state": "PENDING"})
    return Waiting(job, dependency, None, False, {}, {"kind": "Job", "name": "b-2"})


def test_a_fresh_mark_is_a_requeue_in_progress_and_an_old_one_is_not() -> None:
    assert requeueing(_record(1, "RUNNING", str(NOW - 5)), NOW)
    assert requeueing(_record(1, "RUNNING", "not a number"), NOW)
    assert not requeueing(_record(1, "RUNNING", str(NOW - REQUEUE_MARK_TTL_S)), NOW)
    assert not requeueing(_record(1, "RUNNING"), NOW)
    assert not requeueing(_record(1, "RUNNING", ""), NOW)
    assert not requeueing(None, NOW)


def test_a_marked_job_is_not_ended_whatever_its_record_or_report_says() -> None:
    import time

    mark = str(int(time.time()))
    cancelled = {"state": "CANCELLED", "start_time": NOW - 9, "end_time": NOW}
    for config_map in (_record(1, "RUNNING", mark, report=cancelled),
                       _record(1, "PENDING", mark, label="CANCELLED", report=cancelled),
                       _record(1, "CANCELLED", mark, label="CANCELLED")):
        known = known_from_config_map(config_map)
        assert known is not None and known.state == "COMPLETING", config_map
        # afterany and afterok wait; afternotok is not failed either.
        assert eligibility(_waiting("afterany:1"), [known], NOW) == DEPENDENCY
        assert eligibility(_waiting("afterok:1"), [known], NOW) == DEPENDENCY
        assert eligibility(_waiting("afternotok:1"), [known], NOW) == DEPENDENCY
    # Without the mark, the same report ends the job: afterany may start, afterok never.
    ended = known_from_config_map(_record(1, "CANCELLED", label="CANCELLED"))
    assert ended is not None and ended.state == "CANCELLED"
    assert eligibility(_waiting("afterany:1"), [ended], NOW) == ELIGIBLE
    assert eligibility(_waiting("afterok:1"), [ended], NOW) == NEVER_SATISFIED
