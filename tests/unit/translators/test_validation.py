"""Every golden case, on every target, renders manifests a real cluster would accept: valid
against Kubernetes 1.29 (oldest supported) and 1.37 (newest), against the pinned CRDs, and
against the operators' admission rules."""

from __future__ import annotations

import pytest

from tests.unit.translators.support import CASES_DIR, TARGET_NAMES, render_script
from tests.unit.translators.test_goldens import CASES, case_args
from tests.unit.translators.validation import (
    manifest_problems,
    strictify,
    webhook_problems,
)

MINORS = (29, 37)


def _refused(case: str, target: str) -> bool:
    """True when the case's golden output is a refusal (nothing to validate)."""
    golden = CASES_DIR / f"{case}.{target}.yaml"
    return golden.exists() and golden.read_text().startswith("# sbatch: error:")


RENDERED = [(case, target) for case in CASES for target in TARGET_NAMES
            if not _refused(case, target)]


@pytest.mark.parametrize("minor", MINORS)
@pytest.mark.parametrize("case, target", RENDERED)
def test_manifests_are_valid(case: str, target: str, minor: int) -> None:
    text = (CASES_DIR / f"{case}.sbatch").read_text()
    result = render_script(text, case_args(case), script_path=f"{case}.sbatch",
                           target=target, minor=minor)
    problems = [p for obj in result.manifests for p in manifest_problems(obj, minor)]
    assert not problems, "\n".join(problems)


def test_strictify_catches_unknown_fields() -> None:
    import jsonschema

    schema = strictify({"type": "object", "properties": {
        "metadata": {"type": "object", "properties": {"name": {"type": "string"}}},
        "spec": {"type": "object", "properties": {"image": {"type": "string"}}},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                 "properties": {"a": {"type": "string"}}}}})
    validator = jsonschema.Draft7Validator(schema)
    assert not list(validator.iter_errors({"metadata": {"name": "x", "labels": {}},
                                           "free": {"b": 1}, "spec": {"image": "i"}}))
    assert list(validator.iter_errors({"spec": {"imagee": "i"}}))


@pytest.mark.parametrize("obj, problem", [
    ({"kind": "PyTorchJob", "metadata": {"name": "a"}, "spec": {"pytorchReplicaSpecs": {
        "Master": {"replicas": 2, "template": {"spec": {"containers": [
            {"name": "pytorch", "image": "i"}]}}}}}}, "Master replicas must be 1"),
    ({"kind": "PyTorchJob", "metadata": {"name": "a"}, "spec": {"pytorchReplicaSpecs": {
        "Master": {"replicas": 1, "template": {"spec": {"containers": [
            {"name": "main", "image": "i"}]}}}}}}, "no container named pytorch"),
    ({"kind": "MPIJob", "metadata": {"name": "a" * 60}, "spec": {"mpiReplicaSpecs": {
        "Launcher": {"replicas": 1}}}}, "launcher Job name"),
    ({"kind": "Job", "metadata": {"name": "Upper"}, "spec": {"completions": 1}}, "Job name"),
])
def test_webhook_checks_catch_what_operators_refuse(obj: dict, problem: str) -> None:
    assert any(problem in p for p in webhook_problems(obj))
