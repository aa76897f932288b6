"""The Job controller: indexed pods, completion, failure policies, suspend, deadlines."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from kubernetes import watch

from tests.apiserver import EmulatedCluster
from tests.apiserver.support import finish, run, wait_until

INDEX = "batch.kubernetes.io/job-completion-index"
FAILURES = "batch.kubernetes.io/job-index-failure-count"
IGNORED = "batch.kubernetes.io/job-index-ignored-failure-count"


def job(name: str, completions: int = 2, parallelism: Optional[int] = None,
        **spec: Any) -> Dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {
        "completionMode": "Indexed", "completions": completions,
        "parallelism": completions if parallelism is None else parallelism,
        "backoffLimit": 0, **spec,
        "template": {"metadata": {"labels": {"app": name}}, "spec": {
            "subdomain": name, "restartPolicy": "Never",
            "containers": [{"name": "main", "image": "busybox"},
                           {"name": "side", "image": "busybox"}]}}}}


def pods_of(core: Any, name: str) -> List[Any]:
    return core.list_namespaced_pod("default", label_selector=f"job-name={name}").items


def live_pods(core: Any, name: str, count: int) -> List[Any]:
    def probe() -> Optional[List[Any]]:
        found = [p for p in pods_of(core, name) if not p.metadata.deletion_timestamp]
        return sorted(found, key=lambda p: p.metadata.name) if len(found) == count else None
    return wait_until(probe, what=f"{count} pods of {name}")


def condition(batch: Any, name: str, kind: str) -> Any:
    status = batch.read_namespaced_job_status(name, "default").status
    return next((c for c in status.conditions or [] if c.type == kind and c.status == "True"),
                None)


def test_indexed_pods_have_the_controller_contract(core: Any, batch: Any) -> None:
    made = batch.create_namespaced_job("default", job("train"))
    pods = live_pods(core, "train", 2)
    uid = made.metadata.uid
    for index, pod in enumerate(pods):
        meta = pod.metadata
        assert meta.name.startswith(f"train-{index}-") and len(meta.name) == len("train-0-") + 5
        assert pod.spec.hostname == f"train-{index}" and pod.spec.subdomain == "train"
        assert meta.labels == {
            "app": "train", "batch.kubernetes.io/controller-uid": uid,
            "batch.kubernetes.io/job-name": "train", "controller-uid": uid,
            "job-name": "train", INDEX: str(index)}
        assert meta.annotations == {INDEX: str(index)}
        owner = meta.owner_references[0]
        assert (owner.kind, owner.name, owner.uid, owner.controller) == ("Job", "train", uid,
                                                                         True)
        assert meta.finalizers == ["batch.kubernetes.io/job-tracking"]
        for container in pod.spec.containers:
            env = {e.name: e for e in container.env}
            assert env["JOB_COMPLETION_INDEX"].value_from.field_ref.field_path == \
                f"metadata.annotations['{INDEX}']"
    status = batch.read_namespaced_job_status("train", "default").status
    assert status.active == 2 and status.start_time is not None


def test_completes_when_pods_succeed(core: Any, batch: Any) -> None:
    batch.create_namespaced_job("default", job("ok"))
    pods = live_pods(core, "ok", 2)
    run(core, pods[0].metadata.name)
    wait_until(lambda: batch.read_namespaced_job_status("ok", "default").status.ready == 1,
               what="ready count")
    for pod in pods:
        finish(core, pod.metadata.name)
    done = wait_until(lambda: condition(batch, "ok", "Complete"), what="Complete")
    assert done.reason == "CompletionsReached"
    status = batch.read_namespaced_job_status("ok", "default").status
    assert (status.succeeded, status.completed_indexes, status.active) == (2, "0-1", None)
    assert status.completion_time is not None
    assert condition(batch, "ok", "SuccessCriteriaMet") is not None
    wait_until(lambda: all(not p.metadata.finalizers for p in pods_of(core, "ok")),
               what="tracking finalizers removed")


def test_parallelism_limits_active_pods(core: Any, batch: Any) -> None:
    batch.create_namespaced_job("default", job("par", completions=3, parallelism=1))
    first = live_pods(core, "par", 1)[0]
    assert first.metadata.labels[INDEX] == "0"
    finish(core, first.metadata.name)
    second = wait_until(lambda: [p for p in pods_of(core, "par")
                                 if p.metadata.labels[INDEX] == "1"], what="index 1")
    assert len(second) == 1


def test_backoff_limit_fails_job(core: Any, batch: Any) -> None:
    batch.create_namespaced_job("default", job("bad"))
    pods = live_pods(core, "bad", 2)
    finish(core, pods[0].metadata.name, exit_code=3)
    failed = wait_until(lambda: condition(batch, "bad", "Failed"), what="Failed")
    assert (failed.reason, failed.message) == ("BackoffLimitExceeded",
                                               "Job has reached the specified backoff limit")
    assert condition(batch, "bad", "FailureTarget") is not None
    status = batch.read_namespaced_job_status("bad", "default").status
    assert status.failed == 2 and not status.active


def test_retries_within_backoff_limit(core: Any, batch: Any) -> None:
    batch.create_namespaced_job("default", job("retry", completions=1, backoffLimit=1))
    first = live_pods(core, "retry", 1)[0]
    finish(core, first.metadata.name, exit_code=1)
    replacement = wait_until(lambda: [p for p in pods_of(core, "retry")
                                      if p.metadata.name != first.metadata.name
                                      and not p.status.phase == "Failed"], what="replacement")
    assert replacement[0].metadata.labels[INDEX] == "0"
    assert batch.read_namespaced_job_status("retry", "default").status.failed == 1


def test_pod_failure_policy_fail_job_and_ignore(core: Any, batch: Any) -> None:
    policy = {"rules": [
        {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "NotIn",
                                              "values": [0]}},
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget",
                                                  "status": "True"}]}]}
    batch.create_namespaced_job("default", job("pfp", podFailurePolicy=policy,
                                               backoffLimit=5))
    pods = live_pods(core, "pfp", 2)
    core.patch_namespaced_pod_status(pods[1].metadata.name, "default", {"status": {
        "phase": "Failed", "conditions": [{"type": "DisruptionTarget", "status": "True"}]}})
    wait_until(lambda: len([p for p in pods_of(core, "pfp")
                            if p.metadata.labels[INDEX] == "1"]) == 2, what="index 1 again")
    assert not batch.read_namespaced_job_status("pfp", "default").status.failed
    finish(core, pods[0].metadata.name, exit_code=42)
    failed = wait_until(lambda: condition(batch, "pfp", "Failed"), what="Failed")
    assert failed.reason == "PodFailurePolicy"
    assert failed.message == (f"Container main for pod default/{pods[0].metadata.name} failed "
                              f"with exit code 42 matching FailJob rule at index 0")


def test_per_index_failure_counts_on_replacement_pods(core: Any, batch: Any) -> None:
    """With backoffLimitPerIndex, a replacement pod carries its index's earlier failures:
    counted ones always, ignored ones (a disruption under an Ignore rule) when there are."""
    policy = {"rules": [{"action": "Ignore", "onPodConditions": [
        {"type": "DisruptionTarget", "status": "True"}]}]}
    batch.create_namespaced_job("default", job("per", podFailurePolicy=policy,
                                               backoffLimitPerIndex=3, backoffLimit=9))
    pods = live_pods(core, "per", 2)
    assert pods[1].metadata.annotations[FAILURES] == "0"
    assert IGNORED not in pods[1].metadata.annotations
    core.patch_namespaced_pod_status(pods[1].metadata.name, "default", {"status": {
        "phase": "Failed", "conditions": [{"type": "DisruptionTarget", "status": "True"}]}})
    second = wait_until(lambda: [p for p in pods_of(core, "per") if p.metadata.labels[INDEX]
                                 == "1" and p.status.phase != "Failed"
                                 and p.metadata.name != pods[1].metadata.name], what="index 1")
    assert (second[0].metadata.annotations[FAILURES],
            second[0].metadata.annotations[IGNORED]) == ("0", "1")
    finish(core, second[0].metadata.name, exit_code=1)
    third = wait_until(lambda: [p for p in pods_of(core, "per") if p.metadata.labels[INDEX]
                                == "1" and p.status.phase != "Failed" and p.metadata.name
                                not in (pods[1].metadata.name, second[0].metadata.name)],
                       what="index 1 a third time")
    assert (third[0].metadata.annotations[FAILURES],
            third[0].metadata.annotations[IGNORED]) == ("1", "1")


def test_success_policy(core: Any, batch: Any) -> None:
    batch.create_namespaced_job("default", job(
        "leader", completions=3, successPolicy={"rules": [{"succeededIndexes": "0"}]}))
    pods = live_pods(core, "leader", 3)
    finish(core, pods[0].metadata.name)
    met = wait_until(lambda: condition(batch, "leader", "Complete"), what="Complete")
    assert (met.reason, met.message) == ("SuccessPolicy", "Matched rules at index 0")
    wait_until(lambda: all(p.metadata.deletion_timestamp or p.status.phase == "Succeeded"
                           for p in pods_of(core, "leader")), what="others deleted")


def test_suspend_and_resume(core: Any, batch: Any) -> None:
    batch.create_namespaced_job("default", job("held", suspend=True))
    suspended = wait_until(lambda: condition(batch, "held", "Suspended"), what="Suspended")
    assert suspended.reason == "JobSuspended"
    assert pods_of(core, "held") == []
    batch.patch_namespaced_job("held", "default", {"spec": {"suspend": False}})
    live_pods(core, "held", 2)
    status = batch.read_namespaced_job_status("held", "default").status
    resumed = next(c for c in status.conditions if c.type == "Suspended")
    assert (resumed.status, resumed.reason) == ("False", "JobResumed")
    batch.patch_namespaced_job("held", "default", {"spec": {"suspend": True}})
    wait_until(lambda: not pods_of(core, "held"), what="unbound pods deleted on suspend")
    assert not batch.read_namespaced_job_status("held", "default").status.failed


def pod_history(core: Any, name: str, since: str) -> List[Tuple[str, str]]:
    """The changes to the pods of ``name`` after revision ``since`` (a watch from it replays
    them), up to the deletion of two of them."""
    stream = watch.Watch()
    seen: List[Tuple[str, str]] = []
    for event in stream.stream(core.list_namespaced_pod, "default", timeout_seconds=60,
                               label_selector=f"job-name={name}", resource_version=since):
        seen.append((event["type"], event["object"].metadata.name))
        if [kind for kind, _ in seen].count("DELETED") == 2:
            stream.stop()
    return seen


def test_active_deadline(core: Any, batch: Any) -> None:
    since = core.list_namespaced_pod("default").metadata.resource_version
    batch.create_namespaced_job("default", job("slow", activeDeadlineSeconds=1))
    failed = wait_until(lambda: condition(batch, "slow", "Failed"), what="DeadlineExceeded")
    assert (failed.reason, failed.message) == ("DeadlineExceeded",
                                               "Job was active longer than specified deadline")
    wait_until(lambda: not pods_of(core, "slow"), what="pods deleted")
    # Both pods were up before the deadline ended them: read from the history, as a look at
    # the live pods may come after the 1 s deadline on a loaded machine.
    history = pod_history(core, "slow", since)
    added = [pod for kind, pod in history if kind == "ADDED"]
    assert len(added) == len(set(added)) == 2
    assert [kind for kind, _ in history[:2]] == ["ADDED", "ADDED"]     # both, then the rest
    assert sorted(pod for kind, pod in history if kind == "DELETED") == sorted(added)


def test_non_indexed_job(core: Any, batch: Any) -> None:
    spec = job("plain", completions=2, parallelism=2)
    spec["spec"]["completionMode"] = "NonIndexed"
    batch.create_namespaced_job("default", spec)
    pods = live_pods(core, "plain", 2)
    assert all(INDEX not in p.metadata.labels and not p.spec.hostname for p in pods)
    for pod in pods:
        finish(core, pod.metadata.name)
    wait_until(lambda: condition(batch, "plain", "Complete"), what="Complete")


def test_background_delete_removes_pods(cluster: EmulatedCluster, core: Any,
                                        batch: Any) -> None:
    batch.create_namespaced_job("default", job("gone"))
    live_pods(core, "gone", 2)
    batch.delete_namespaced_job("gone", "default", propagation_policy="Background")
    wait_until(lambda: not pods_of(core, "gone"), what="pods collected")


def test_bound_pods_wait_for_the_kubelet(core: Any, batch: Any) -> None:
    from tests.apiserver.support import node
    core.create_node(node("n1"))
    batch.create_namespaced_job("default", job("bound", completions=1))
    pod = live_pods(core, "bound", 1)[0]
    wait_until(lambda: core.read_namespaced_pod(pod.metadata.name, "default").spec.node_name)
    batch.delete_namespaced_job("bound", "default", propagation_policy="Background")
    terminating = wait_until(lambda: [p for p in pods_of(core, "bound")
                                      if p.metadata.deletion_timestamp], what="terminating")
    assert terminating[0].metadata.deletion_grace_period_seconds == 30
    core.delete_namespaced_pod(pod.metadata.name, "default", grace_period_seconds=0)
    wait_until(lambda: not pods_of(core, "bound"), what="pod removed after kubelet delete")


def test_ttl_after_finished(core: Any, batch: Any) -> None:
    batch.create_namespaced_job("default", job("brief", completions=1,
                                               ttlSecondsAfterFinished=0))
    finish(core, live_pods(core, "brief", 1)[0].metadata.name)
    wait_until(lambda: not batch.list_namespaced_job("default").items, what="job deleted")


def test_template_immutable_unless_suspended_and_unstarted(batch: Any) -> None:
    import pytest
    from kubernetes import client
    batch.create_namespaced_job("default", job("held", suspend=True))
    batch.patch_namespaced_job("held", "default", {"spec": {"template": {"spec": {
        "nodeSelector": {"pool": "a"}}}}})
    with pytest.raises(client.ApiException) as caught:
        batch.patch_namespaced_job("held", "default", {"spec": {"template": {"spec": {
            "hostname": "x"}}}})
    assert caught.value.status == 422
    import json
    assert json.loads(caught.value.body)["message"] == (
        'Job.batch "held" is invalid: spec.template: Invalid value: core.PodTemplateSpec{...}: '
        'field is immutable')
    batch.create_namespaced_job("default", job("running"))
    with pytest.raises(client.ApiException) as caught:
        batch.patch_namespaced_job("running", "default", {"spec": {"template": {"spec": {
            "nodeSelector": {"pool": "a"}}}}})
    assert caught.value.status == 422
