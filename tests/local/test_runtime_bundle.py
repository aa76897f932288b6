"""The runtime zipapp pods run: deterministic, small, and working on Python 3.8 with lark
from inside the bundle; a clear line when the image's Python cannot run it."""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest

from sbatch_k8s.runtime_bundle import MAX_BUNDLE_BYTES, build_bundle, bundle_hash
from tests.local.harness import LocalSlurm, find_python
from translators.pod import runtime_command


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bundle") / "runtime.pyz"
    path.write_bytes(build_bundle())
    return path


def test_bundle_is_deterministic_and_small(bundle: Path) -> None:
    again = build_bundle()
    assert again == bundle.read_bytes()
    assert len(again) < MAX_BUNDLE_BYTES
    assert len(bundle_hash(again)) == 12
    names = zipfile.ZipFile(bundle).namelist()
    assert "__main__.py" in names and "lark/lark.py" in names
    assert "parsers/values/time.lark" in names and "sbatch_k8s/runtime/agent/node.py" in names
    assert not any(n.startswith(("translators/", "sbatch_k8s/cli/")) for n in names)


@pytest.mark.parametrize("version", ["3.8", "3"])
def test_a_job_runs_on_the_bundle(tmp_path: Path, bundle: Path, version: str) -> None:
    interpreter = find_python(version)
    if interpreter is None:
        pytest.skip(f"python{version} is not installed here")
    slurm = LocalSlurm(tmp_path)
    try:
        env = {"SBATCHK8S_RUNTIME_PYZ": str(bundle), "SBATCHK8S_RUNTIME_PYTHON": interpreter}
        done = slurm.run("sbatch", "--wait", "-N2", "-o", "b.out", "--wrap",
                         "srun -l python3 -c 'import sys; print(sys.version_info[:2])' "
                         ">/dev/null; scontrol show hostnames; srun -l hostname | wc -l",
                         env=env)
        assert done.returncode == 0, done.stderr
        assert slurm.read("b.out") == "127.0.0.2\n127.0.0.3\n2\n"
    finally:
        slurm.cleanup()


def test_an_old_python_gets_one_clear_line(bundle: Path) -> None:
    old = find_python("2.7") or find_python("3.6")
    if old is None:
        pytest.skip("no Python older than 3.8 is installed here")
    done = subprocess.run([old, str(bundle), "node"], capture_output=True, text=True)
    assert done.returncode == 127
    assert done.stderr.startswith("sbatch-k8s: error: python3 in this image is ")
    assert done.stderr.endswith("; the sbatch-k8s runtime needs Python >= 3.8\n")


def test_an_image_without_python_gets_one_clear_line(tmp_path: Path) -> None:
    command = runtime_command("indexed-job", "busybox:1.36")
    done = subprocess.run(command, capture_output=True, text=True,
                          env={"PATH": str(tmp_path)})
    assert done.returncode == 127
    assert done.stderr == ("sbatch-k8s: error: image busybox:1.36 has no python3; the "
                           "sbatch-k8s runtime needs Python >= 3.8\n")
