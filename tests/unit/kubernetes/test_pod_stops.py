"""How a job's end reads when the cluster, not its script, ended it (seen on real nodes):
node 0's pod deleted while it ran (its message gone with it), and containerd's ``OOMKilled``,
which it says whenever the pod's cgroup counted a kill, even when the runtime lived on and
reported the step's out-of-memory end itself."""

from __future__ import annotations

from typing import Any, Dict, List

from parsers.job_records import JobRecord, build
from sbatch_k8s.backends.kubernetes.history.records import live_record
from tests.unit.kubernetes.cluster_objects import NAME, T1_EPOCH, pod, report, terminated, \
    workload

NOW = T1_EPOCH + 60


def _record() -> JobRecord:
    return build(JobRecord, job_id=1234, name="llm", user="u", uid=1, group="g", gid=1,
                 partition="debug", state="RUNNING", node_count=2, start_time=T1_EPOCH - 500)


def _failed_on(index: int, code: int) -> List[Dict[str, Any]]:
    """A Job failed by its pod failure policy on the exit of node ``index``'s container, as
    the 1.28 Job controller words it."""
    message = (f"Container main for pod default/{NAME}-{index}-x7k2p failed with exit code "
               f"{code} matching FailJob rule at index 1")
    return [{"type": "FailureTarget", "status": "True", "reason": "PodFailurePolicy",
             "message": message},
            {"type": "Failed", "status": "True", "reason": "PodFailurePolicy",
             "message": message}]


def _state(job: Any, pods: List[Dict[str, Any]]) -> tuple:
    record = live_record(_record(), job, pods, NOW)
    return record.state, record.reason, record.exit_code, record.exit_signal


def test_node0_pod_deleted_while_it_ran_is_a_node_failure() -> None:
    """kubectl delete pod of node 0: its runtime exits 143, the Job fails on that exit, and
    the pod goes (a failed pod the Job controller would have kept): NODE_FAIL, NodeDown."""
    assert _state(workload("Job", _failed_on(0, 143)), [])[:2] == ("NODE_FAIL", "NodeDown")


def test_another_nodes_exit_failing_the_job_stays_a_failure() -> None:
    """The Job failed on node 1's exit: node 0 was stopped by the Job controller, not lost."""
    assert _state(workload("Job", _failed_on(1, 1)), [])[:2] == ("FAILED", "NonZeroExitCode")


def test_node0_still_there_decides() -> None:
    """With node 0's pod and its report still there, the report is the job's end."""
    node0 = pod("Job", 0, "Failed", terminated(3, report=report("FAILED", 3, 0,
                                                                "NonZeroExitCode")))
    assert _state(workload("Job", _failed_on(0, 3)), [node0]) == \
        ("FAILED", "NonZeroExitCode", 3, 0)


def test_oomkilled_with_a_report_is_what_the_report_says() -> None:
    """containerd's OOMKilled on a runtime that exited after reporting: its report (a step
    ran out of memory, the script carried on) decides, not the reason."""
    for state, code, want in (("COMPLETED", 0, "COMPLETED"), ("FAILED", 1, "FAILED")):
        node0 = pod("Job", 0, "Succeeded" if code == 0 else "Failed",
                    terminated(code, "OOMKilled", report=report(state, code, 0)))
        others = [pod("Job", 1, "Succeeded", terminated(0))]
        assert _state(workload("Job"), [node0] + others)[0] == want


def test_the_batch_steps_oom_reported_by_node0() -> None:
    node0 = pod("Job", 0, "Succeeded", terminated(
        0, "OOMKilled", report=report("OUT_OF_MEMORY", 0, 125, "OutOfMemory")))
    others = [pod("Job", 1, "Succeeded", terminated(0))]
    assert _state(workload("Job"), [node0] + others) == ("OUT_OF_MEMORY", "OutOfMemory", 0,
                                                         125)


def test_a_runtime_killed_by_the_oom_killer_is_out_of_memory() -> None:
    """No report: the runtime itself was the OOM killer's victim (exit 137, OOMKilled)."""
    node0 = pod("Job", 0, "Failed", terminated(137, "OOMKilled"))
    others = [pod("Job", 1, "Failed", terminated(143))]
    assert _state(workload("Job", _failed_on(0, 137)), [node0] + others)[:2] == \
        ("OUT_OF_MEMORY", "OutOfMemory")
