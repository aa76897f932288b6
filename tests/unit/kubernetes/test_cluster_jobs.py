"""Joining records with what the cluster shows
(:mod:`sbatch_k8s.backends.kubernetes.read.cluster_jobs`): a record whose workload is not there yet
is being submitted, not vanished; the elements of an array run as one Indexed Job wait as the array
does."""

from __future__ import annotations

from typing import Any, Dict

from parsers.job_records import JobRecord, build
from sbatch_k8s.backends.kubernetes.read.cluster_jobs import (
    SUBMIT_GRACE_S,
    ClusterView,
    joined_records,
)
from sbatch_k8s.backends.kubernetes.history.records import record_config_map
from tests.unit.kubernetes.test_records import submitted

REF = {"apiVersion": "batch/v1", "kind": "Job", "name": "llm-1234", "namespace": "ns"}


def _alone() -> ClusterView:
    """A job's record, with neither workload nor pods."""
    record = submitted()
    return ClusterView([(record, dict(REF), record_config_map(record, REF))], {}, {})


def test_a_record_without_workload_is_being_submitted_while_young() -> None:
    submit_time = submitted().submit_time
    assert submit_time is not None
    young = joined_records(None, _alone(), submit_time + 1,  # type: ignore[arg-type]
                           reconcile=False)  # one second after sbatch
    assert [(r.state, r.reason) for r in young] == [("PENDING", submitted().reason)]
    old = joined_records(None, _alone(), submit_time + SUBMIT_GRACE_S,
                         reconcile=False)  # type: ignore[arg-type]
    assert [(r.state, r.reason) for r in old] == [("NODE_FAIL", "NodeDown")]


def _element(task: int, throttle: Any = None) -> JobRecord:
    return build(JobRecord, job_id=260 + task, name="wrap", user="alice", uid=1000,
                 group="alice", gid=1000, partition="debug", state="PENDING",
                 reason="JobHeldUser", array_job_id=260, array_task_id=task, node_count=1,
                 array_throttle=throttle, submit_time=1)


def _shared_view(annotations: Dict[str, str], suspend: bool, running: int,
                 throttle: Any = None) -> ClusterView:
    """Elements 0-5 of array 260, run as one Indexed Job (labelled with 260); ``running`` of
    them have a live pod."""
    from tests.unit.kubernetes.cluster_objects import SUSPENDED, pod, workload
    from tests.unit.kubernetes.cluster_objects import running as up

    job = workload("Job", SUSPENDED["Job"] if suspend else (), suspend=suspend,
                   labels={"sbatch-k8s.io/job-id": "260"}, annotations=annotations)
    ref = {"apiVersion": "batch/v1", "kind": "Job", "name": job["metadata"]["name"]}
    pods = [pod("Job", i, "Running", up()) for i in range(running)]
    return ClusterView([(_element(t, throttle), ref, {}) for t in range(6)],
                       {("Job", job["metadata"]["name"]): job}, {"260": pods})


def test_elements_of_a_held_array_are_held_and_not_throttled() -> None:
    """Issue 15, item 16: element 0 showed JobHeldUser, the others JobArrayTaskLimit though
    no ``%`` was given. Every element waits as the array does; JobArrayTaskLimit only with a
    limit that many running elements reach."""
    no_client: Any = None       # reconcile=False: nothing is written back
    held = joined_records(no_client, _shared_view({"sbatch-k8s.io/hold": "user"}, True, 0),
                          100, reconcile=False)
    assert {(r.state, r.reason) for r in held} == {("PENDING", "JobHeldUser")}
    free = joined_records(no_client, _shared_view({}, False, 0), 100, reconcile=False)
    assert {r.reason for r in free} == {"None"}
    throttled = joined_records(no_client, _shared_view({}, False, 2, throttle=2), 100,
                               reconcile=False)
    assert [(r.array_task_id, r.state, r.reason) for r in throttled][2:] == [
        (t, "PENDING", "JobArrayTaskLimit") for t in range(2, 6)]
