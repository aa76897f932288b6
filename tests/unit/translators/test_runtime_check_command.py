"""The pod's command checks the runtime it mounts before running it (the check is the pod's
own code: :data:`translators.pod.VERIFY_RUNTIME`), run here with this machine's python3."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

from translators.pod import RUNTIME_MISMATCH_EXIT, runtime_command

RUNTIME = "/opt/sbatch-k8s/runtime.pyz"


def _run(tmp_path: Path, content: bytes, digest: str) -> "subprocess.CompletedProcess[str]":
    runtime = tmp_path / "runtime.pyz"
    runtime.write_bytes(content)
    script = runtime_command("indexed-job", "img", digest)[2]
    script = script.replace(RUNTIME, str(runtime)).replace(
        "/dev/termination-log", str(tmp_path / "termination-log"))
    script = script.replace(f"exec python3 {runtime} node --contract indexed-job",
                            "echo the runtime runs")
    return subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True,
                          timeout=60)


def test_the_runtime_it_was_submitted_with_runs(tmp_path: Path) -> None:
    done = _run(tmp_path, b"runtime bytes", hashlib.sha256(b"runtime bytes").hexdigest())
    assert (done.returncode, done.stdout, done.stderr) == (0, "the runtime runs\n", "")


def test_other_bytes_end_the_pod_with_one_line(tmp_path: Path) -> None:
    want = hashlib.sha256(b"runtime bytes").hexdigest()
    done = _run(tmp_path, b"someone else's code", want)
    assert done.returncode == RUNTIME_MISMATCH_EXIT and done.stdout == ""
    got = hashlib.sha256(b"someone else's code").hexdigest()
    why = (f"the runtime in {tmp_path / 'runtime.pyz'} is not the one this job was "
           f"submitted with (SHA-256 {got[:16]}, expected {want[:16]}): it was not run")
    assert done.stderr == f"sbatch-k8s: error: {why}\n"
    report = json.loads((tmp_path / "termination-log").read_text())
    assert report == {"state": "FAILED", "reason": "JobLaunchFailure", "exit_code": 126,
                      "system_comment": why}


def test_without_a_digest_nothing_is_checked() -> None:
    assert "sha256" not in runtime_command("indexed-job", "img")[2]
