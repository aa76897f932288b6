"""The default target: objects, the runtime contract, and the Job's time, failure and success
rules."""

from __future__ import annotations

import base64
import dataclasses
import json
import subprocess

import pytest

from parsers.input_errors import SlurmInputError
from parsers.job_description import describe_job, split_description
from translators.plan import DEADLINE_MARGIN_S, NODE_WAIT_S
from translators.pod import TERMINATION_GRACE_S, runtime_command
from tests.unit.translators.support import (
    container,
    inputs_for,
    job_spec_of,
    manifest,
    pod_spec,
    render_script,
    script,
)


def test_documents_in_creation_order() -> None:
    result = render_script(script("-N 2"))
    assert [m["kind"] for m in result.manifests] == ["ConfigMap", "Secret", "Service", "Job"]


def test_job_is_an_indexed_gang() -> None:
    result = render_script(script("-N 3"))
    spec = job_spec_of(result)
    assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == (
        "Indexed", 3, 3)
    assert spec["backoffLimit"] == 0
    assert spec["ttlSecondsAfterFinished"] == 3600
    assert "selector" not in spec
    pod = pod_spec(result)
    assert (pod["restartPolicy"], pod["subdomain"]) == ("Never", "job-sh-1234")
    assert pod["enableServiceLinks"] is False
    assert pod["terminationGracePeriodSeconds"] == 60


