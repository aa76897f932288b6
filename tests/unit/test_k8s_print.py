"""``sbatch --k8s-print`` prints everything ``kubectl apply --server-side -f -`` needs (run on a
real API server by ``tests/kube/test_print_apply.py``): the shared runtime
ConfigMap first (whose hash the pods' volumes name), then the job's objects, all valid; and
``--k8s-kubernetes-version`` chooses the version-dependent fields."""

from __future__ import annotations

import base64
import subprocess
import sys
from typing import Dict, List, Sequence

import pytest
import yaml

from parsers.input_errors import SlurmInputError
from parsers.sbatch_input import build_job, load_script, split_command_line
from sbatch_k8s.runtime_bundle import build_bundle, bundle_hash
from sbatch_k8s.cli.k8s_print import print_manifests
from sbatch_k8s.config_file import load_config
from sbatch_k8s.submission_plan import plan_submission
from translators.objects import runtime_config_map
from tests.unit.translators.support import CASES_DIR, TARGET_NAMES
from tests.unit.translators.validation import manifest_problems

REPO = CASES_DIR.parents[1]
SCRIPT = "#!/bin/bash\n#SBATCH --nodes=2 --time=10\nsrun hostname\n"
ENVIRON = {"SBATCHK8S_CONFIG": str(CASES_DIR / "config.toml"), "SBATCHK8S_BACKEND": "local",
           "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}


def _printed(args: Sequence[str]) -> List[Dict]:
    command_line = split_command_line(list(args) + ["job.sh"])
    script = load_script(command_line, SCRIPT, command_line.script_path)
    job, submit = build_job(command_line, ENVIRON, script)
    text = print_manifests(plan_submission(job, submit, load_config(ENVIRON)[0], ENVIRON))
    return [doc for doc in yaml.safe_load_all(text) if doc]


def _volumes(obj: object) -> List[Dict]:
    """Every pod volume anywhere in ``obj``."""
    found: List[Dict] = []
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key == "volumes" and isinstance(value, list):
                found.extend(value)
            else:
                found.extend(_volumes(value))
    elif isinstance(obj, list):
        for item in obj:
            found.extend(_volumes(item))
    return found


def test_the_command_prints_the_runtime_config_map_first() -> None:
    """The real command, as a user pipes it into kubectl."""
    done = subprocess.run([sys.executable, str(REPO / "bin" / "sbatch"), "--k8s-print",
                           str(CASES_DIR / "hello.sbatch")], env=ENVIRON, capture_output=True,
                          text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    docs = [doc for doc in yaml.safe_load_all(done.stdout) if doc]
    first = docs[0]
    digest = bundle_hash(build_bundle())
    assert (first["kind"], first["metadata"]["name"]) == (
        "ConfigMap", f"sbatch-k8s-runtime-{digest}")
    assert base64.b64decode(first["binaryData"]["runtime.pyz"]) == build_bundle()
    assert [d["kind"] for d in docs[1:]] == ["ConfigMap", "Secret", "Service", "Job"]


@pytest.mark.parametrize("target", TARGET_NAMES)
def test_printed_objects_are_complete_and_valid(target: str) -> None:
    docs = _printed([f"--k8s-target={target}"])
    runtime = docs[0]
    assert runtime["kind"] == "ConfigMap" and runtime.get("immutable") is True
    references = {v["configMap"]["name"] for v in _volumes(docs)
                  if v["name"] == "sbatch-k8s-runtime"}
    assert references == {runtime["metadata"]["name"]}
    assert runtime["metadata"]["name"].endswith(bundle_hash(
        base64.b64decode(runtime["binaryData"]["runtime.pyz"])))
    problems = [p for doc in docs for p in manifest_problems(doc, 29)]
    assert not problems, "\n".join(problems)


def test_objects_only_leaves_the_runtime_out() -> None:
    docs = _printed(["--k8s-print=objects"])
    assert [d["kind"] for d in docs] == ["ConfigMap", "Secret", "Service", "Job"]
    assert not docs[0]["metadata"]["name"].startswith("sbatch-k8s-runtime-")


def test_runtime_config_map_is_pure() -> None:
    first = runtime_config_map("0123456789ab", b"PK\x03\x04zip")
    assert first == runtime_config_map("0123456789ab", b"PK\x03\x04zip")
    assert first == {"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": "sbatch-k8s-runtime-0123456789ab",
                                  "labels": {"app.kubernetes.io/managed-by": "sbatch-k8s"}},
                     "immutable": True,
                     "binaryData": {"runtime.pyz": base64.b64encode(b"PK\x03\x04zip").decode()}}


@pytest.mark.parametrize("args, success_policy", [
    ([], False),                                   # default 1.29
    (["--k8s-kubernetes-version=1.30"], False),
    (["--k8s-kubernetes-version=1.31"], True),
    (["--k8s-kubernetes-version=v1.33.2"], True),
    (["--k8s-kubernetes-version=1.31.4-gke.1072000"], True),
])
def test_kubernetes_version_gates_fields(args: List[str], success_policy: bool) -> None:
    job = next(d for d in _printed(args) if d["kind"] == "Job")
    assert ("successPolicy" in job["spec"]) is success_policy


@pytest.mark.parametrize("value, message", [
    ("2.0", "Invalid --k8s-kubernetes-version specification: 2.0 (a Kubernetes version such "
            "as 1.29)"),
    ("1.x", "Invalid --k8s-kubernetes-version specification: 1.x (a Kubernetes version such "
            "as 1.29)"),
    ("", "Invalid --k8s-kubernetes-version specification:  (a Kubernetes version such "
         "as 1.29)"),
    ("1.23", "Invalid --k8s-kubernetes-version specification: 1.23 (Kubernetes 1.24 or "
             "newer)"),
])
def test_bad_kubernetes_version_is_one_line(value: str, message: str) -> None:
    with pytest.raises(SlurmInputError) as caught:
        _printed([f"--k8s-kubernetes-version={value}"])
    assert caught.value.render("sbatch") == f"sbatch: error: {message}\n"


def test_bad_print_value() -> None:
    with pytest.raises(SlurmInputError) as caught:
        _printed(["--k8s-print=everything"])
    assert "Invalid --k8s-print specification: everything (all or objects)" in str(
        caught.value.render("sbatch"))
