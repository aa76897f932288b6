"""The operator targets: JobSet, PyTorchJob and MPIJob."""

from __future__ import annotations

import pytest

from translators.plan import DEADLINE_MARGIN_S
from tests.unit.translators.support import (
    container,
    job_spec_of,
    manifest,
    pod_templates,
    render_script,
    script,
    workload,
)


def test_targets_share_config_map_and_secret() -> None:
    for target, kinds in [("jobset", ["ConfigMap", "Secret", "JobSet"]),
                          ("pytorchjob", ["ConfigMap", "Secret", "PyTorchJob"]),
                          ("mpijob", ["ConfigMap", "Secret", "MPIJob"])]:
        result = render_script(script("-N 2"), target=target)
        assert [m["kind"] for m in result.manifests] == kinds
        assert container(result)["command"][2].endswith(f"--contract {target}")


def test_jobset_wraps_the_indexed_job() -> None:
    result = render_script(script("-N 2", "-t 10", "--hold"), target="jobset")
    jobset = workload(result)
    assert jobset["apiVersion"] == "jobset.x-k8s.io/v1alpha2"
    spec = jobset["spec"]
    assert spec["suspend"] is True
    assert spec["ttlSecondsAfterFinished"] == 3600
    assert spec["network"] == {"enableDNSHostnames": True, "subdomain": "job-sh-1234",
                               "publishNotReadyAddresses": True}
    assert spec["successPolicy"] == {"operator": "Any", "targetReplicatedJobs": ["node"]}
    assert spec["failurePolicy"] == {"maxRestarts": 0}
    rjob, = spec["replicatedJobs"]
    assert (rjob["name"], rjob["replicas"]) == ("node", 1)
    child = job_spec_of(result)
    assert (child["completions"], child["parallelism"], child["backoffLimit"]) == (2, 2, 0)
    assert "activeDeadlineSeconds" not in child
    assert child["template"]["spec"]["activeDeadlineSeconds"] == 600 + DEADLINE_MARGIN_S
    assert "suspend" not in child and "ttlSecondsAfterFinished" not in child
    assert child["template"]["spec"]["restartPolicy"] == "Never"
    env = {e["name"]: e for e in container(result)["env"]}
    assert env["SBATCHK8S_NODE_INDEX"]["valueFrom"]["fieldRef"]["fieldPath"] == (
        "metadata.annotations['batch.kubernetes.io/job-completion-index']")


def test_jobset_requeue_restarts_the_whole_gang() -> None:
    result = render_script(script("-N 2", "--requeue"), target="jobset")
    assert workload(result)["spec"]["failurePolicy"] == {
        "maxRestarts": 3, "rules": [{"name": "NoRequeue", "action": "FailJobSet",
                                     "onJobFailureReasons": [
                                         "PodFailurePolicy", "DeadlineExceeded",
                                         "FailedIndexes", "MaxFailedIndexesExceeded"]}]}
    assert job_spec_of(result)["podFailurePolicy"]["rules"][0]["action"] == "Count"


def test_jobset_no_requeue_fails_on_disruption() -> None:
    result = render_script(script("--no-requeue"), target="jobset")
    assert workload(result)["spec"]["failurePolicy"] == {"maxRestarts": 0}
    assert job_spec_of(result)["podFailurePolicy"]["rules"][0]["action"] == "FailJob"


def test_pytorchjob_master_and_workers() -> None:
    result = render_script(script("-N 4", "-t 10", "--hold"), target="pytorchjob")
    job = workload(result)
    assert job["apiVersion"] == "kubeflow.org/v1"
    replicas = job["spec"]["pytorchReplicaSpecs"]
    assert {k: (v["replicas"], v["restartPolicy"]) for k, v in replicas.items()} == {
        "Master": (1, "Never"), "Worker": (3, "Never")}
    assert job["spec"]["runPolicy"] == {"cleanPodPolicy": "None",
                                        "ttlSecondsAfterFinished": 3600,
                                        "backoffLimit": 0, "suspend": True}
    for template in pod_templates(result):
        assert template["spec"]["containers"][0]["name"] == "pytorch"
        assert template["spec"]["activeDeadlineSeconds"] == 600 + DEADLINE_MARGIN_S
        assert "restartPolicy" not in template["spec"]


def test_pytorchjob_single_node_has_no_workers() -> None:
    job = workload(render_script(script(), target="pytorchjob"))
    assert list(job["spec"]["pytorchReplicaSpecs"]) == ["Master"]


@pytest.mark.parametrize("directives, nproc", [
    ((), "1"),
    (("--ntasks-per-node=4",), "4"),
    (("--gpus-per-node=8", "-p gpu"), "8"),
    (("--gpus-per-node=8", "--ntasks-per-node=8", "-p gpu"), "8"),
    (("--gpus-per-node=8", "--ntasks-per-node=2", "-p gpu"), "2"),
])
def test_pytorchjob_nproc_per_node_is_a_string(directives, nproc) -> None:
    job = workload(render_script(script(*directives), target="pytorchjob"))
    assert job["spec"]["nprocPerNode"] == nproc


def test_mpijob_launcher_is_node_zero() -> None:
    result = render_script(script("-N 3", "--ntasks-per-node=4"), target="mpijob")
    job = workload(result)
    assert job["apiVersion"] == "kubeflow.org/v2beta1"
    spec = job["spec"]
    assert (spec["slotsPerWorker"], spec["runLauncherAsWorker"], spec["mpiImplementation"],
            spec["launcherCreationPolicy"]) == (4, True, "OpenMPI", "AtStartup")
    assert {k: v["replicas"] for k, v in spec["mpiReplicaSpecs"].items()} == {
        "Launcher": 1, "Worker": 2}
    assert all(t["spec"]["containers"][0]["name"] == "main" for t in pod_templates(result))


def test_mpijob_single_node_has_no_workers() -> None:
    job = workload(render_script(script(), target="mpijob"))
    assert list(job["spec"]["mpiReplicaSpecs"]) == ["Launcher"]


@pytest.mark.parametrize("target", ["pytorchjob", "mpijob"])
def test_operator_targets_gang_through_run_policy(target: str) -> None:
    result = render_script(script("-p gang", "-N 3"), target=target)
    assert "PodGroup" not in [m["kind"] for m in result.manifests]
    assert workload(result)["spec"]["runPolicy"]["schedulingPolicy"] == {
        "minAvailable": 3, "queue": "research", "priorityClass": "batch-low"}
    assert all(t["spec"]["schedulerName"] == "volcano" for t in pod_templates(result))


@pytest.mark.parametrize("target", ["pytorchjob", "mpijob"])
def test_operator_targets_warn_that_requeue_is_not_done(target: str) -> None:
    result = render_script(script("--requeue"), target=target)
    assert any(w.startswith("--requeue:") for w in result.warnings)


def test_jobset_gang_gets_a_pod_group() -> None:
    result = render_script(script("-p gang", "-N 2"), target="jobset")
    assert manifest(result, "PodGroup")["spec"]["minMember"] == 2
