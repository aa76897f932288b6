"""--array: one Indexed Job for single-node arrays, one workload per task otherwise."""

from __future__ import annotations

import json

import pytest

from parsers.input_errors import SlurmInputError
from sbatch_k8s.runtime.agent.node_setup import RESTARTED_VARIABLE as RUNTIME_RESTARTED_VARIABLE
from translators import metadata
from translators.pod import RESTARTED_VARIABLE
from translators.plan import DEADLINE_MARGIN_S
from tests.unit.translators.support import (
    container,
    job_spec_of,
    manifest,
    render_script,
    script,
    workload,
)


def test_single_node_array_is_one_indexed_job() -> None:
    result = render_script(script("--array=1-9:2%2", "-t 5"), job_id=50)
    assert [m["kind"] for m in result.manifests] == ["ConfigMap", "Secret", "Job"]
    spec = job_spec_of(result)
    assert (spec["completions"], spec["parallelism"]) == (5, 2)
    assert spec["backoffLimitPerIndex"] == 0 and "backoffLimit" not in spec
    assert "activeDeadlineSeconds" not in spec and "successPolicy" not in spec
    # Each task's pod has its own deadline, counted from its own start.
    assert spec["template"]["spec"]["activeDeadlineSeconds"] == 300 + DEADLINE_MARGIN_S
    assert [r["action"] for r in spec["podFailurePolicy"]["rules"]] == ["Ignore", "FailIndex"]
    assert "subdomain" not in spec["template"]["spec"]
    description = json.loads(manifest(result, "ConfigMap")["data"]["job.json"])
    assert description["array_indices"] == [1, 3, 5, 7, 9]
    assert (description["job_id"], description["array_job_id"],
            description["array_task_id"]) == (50, 50, None)
    labels = workload(result)["metadata"]["labels"]
    assert labels[metadata.ARRAY_JOB_ID] == "50" and metadata.ARRAY_TASK_ID not in labels
    assert result.object_name == "job-sh-50"


def test_array_parallelism_defaults_to_all_tasks() -> None:
    spec = job_spec_of(render_script(script("--array=0-3")))
    assert (spec["completions"], spec["parallelism"]) == (4, 4)


def test_no_requeue_array_fails_disrupted_tasks_alone() -> None:
    spec = job_spec_of(render_script(script("--array=0-3", "--no-requeue")))
    assert spec["podFailurePolicy"]["rules"][0]["action"] == "FailIndex"


def test_array_before_per_index_failures_warns() -> None:
    result = render_script(script("--array=0-3"), minor=28)
    spec = job_spec_of(result)
    assert spec["backoffLimit"] == 0 and "backoffLimitPerIndex" not in spec
    assert any("fails the whole array" in w for w in result.warnings)


def test_multi_node_array_is_one_gang_per_task() -> None:
    result = render_script(script("--array=4,7%1", "-N 2", "-t 5"), job_id=90)
    jobs = [m for m in result.manifests if m["kind"] == "Job"]
    assert [j["metadata"]["name"] for j in jobs] == ["job-sh-90-4", "job-sh-90-7"]
    assert [m["kind"] for m in result.manifests] == [
        "ConfigMap", "Secret", "Service", "Job"] * 2
    for position, (job, task) in enumerate(zip(jobs, (4, 7))):
        labels = job["metadata"]["labels"]
        assert labels[metadata.JOB_ID] == str(90 + position)
        assert labels[metadata.ARRAY_TASK_ID] == str(task)
        assert job["spec"]["completions"] == 2
        assert job["spec"]["template"]["spec"]["activeDeadlineSeconds"] == (
            300 + DEADLINE_MARGIN_S)
    descriptions = [json.loads(m["data"]["job.json"]) for m in result.manifests
                    if m["kind"] == "ConfigMap"]
    assert [(d["job_id"], d["array_task_id"]) for d in descriptions] == [(90, 4), (91, 7)]
    services = [m for m in result.manifests if m["kind"] == "Service"]
    assert services[1]["spec"]["selector"] == {metadata.JOB_ID: "91"}
    assert any("%1 is not enforced" in w for w in result.warnings)
    assert result.object_name == "job-sh-90"


def test_array_job_id_input_overrides_the_job_id() -> None:
    result = render_script(script("--array=0-1", "-N 2"), job_id=5, array_job_id=3)
    assert [m["metadata"]["name"] for m in result.manifests if m["kind"] == "Job"] == [
        "job-sh-3-0", "job-sh-3-1"]
    assert container(result)["env"][3] == {"name": "SBATCHK8S_JOB_ID", "value": "3"}


@pytest.mark.parametrize("target, kind", [("pytorchjob", "PyTorchJob"), ("mpijob", "MPIJob")])
def test_operator_targets_run_one_workload_per_task(target: str, kind: str) -> None:
    result = render_script(script("--array=0-2"), target=target)
    assert [m["metadata"]["name"] for m in result.manifests if m["kind"] == kind] == [
        "job-sh-1234-0", "job-sh-1234-1", "job-sh-1234-2"]


def test_jobset_single_node_array_is_one_child_job() -> None:
    result = render_script(script("--array=0-5%2"), target="jobset")
    spec = job_spec_of(result)
    assert (spec["completions"], spec["parallelism"]) == (6, 2)


def test_array_beyond_max_array_size_is_refused() -> None:
    with pytest.raises(SlurmInputError) as caught:
        render_script(script("--array=0-1001"))
    assert caught.value.lines == ("Batch job submission failed: Invalid job array "
                                  "specification",)


def _restarted_field(result: object) -> object:
    """The downward-API field of the runtime's restart variable, None when not set."""
    env = {e["name"]: e for e in container(result).get("env", [])}  # type: ignore[arg-type]
    entry = env.get(RESTARTED_VARIABLE)
    assert RESTARTED_VARIABLE == RUNTIME_RESTARTED_VARIABLE
    return entry["valueFrom"]["fieldRef"]["fieldPath"] if entry else None


@pytest.mark.parametrize("directives, target, field", [
    (("--array=0-3",), "indexed-job",
     f"metadata.annotations['{metadata.INDEX_IGNORED_FAILURES}']"),
    (("--array=0-3", "--no-requeue"), "indexed-job", None),
    (("--array=0-3", "-N2"), "indexed-job", None),
    (("-N2", "--requeue"), "jobset", f"metadata.labels['{metadata.JOBSET_RESTART_ATTEMPT}']"),
    (("-N2",), "jobset", None),
    (("-N2", "--requeue"), "indexed-job", None),
])
def test_pods_read_the_restarts_their_workload_makes(directives: tuple, target: str,
                                                     field: object) -> None:
    """Where Kubernetes itself re-runs the job (an array element's disrupted pod replaced,
    a --requeue JobSet's gang restart), the pods read that count for SLURM_RESTART_COUNT."""
    result = render_script(script(*directives), target=target)
    assert _restarted_field(result) == field


def test_per_index_restarts_need_backoff_limit_per_index() -> None:
    result = render_script(script("--array=0-3"), minor=28)
    assert _restarted_field(result) is None
