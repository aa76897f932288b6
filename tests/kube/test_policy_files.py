"""The admission policy files of ``deploy/``: one content, two API versions."""

from __future__ import annotations

import yaml

from tests.local.harness import REPO


def _documents(name: str) -> list:
    return [d for d in yaml.safe_load_all((REPO / "deploy" / name).read_text()) if d]


def test_the_v1_file_is_the_v1beta1_file_under_v1() -> None:
    beta, v1 = _documents("policy.yaml"), _documents("policy-v1.yaml")
    assert {d["apiVersion"] for d in beta} == {"admissionregistration.k8s.io/v1beta1"}
    assert {d["apiVersion"] for d in v1} == {"admissionregistration.k8s.io/v1"}
    for doc in beta:
        doc["apiVersion"] = "admissionregistration.k8s.io/v1"
    assert beta == v1


def test_every_policy_has_a_binding_that_denies() -> None:
    docs = _documents("policy.yaml")
    policies = {d["metadata"]["name"] for d in docs if d["kind"] == "ValidatingAdmissionPolicy"}
    bindings = {d["spec"]["policyName"]: d["spec"]["validationActions"] for d in docs
                if d["kind"] == "ValidatingAdmissionPolicyBinding"}
    assert set(bindings) == policies and len(policies) == 3
    assert all(actions == ["Deny"] for actions in bindings.values())