def test_headless_service_selects_the_jobs_pods() -> None:
    result = render_script(script("-N 2"))
    service = manifest(result, "Service")
    assert service["spec"] == {
        "clusterIP": "None", "publishNotReadyAddresses": True,
        "selector": {"sbatch-k8s.io/job-id": "1234"},
        "ports": [{"name": "slurmd", "port": 6818, "targetPort": 6818}]}
    labels = job_spec_of(result)["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()


def test_config_map_holds_script_and_job_description() -> None:
    text = script("-N 2", "--export=ALL,EXTRA=1")
    inputs = inputs_for(text)
    result = render_script(text)
    data = manifest(result, "ConfigMap")["data"]
    assert data["script"] == text
    expected = describe_job(
        dataclasses.replace(inputs.job, partition="debug", time_limit_min=60),
        inputs.allocation, inputs.context, 1234, "k8s", "/home/alice/project",
        {"EXTRA": "1", "LANG": "C.UTF-8", "PROJECT": "demo"})
    public, private = split_description(json.loads(json.dumps(expected)))
    assert json.loads(data["job.json"]) == public
    assert data["job.json"] == json.dumps(json.loads(data["job.json"]), sort_keys=True,
                                          indent=1)
    secret = manifest(result, "Secret")["data"]
    assert json.loads(base64.b64decode(secret["environment.json"])) == private == {
        "environment": {"EXTRA": "1", "LANG": "C.UTF-8", "PROJECT": "demo"},
        "export": "ALL,EXTRA=1"}


def test_secret_holds_the_token() -> None:
    secret = manifest(render_script(script()), "Secret")
    assert secret["type"] == "Opaque"
    assert base64.b64decode(secret["data"]["token"]) == b"test-token-0123456789abcdef"


def test_runtime_command_fails_clearly_without_python() -> None:
    command = runtime_command("indexed-job", "busybox:1")
    assert command[:2] == ["/bin/sh", "-c"]
    assert command[2].endswith(
        "exec python3 /opt/sbatch-k8s/runtime.pyz node --contract indexed-job")
    probe = subprocess.run(["/bin/sh", "-c", command[2].replace("v python3", "v no-python3x")],
                           capture_output=True, text=True)
    assert probe.returncode == 127
    assert probe.stderr == ("sbatch-k8s: error: image busybox:1 has no python3; the "
                            "sbatch-k8s runtime needs Python >= 3.8\n")


def test_runtime_env_and_port() -> None:
    main = container(render_script(script("--partition=gang")))
    assert main["name"] == "main"
    assert main["command"] == runtime_command("indexed-job", "python:3.11-slim")
    env = {e["name"]: e for e in main["env"]}
    assert env["SBATCHK8S_NAMESPACE"]["valueFrom"]["fieldRef"]["fieldPath"] == (
        "metadata.namespace")
    assert env["SBATCHK8S_POD_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    assert env["SBATCHK8S_POD_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
    assert env["SBATCHK8S_JOB_ID"]["value"] == "1234"
    assert env["SBATCHK8S_RUNTIME_PORT"]["value"] == "7000"
    assert "SBATCHK8S_NODE_INDEX" not in env
    assert main["ports"] == [{"name": "slurmd", "containerPort": 7000}]


def test_job_environment_goes_to_the_secret_only() -> None:
    result = render_script(script("--export=NONE,RUN_MODE=fast"))
    description = json.loads(manifest(result, "ConfigMap")["data"]["job.json"])
    assert "environment" not in description and "export" not in description
    private = json.loads(base64.b64decode(manifest(result, "Secret")["data"]["environment.json"]))
    assert private["environment"] == {"RUN_MODE": "fast"}
    assert "RUN_MODE" not in {e["name"] for e in container(result)["env"]}


@pytest.mark.parametrize("directives, partition, limit_s", [
    (("-t 10",), "debug", 600),
    (("-t 1-00:00:00",), "debug", 86400),
    ((), "debug", 3600),             # partition DefaultTime 60
    ((), "gpu", 4320 * 60),          # no DefaultTime: MaxTime
    (("-t 0",), "gang", None),       # 0 = no limit, partition has no MaxTime
    (("-t UNLIMITED",), "gang", None),
    ((), "gang", None),
])
def test_time_limit_becomes_the_pods_deadline(directives, partition, limit_s) -> None:
    """The pod's deadline (counted from the kubelet's start of the pod), never the Job's
    (counted from the Job's start, so Pending time would count)."""
    result = render_script(script(*directives, f"--partition={partition}"))
    deadline = None if limit_s is None else limit_s + DEADLINE_MARGIN_S
    assert pod_spec(result).get("activeDeadlineSeconds") == deadline
    assert "activeDeadlineSeconds" not in job_spec_of(result)


def test_deadline_margin_outlasts_the_runtimes_own_waits() -> None:
    """The backstop must never fire before the runtime's own limit: node 0 may wait
    NODE_WAIT_S for the others before the script starts, a worker as long for node 0."""
    assert DEADLINE_MARGIN_S >= 2 * NODE_WAIT_S + TERMINATION_GRACE_S + 300


@pytest.mark.parametrize("option", ["-t 1441", "-t 0", "-t infinite"])
def test_time_limit_beyond_the_partition_is_refused(option: str) -> None:
    with pytest.raises(SlurmInputError) as caught:
        render_script(script(option))
    assert caught.value.exit_code == 1
    assert caught.value.lines == ("Batch job submission failed: Requested time limit is "
                                  "invalid (missing or exceeds some limit)",)


def test_default_time_limit_is_in_job_json() -> None:
    data = manifest(render_script(script()), "ConfigMap")["data"]
    assert json.loads(data["job.json"])["time_limit_min"] == 60


def _disruption_action(spec: dict) -> str:
    rule, = [r for r in spec["podFailurePolicy"]["rules"] if "onPodConditions" in r
             and r["onPodConditions"]]
    return rule["action"]


@pytest.mark.parametrize("option, action", [(None, "FailJob"), ("--requeue", "FailJob"),
                                            ("--no-requeue", "FailJob")])
def test_requeue_decides_what_disruption_does(option, action) -> None:
    spec = job_spec_of(render_script(script(*[o for o in [option] if o])))
    assert spec["backoffLimit"] == 0
    rules = spec["podFailurePolicy"]["rules"]
    assert rules[0] == {"action": action, "onPodConditions": [
        {"type": "DisruptionTarget", "status": "True"}]}
    assert rules[1] == {"action": "FailJob", "onExitCodes": {
        "containerName": "main", "operator": "NotIn", "values": [0]}}


@pytest.mark.parametrize("minor, on_pod_conditions, success", [
    (27, True, False), (28, True, False), (29, False, False), (30, False, False),
    (31, False, True), (37, False, True)])
def test_fields_follow_the_kubernetes_minor(minor, on_pod_conditions, success) -> None:
    spec = job_spec_of(render_script(script(), minor=minor))
    exit_rule = spec["podFailurePolicy"]["rules"][1]
    assert ("onPodConditions" in exit_rule) == on_pod_conditions
    if on_pod_conditions:
        assert exit_rule["onPodConditions"] == []
    assert ("successPolicy" in spec) == success
    if success:
        assert spec["successPolicy"] == {"rules": [{"succeededIndexes": "0"}]}


def test_hold_creates_the_job_suspended() -> None:
    assert job_spec_of(render_script(script("--hold")))["suspend"] is True
    assert "suspend" not in job_spec_of(render_script(script()))


def test_ttl_comes_from_the_partition() -> None:
    assert job_spec_of(render_script(script("-p gang")))["ttlSecondsAfterFinished"] == 600


def test_volcano_gang_gets_a_pod_group() -> None:
    result = render_script(script("-p gang", "-N 3"))
    assert [m["kind"] for m in result.manifests] == [
        "ConfigMap", "Secret", "Service", "PodGroup", "Job"]
    group = manifest(result, "PodGroup")
    assert group["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    assert group["metadata"]["name"] == "job-sh-1234"
    assert group["spec"] == {"minMember": 3, "queue": "research",
                             "priorityClassName": "batch-low"}
    template = job_spec_of(result)["template"]
    assert template["metadata"]["annotations"] == {
        "scheduling.k8s.io/group-name": "job-sh-1234"}
    assert template["spec"]["schedulerName"] == "volcano"
