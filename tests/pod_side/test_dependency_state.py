"""When a dependent job may start: the pure evaluation every backend shares
(:mod:`parsers.dependency_state`) and the cluster's reading of it
(:func:`sbatch_k8s.runtime.cluster.release.eligibility`), table-driven. Runs on Python 3.8."""

from __future__ import annotations

from typing import Optional, Sequence

import pytest

from parsers.dependency_state import NEVER, OK, WAIT, target_verdict
from sbatch_k8s.runtime.cluster.release import KnownJob, Waiting, eligibility

NOW = 10_000.0


@pytest.mark.parametrize("kind, state, start, delay, verdict", [
    ("after", "PENDING", None, 0, WAIT),
    ("after", "RUNNING", NOW - 10, 0, OK),
    ("after", "RUNNING", NOW - 10, 1, WAIT),       # +1 minute after its start
    ("after", "RUNNING", NOW - 61, 1, OK),
    ("after", "CANCELLED", None, 0, OK),            # ended without starting
    ("afterany", "RUNNING", NOW, 0, WAIT),
    ("afterany", "FAILED", NOW, 0, OK),
    ("afterok", "COMPLETED", NOW, 0, OK),
    ("afterok", "TIMEOUT", NOW, 0, NEVER),
    ("aftercorr", "NODE_FAIL", NOW, 0, NEVER),
    ("afternotok", "COMPLETED", NOW, 0, NEVER),
    ("afternotok", "OUT_OF_MEMORY", NOW, 0, OK),
    ("afternotok", "RUNNING", NOW, 0, WAIT),
])
def test_one_target(kind: str, state: str, start: Optional[float], delay: int,
                    verdict: str) -> None:
    assert target_verdict(kind, state, start, delay, NOW) == verdict


def _job(job_id: int, state: str, name: str = "j", array: Optional[int] = None,
         task: Optional[int] = None, start: Optional[float] = None) -> KnownJob:
    return KnownJob(job_id, array, task, name, "alice", state, start)


def _waiting(dependency: str, job: Optional[KnownJob] = None,
             begin: Optional[float] = None) -> Waiting:
    return Waiting(job or _job(100, "PENDING"), dependency, begin, False, {}, {})


KNOWN: Sequence[KnownJob] = (
    _job(1, "COMPLETED"), _job(2, "FAILED"), _job(3, "RUNNING", start=NOW - 5),
    _job(10, "COMPLETED", array=10, task=0), _job(11, "FAILED", array=10, task=1),
    _job(12, "COMPLETED", array=10, task=2),
    _job(20, "PENDING", name="same"), _job(21, "COMPLETED", name="same"),
)


@pytest.mark.parametrize("dependency, reason", [
    ("afterok:1", "None"),
    ("afterok:2", "DependencyNeverSatisfied"),
    ("afternotok:2", "None"),
    ("afterok:1,afterok:3", "Dependency"),
    ("afterok:1,afterok:2", "DependencyNeverSatisfied"),  # one impossible fails all
    ("afterok:2?afterok:3", "Dependency"),                # ? waits for the live one
    ("afterok:2?afterok:1", "None"),
    ("afterok:2?afternotok:1", "DependencyNeverSatisfied"),
    ("after:3", "None"),
    ("after:3+1", "Dependency"),
    ("afterany:10", "None"),                              # every element ended
    ("afterok:10", "DependencyNeverSatisfied"),           # element 1 failed
    ("afterok:10_2", "None"),
    ("afterok:99", "DependencyNeverSatisfied"),           # an unknown job
    ("singleton", "Dependency"),                          # job 20 is pending
])
def test_eligibility(dependency: str, reason: str) -> None:
    waiting = _waiting(dependency, _job(100, "PENDING", name="same"))
    assert eligibility(waiting, KNOWN, NOW) == reason


def test_aftercorr_pairs_elements_by_task_id() -> None:
    element = _job(31, "PENDING", array=30, task=2)
    assert eligibility(_waiting("aftercorr:10", element), KNOWN, NOW) == "None"
    element = _job(30, "PENDING", array=30, task=1)
    assert eligibility(_waiting("aftercorr:10", element), KNOWN, NOW) == \
        "DependencyNeverSatisfied"


def test_singleton_of_another_name_or_a_later_job_does_not_wait() -> None:
    assert eligibility(_waiting("singleton", _job(100, "PENDING", name="other")), KNOWN,
                       NOW) == "None"
    assert eligibility(_waiting("singleton", _job(5, "PENDING", name="same")), KNOWN,
                       NOW) == "None"


def test_begin_time_comes_after_the_dependency() -> None:
    assert eligibility(_waiting("afterok:3", begin=NOW + 60), KNOWN, NOW) == "Dependency"
    assert eligibility(_waiting("afterok:1", begin=NOW + 60), KNOWN, NOW) == "BeginTime"
    assert eligibility(_waiting("", begin=NOW - 1), KNOWN, NOW) == "None"


#: Known jobs for the display table: 434 held, 435 an array of three held elements,
#: 442 completed, 443 failed (the ids Slurm 22.05 printed these lines with).
SHOWN_KNOWN = [_job(434, "PENDING"), _job(442, "COMPLETED", start=NOW),
               _job(443, "FAILED", start=NOW)] + [
    _job(435 + t, "PENDING", array=435, task=t) for t in range(3)]


@pytest.mark.parametrize("expression, shown", [
    ("afterok:434", "afterok:434(unfulfilled)"),
    ("afterok:435", "afterok:435_*(unfulfilled)"),
    ("aftercorr:435", "aftercorr:435_*(unfulfilled)"),
    ("afterany:434?afternotok:435_1", "afterany:434(unfulfilled)?afternotok:435_1(unfulfilled)"),
    ("after:434+5", "after:434+5(unfulfilled)"),
    ("afterok:442,afterok:434", "afterok:434(unfulfilled)"),
    ("afterany:442:434", "afterany:434(unfulfilled)"),
    ("afterok:443,afterok:434", "afterok:443(failed),afterok:434(unfulfilled)"),
    ("afterok:443?afterok:434", "afterok:443(failed)?afterok:434(unfulfilled)"),
    ("afterok:443?afterok:442", ""),
    ("afterok:442", ""),
    ("singleton", "singleton(unfulfilled)"),
    ("afterok:99", "afterok:99(failed)"),
])
def test_shown_dependency(expression: str, shown: str) -> None:
    from parsers.dependency_state import parsed_dependency, shown_dependency
    from sbatch_k8s.runtime.cluster.release import KnownJobs

    jobs = KnownJobs(SHOWN_KNOWN)
    me = _job(500, "PENDING")
    assert shown_dependency(parsed_dependency(expression), None, jobs.lookup,
                            lambda: True, jobs.names_array, NOW) == shown
    assert jobs.singleton_waits(me)() is True
