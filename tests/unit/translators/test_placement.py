"""Placement: partition scheduling fields, --qos priority, --nodelist/--exclude,
--constraint/--prefer, --exclusive."""

from __future__ import annotations

import pytest

from parsers.input_errors import SlurmInputError
from translators import metadata
from translators.placement import constraint_to_terms
from tests.unit.translators.support import (
    container,
    pod_spec,
    pod_templates,
    render_script,
    script,
    workload,
)


def test_partition_scheduling_fields() -> None:
    result = render_script(script("--partition=gang"))
    spec = pod_spec(result)
    assert spec["schedulerName"] == "volcano"
    assert spec["serviceAccountName"] == "batch-runner"
    assert spec["priorityClassName"] == "batch-low"


def test_gpu_partition_selector_tolerations_pull_policy_queue() -> None:
    result = render_script(script("--partition=gpu"))
    spec = pod_spec(result)
    assert spec["nodeSelector"] == {"node.kubernetes.io/instance-type": "p4d.24xlarge"}
    assert spec["tolerations"] == [{"effect": "NoSchedule", "key": "nvidia.com/gpu",
                                    "operator": "Exists"}]
    assert container(result)["imagePullPolicy"] == "IfNotPresent"
    assert workload(result)["metadata"]["labels"][metadata.KUEUE_QUEUE] == "gpu-queue"


def test_qos_picks_the_priority_class_and_kueue_priority() -> None:
    result = render_script(script("--partition=gpu", "--qos=high"))
    assert pod_spec(result)["priorityClassName"] == "training-high"
    assert workload(result)["metadata"]["labels"][metadata.KUEUE_PRIORITY] == "training-high"


def test_unknown_qos_is_refused() -> None:
    with pytest.raises(SlurmInputError) as caught:
        render_script(script("--partition=gpu", "--qos=urgent"))
    assert caught.value.lines == ("Batch job submission failed: Invalid qos specification",)


def test_qos_without_a_map_is_only_recorded() -> None:
    spec = pod_spec(render_script(script("--qos=normal")))
    assert "priorityClassName" not in spec


def test_nodelist_and_exclude() -> None:
    result = render_script(script("--nodelist=node[01-02]", "--exclude=node03"))
    terms = pod_spec(result)["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node01", "node02"]},
        {"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["node03"]}]}]


@pytest.mark.parametrize("text, terms", [
    ("a", (("a",),)),
    ("a&b", (("a", "b"),)),
    ("a,b", (("a", "b"),)),
    ("a|b", (("a",), ("b",))),
    ("a&b|c", (("a", "b"), ("c",))),
    ("!gpu", (("!gpu",),)),
])
def test_constraint_terms(text: str, terms) -> None:
    assert constraint_to_terms(text, "constraint") == (terms, ())


@pytest.mark.parametrize("text, terms", [("[rack1|rack2]", (("rack1",), ("rack2",))),
                                         ("a*2&b", (("a", "b"),))])
def test_constraint_brackets_and_counts_are_dropped_with_a_warning(text: str, terms) -> None:
    got, warnings = constraint_to_terms(text, "constraint")
    assert got == terms and len(warnings) == 1


@pytest.mark.parametrize("text", ["a&&b", "a|", "bad feature"])
def test_invalid_feature_specification(text: str) -> None:
    with pytest.raises(SlurmInputError) as caught:
        constraint_to_terms(text, "constraint")
    assert caught.value.lines == ("Batch job submission failed: Invalid feature specification",)


def test_constraint_and_prefer_become_node_affinity() -> None:
    result = render_script(script("--constraint=intel&avx|amd", "--prefer=ssd",
                                  "--exclude=bad1"))
    affinity = pod_spec(result)["affinity"]["nodeAffinity"]
    host = {"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["bad1"]}
    prefix = "feature.sbatch-k8s.io/"
    assert affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] == [
        {"matchExpressions": [host, {"key": prefix + "intel", "operator": "Exists"},
                              {"key": prefix + "avx", "operator": "Exists"}]},
        {"matchExpressions": [host, {"key": prefix + "amd", "operator": "Exists"}]}]
    assert affinity["preferredDuringSchedulingIgnoredDuringExecution"] == [
        {"weight": 1, "preference": {"matchExpressions": [
            {"key": prefix + "ssd", "operator": "Exists"}]}}]


def _anti_affinity(result) -> list:
    return pod_spec(result)["affinity"]["podAntiAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]


def test_exclusive_keeps_other_jobs_off_the_node() -> None:
    result = render_script(script("--exclusive", "-N 2", "--partition=gpu"))
    for template in pod_templates(result):
        assert template["metadata"]["labels"][metadata.EXCLUSIVE] == "true"
    assert _anti_affinity(result) == [{"labelSelector": {"matchExpressions": [
        {"key": metadata.MANAGED_BY, "operator": "In", "values": ["sbatch-k8s"]},
        {"key": metadata.JOB_ID, "operator": "NotIn", "values": ["1234"]}]},
        "topologyKey": "kubernetes.io/hostname"}]
    requests = container(result)["resources"]["requests"]
    assert requests["cpu"] == 96 and requests["nvidia.com/gpu"] == 8


def test_other_jobs_keep_off_exclusive_nodes() -> None:
    result = render_script(script())
    assert metadata.EXCLUSIVE not in pod_templates(result)[0]["metadata"]["labels"]
    assert _anti_affinity(result) == [{"labelSelector": {"matchExpressions": [
        {"key": metadata.EXCLUSIVE, "operator": "In", "values": ["true"]},
        {"key": metadata.JOB_ID, "operator": "NotIn", "values": ["1234"]}]},
        "topologyKey": "kubernetes.io/hostname"}]


def test_exclusive_user_shares_nodes_with_the_same_user_only() -> None:
    result = render_script(script("--exclusive=user"))
    assert pod_templates(result)[0]["metadata"]["labels"][metadata.EXCLUSIVE] == "user"
    expressions = _anti_affinity(result)[0]["labelSelector"]["matchExpressions"]
    assert {"key": metadata.USER, "operator": "NotIn", "values": ["alice"]} in expressions


def test_exclusive_mcs_warns() -> None:
    result = render_script(script("--exclusive=mcs"))
    assert any("--exclusive=mcs" in w for w in result.warnings)
