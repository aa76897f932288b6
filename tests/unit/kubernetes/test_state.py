"""The state table, row by row, for each workload kind: what the cluster shows → Slurm state,
reason and exit code (through :func:`live_record`, as squeue/sacct get them)."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Tuple

import pytest

from parsers.job_records import JobRecord, build
from sbatch_k8s.backends.kubernetes.history.records import live_record
from sbatch_k8s.backends.kubernetes.read.job_state import ALWAYS, STATE_TABLE, state_for
from tests.unit.kubernetes.cluster_objects import (
    DEADLINE,
    FAILED,
    KINDS,
    SCHEDULED,
    SUCCEEDED,
    SUSPENDED,
    T1_EPOCH,
    UNSCHEDULABLE,
    all_running,
    disrupted,
    pod,
    report,
    running,
    terminated,
    waiting,
    workload,
)

NODES = 3
NOW = T1_EPOCH + 60
QUEUE = {"kueue.x-k8s.io/queue-name": "gpu-queue"}
HOLD = {"sbatch-k8s.io/hold": "user"}

Objects = Tuple[Dict[str, Any], List[Dict[str, Any]]]


def _ended(kind: str, node0_state: Dict[str, Any], phase: str = "Succeeded",
           others: str = "Succeeded", conditions: Any = None) -> Objects:
    """Node 0 ended as given; the other nodes ended (exit 0, told to shut down)."""
    pods = [pod(kind, 0, phase, node0_state)]
    pods += [pod(kind, i, others, terminated(0)) for i in range(1, NODES)]
    return workload(kind, conditions or []), pods


#: name → (objects for a kind, expected state, reason, exit code, signal)
SCENARIOS: Dict[str, Tuple[Callable[[str], Objects], str, str, int, int]] = {
    "fresh: workload only": (lambda k: (workload(k), []), "PENDING", "None", 0, 0),
    "pods created, not scheduled yet": (
        lambda k: (workload(k), [pod(k, i, "Pending", None, [], bound=False)
                                 for i in range(NODES)]), "PENDING", "None", 0, 0),
    "some pods unschedulable": (
        lambda k: (workload(k), [pod(k, 0, "Running", running())] +
                   [pod(k, i, "Pending", None, UNSCHEDULABLE, bound=False)
                    for i in range(1, NODES)]), "PENDING", "Resources", 0, 0),
    "Kueue has not admitted it": (
        lambda k: (workload(k, SUSPENDED[k], True, labels=QUEUE), []),
        "PENDING", "Priority", 0, 0),
    "held by sbatch --hold": (
        lambda k: (workload(k, SUSPENDED[k], True, labels=QUEUE, annotations=HOLD), []),
        "PENDING", "JobHeldUser", 0, 0),
    "suspended by hand": (lambda k: (workload(k, SUSPENDED[k], True), []),
                          "PENDING", "JobHeldAdmin", 0, 0),
    "Kueue evicted it (suspended, old pods ending)": (
        lambda k: (workload(k, SUSPENDED[k], True, labels=QUEUE),
                   [pod(k, 0, "Failed", terminated(143, report=report("CANCELLED", 0, 15)))]),
        "PENDING", "Priority", 0, 0),
    "placed, images pulling": (
        lambda k: (workload(k), [pod(k, i, "Pending", waiting()) for i in range(NODES)]),
        "CONFIGURING", "None", 0, 0),
    "all pods running": (lambda k: (workload(k), all_running(k, NODES)), "RUNNING", "None",
                         0, 0),
    "node 0 done, others still running": (
        lambda k: (workload(k), [pod(k, 0, "Succeeded", terminated(0, report=report(
            "COMPLETED")))] + [pod(k, i, "Running", running()) for i in range(1, NODES)]),
        "COMPLETING", "None", 0, 0),
    "workload being deleted (scancel)": (
        lambda k: (workload(k, deleting=True), [pod(k, i, "Running", running(), deleting=True)
                                                for i in range(NODES)]),
        "COMPLETING", "None", 0, 0),
    "pods terminating, workload kept": (
        lambda k: (workload(k), [pod(k, i, "Running", running(), deleting=True)
                                 for i in range(NODES)]), "COMPLETING", "None", 0, 0),
    "deleted, pods gone": (lambda k: (workload(k, deleting=True), []),
                           "COMPLETING", "None", 0, 0),
    "completed (report)": (
        lambda k: _ended(k, terminated(0, report=report("COMPLETED")), conditions=SUCCEEDED[k]),
        "COMPLETED", "None", 0, 0),
    "completed (no report)": (lambda k: _ended(k, terminated(0), conditions=SUCCEEDED[k]),
                              "COMPLETED", "None", 0, 0),
    "completed, pods gone": (lambda k: (workload(k, SUCCEEDED[k]), []),
                             "COMPLETED", "None", 0, 0),
    "script failed (report)": (
        lambda k: _ended(k, terminated(3, report=report("FAILED", 3, 0, "NonZeroExitCode")),
                         "Failed", conditions=FAILED[k]), "FAILED", "NonZeroExitCode", 3, 0),
    "script killed by a signal (report)": (
        lambda k: _ended(k, terminated(137, report=report("FAILED", 0, 9, "JobLaunchFailure")),
                         "Failed"), "FAILED", "JobLaunchFailure", 0, 9),
    "runtime failed without a report (no python3)": (
        lambda k: _ended(k, terminated(127, message="sbatch-k8s: error: image has no "
                                                    "python3"), "Failed", "Failed"),
        "FAILED", "NonZeroExitCode", 127, 0),
    "workload failed, pods gone": (lambda k: (workload(k, FAILED[k]), []),
                                   "FAILED", "NonZeroExitCode", 0, 0),
    "time limit (report)": (
        lambda k: _ended(k, terminated(0, report=report("TIMEOUT", 0, 15, "TimeLimit")),
                         "Failed"), "TIMEOUT", "TimeLimit", 0, 15),
    "deadline exceeded, pods deleted": (lambda k: (workload(k, DEADLINE[k]), []),
                                        "TIMEOUT", "TimeLimit", 0, 0),
    "deadline exceeded, runtime saw SIGTERM": (
        lambda k: _ended(k, terminated(0, report=report("CANCELLED", 0, 15)), "Failed",
                         conditions=DEADLINE[k]), "TIMEOUT", "TimeLimit", 0, 15),
    "pod activeDeadlineSeconds": (
        lambda k: (workload(k), [pod(k, 0, "Failed", terminated(137), reason="DeadlineExceeded")]
                   + [pod(k, i, "Failed", terminated(1)) for i in range(1, NODES)]),
        "TIMEOUT", "TimeLimit", 0, 9),
    "cancelled (report)": (
        lambda k: _ended(k, terminated(0, report=report("CANCELLED", 0, 15)), "Failed"),
        "CANCELLED", "None", 0, 15),
    "node 0 OOM-killed": (
        lambda k: _ended(k, terminated(137, "OOMKilled"), "Failed"),
        "OUT_OF_MEMORY", "OutOfMemory", 0, 9),
    "a worker OOM-killed, script failed": (
        lambda k: (workload(k), [pod(k, 0, "Failed", terminated(1, report=report(
            "FAILED", 1, 0, "NonZeroExitCode"))), pod(k, 1, "Failed", terminated(
                137, "OOMKilled"))] + [pod(k, i, "Succeeded", terminated(0))
                                       for i in range(2, NODES)]),
        "OUT_OF_MEMORY", "OutOfMemory", 1, 0),
    "a worker OOM-killed, script still completed": (
        lambda k: (workload(k), [pod(k, 0, "Succeeded", terminated(0, report=report(
            "COMPLETED"))), pod(k, 1, "Failed", terminated(137, "OOMKilled"))] +
                   [pod(k, i, "Succeeded", terminated(0)) for i in range(2, NODES)]),
        "COMPLETED", "None", 0, 0),
    "a worker preempted": (
        lambda k: (workload(k), [pod(k, 0, "Failed", terminated(1, report=report(
            "FAILED", 0, 0, "NodeFail"))), pod(k, 1, "Failed", terminated(143),
                                               disrupted("PreemptionByScheduler"))] +
                   [pod(k, i, "Succeeded", terminated(0)) for i in range(2, NODES)]),
        "PREEMPTED", "None", 0, 0),
    "node 0 evicted (kubelet memory pressure)": (
        lambda k: (workload(k), [pod(k, 0, "Failed", terminated(0, report=report(
            "CANCELLED", 0, 15)), disrupted("TerminationByKubelet"), reason="Evicted")] +
                   [pod(k, i, "Succeeded", terminated(0)) for i in range(1, NODES)]),
        "PREEMPTED", "None", 0, 0),
    "a worker evicted and gone, node 0 heard it stop": (
        lambda k: _ended(k, terminated(1, report=report("PREEMPTED", 0, 0)), "Failed"),
        "PREEMPTED", "None", 0, 0),
    "a worker's node lost (taint manager)": (
        lambda k: (workload(k), [pod(k, 0, "Failed", terminated(1, report=report(
            "FAILED", 0, 0, "NodeFail"))), pod(k, 1, "Running", running(),
                                               disrupted("DeletionByTaintManager"),
                                               deleting=True)] +
                   [pod(k, i, "Succeeded", terminated(0)) for i in range(2, NODES)]),
        "COMPLETING", "None", 0, 0),
    "a worker's node lost, its pod gone by PodGC": (
        lambda k: (workload(k), [pod(k, 0, "Failed", terminated(1, report=report(
            "FAILED", 0, 0, "NodeFail"))), pod(k, 1, "Failed", None,
                                               disrupted("DeletionByPodGC"))] +
                   [pod(k, i, "Succeeded", terminated(0)) for i in range(2, NODES)]),
        "NODE_FAIL", "NodeDown", 0, 0),
    "node 0's node unreachable": (
        lambda k: (workload(k), [pod(k, 0, "Unknown", running(), reason="NodeLost")] +
                   [pod(k, i, "Failed", terminated(1)) for i in range(1, NODES)]),
        "NODE_FAIL", "NodeDown", 0, 0),
    "a pod replaced after preemption, job runs on": (
        lambda k: (workload(k), [pod(k, 1, "Failed", terminated(143),
                                     disrupted("PreemptionByScheduler"))] +
                   [pod(k, i, "Running", running(), created="2026-11-22T09:05:00Z")
                    for i in range(NODES)]), "RUNNING", "None", 0, 0),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_cluster_state_to_slurm_state(scenario: str, kind: str) -> None:
    objects, state, reason, code, signal = SCENARIOS[scenario]
    found, pods = objects(kind)
    stored = build(JobRecord, job_id=1234, name="llm", user="alice", uid=1000, group="alice",
                   gid=1000, partition="gpu", state="PENDING", node_count=NODES,
                   submit_time=T1_EPOCH - 900)
    record = live_record(stored, found, pods, NOW)
    assert (record.state, record.reason, record.exit_code, record.exit_signal) == \
        (state, reason, code, signal)


def test_every_row_is_reached() -> None:
    """Each row of the table decides some scenario (or the record's own facts)."""
    reached = {SCENARIOS[name][1:3] for name in SCENARIOS}
    from_record = {("PENDING", "BeginTime"), ("PENDING", "Dependency"),
                   ("PENDING", "DependencyNeverSatisfied"),
                   ("PENDING", "job requeued in held state")}
    assert {(row.state, row.reason) for row in STATE_TABLE} <= reached | from_record


def test_lookup_is_total() -> None:
    assert state_for(set()) == ("PENDING", "None")
    assert state_for({"no such fact"}) == ("PENDING", "None")
    assert STATE_TABLE[-1].fact == ALWAYS


@pytest.mark.parametrize("reason", ["Dependency", "BeginTime", "DependencyNeverSatisfied",
                                    "job requeued in held state"])
def test_suspended_job_keeps_why_its_record_waits(reason: str) -> None:
    stored = build(JobRecord, job_id=1234, name="llm", user="alice", uid=1000, group="alice",
                   gid=1000, partition="gpu", state="PENDING", reason=reason, node_count=1)
    held = workload("Job", SUSPENDED["Job"], True, labels=QUEUE)
    assert live_record(stored, held, [], NOW).reason == reason
    released = live_record(stored, workload("Job"), all_running("Job", 1), NOW)
    assert (released.state, released.reason) == ("RUNNING", "None")


def test_scheduling_gate_without_kueue_is_an_admin_hold() -> None:
    stored = build(JobRecord, job_id=1234, name="llm", user="alice", uid=1000, group="alice",
                   gid=1000, partition="gpu", state="PENDING", node_count=1)
    gated = [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]
    record = live_record(stored, workload("Job"), [pod("Job", 0, "Pending", None, gated,
                                                       bound=False)], NOW)
    assert (record.state, record.reason, record.priority) == ("PENDING", "JobHeldAdmin", 0)
    queued = live_record(stored, workload("Job", labels=QUEUE),
                         [pod("Job", 0, "Pending", None, gated, bound=False)], NOW)
    assert queued.reason == "Priority"


def test_scheduled_condition_is_not_needed_for_running() -> None:
    stored = build(JobRecord, job_id=1234, name="llm", user="alice", uid=1000, group="alice",
                   gid=1000, partition="gpu", state="PENDING", node_count=1)
    record = live_record(stored, workload("Job"), [pod("Job", 0, "Running", running(),
                                                       SCHEDULED[:0])], NOW)
    assert record.state == "RUNNING"
