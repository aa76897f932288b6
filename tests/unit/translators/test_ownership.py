"""Ownership on a cluster's terms: the pod name patterns per target match the names the
controllers give pods (and no other job's), the annotations every object carries, and the
Slurm names and uids of cluster users."""

from __future__ import annotations

import re

import pytest

from translators.config import UsersConfig
from parsers.vocabulary import OWNER, PODS
from translators.ownership import Ownership, any_of, pod_name_pattern
from translators.users import hashed_uid, namespace_for, slurm_user_name
from tests.unit.translators.support import inputs_for, script


@pytest.mark.parametrize("target, own, others", [
    ("indexed-job", ["llm-12-0-x7k2p", "llm-12-15-abcde"],
     ["llm-12-0", "llm-123-0-abcde", "llm-1-0-abcde", "llm-12-0-1-abcde", "llm-12-abcde"]),
    ("jobset", ["llm-12-node-0-0-ab1cd", "llm-12-node-0-3-zzzzz"],
     ["llm-12-0-abcde", "llm-123-node-0-0-abcde"]),
    ("pytorchjob", ["llm-12-master-0", "llm-12-worker-7"],
     ["llm-12-master-0-abcde", "llm-123-worker-0", "llm-12-launcher-abcde"]),
    ("mpijob", ["llm-12-launcher-q2w3e", "llm-12-worker-0"],
     ["llm-12-launcher", "llm-12-master-0", "llm-123-worker-0"]),
])
def test_pod_patterns_match_the_job_s_pods_only(target: str, own: list, others: list) -> None:
    pattern = pod_name_pattern(target, "llm-12")
    assert pattern.startswith("^") and pattern.endswith("$")
    assert all(re.fullmatch(pattern[1:-1], name) for name in own)
    assert not any(re.fullmatch(pattern[1:-1], name) for name in others)


def test_any_of_matches_each() -> None:
    joined = any_of((pod_name_pattern("indexed-job", "a-1"), pod_name_pattern("mpijob", "b-2")))
    assert re.match(joined, "a-1-0-abcde") and re.match(joined, "b-2-worker-3")
    assert not re.match(joined, "c-3-0-abcde")
    assert any_of(()) == "" and any_of(("^x$",)) == "^x$"


def test_every_object_and_pod_names_the_owner() -> None:
    from translators import render
    import dataclasses

    inputs = dataclasses.replace(inputs_for(script()), ownership=Ownership(owner="alice@x"))
    result = render(inputs)
    for manifest in result.manifests:
        annotations = manifest["metadata"]["annotations"]
        assert annotations[OWNER] == "alice@x"
        assert annotations[PODS] == pod_name_pattern("indexed-job", "job-sh-1234")
    job = result.manifests[-1]
    assert job["spec"]["template"]["metadata"]["annotations"][OWNER] == "alice@x"
    assert "sbatch-k8s.io/submitted-from" not in job["metadata"]["annotations"]


def test_no_owner_no_annotations() -> None:
    from translators import render

    for manifest in render(inputs_for(script())).manifests:
        assert OWNER not in (manifest["metadata"].get("annotations") or {})


@pytest.mark.parametrize("cluster, slurm", [
    ("alice", "alice"),
    ("Alice@Example.com", "alice_example.com"),
    ("oidc:bob", "oidc_bob"),
    ("system:serviceaccount:ml:runner", "sa_ml_runner"),
])
def test_slurm_names(cluster: str, slurm: str) -> None:
    assert slurm_user_name(cluster, UsersConfig()) == slurm


def test_configured_names_and_hashed_uids() -> None:
    users = UsersConfig(names=(("alice@example.com", "alice"),), uid_min=5000, uid_max=5009)
    assert slurm_user_name("alice@example.com", users) == "alice"
    uids = {hashed_uid(f"user{i}", users) for i in range(50)}
    assert uids <= set(range(5000, 5010)) and len(uids) > 1
    assert hashed_uid("alice", users) == hashed_uid("alice", users)


def test_namespace_templates() -> None:
    assert namespace_for("u-{user}", "alice_example.com") == "u-alice-example-com"
    assert namespace_for("ml", "alice") == "ml"
