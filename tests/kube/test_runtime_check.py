"""The pod checks the runtime it mounts before running it: a shared runtime ConfigMap with
other bytes under its name (created by whoever came first to a namespace, or put back by an
operator's mistake) never runs; the job ends with one line that reaches the user."""

from __future__ import annotations

import base64
import io
import re
import zipfile
from pathlib import Path
from typing import Any

from sbatch_k8s.backends.kubernetes.api import kinds
from tests.apiserver.support import wait_until
from tests.kube.harness import KubeSlurm


def _evil_runtime(marker: Path) -> bytes:
    """A zipapp that would leave ``marker`` if anything ran it."""
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        archive.writestr("__main__.py", f"open({str(marker)!r}, 'w').write('ran')\n")
    return data.getvalue()


def test_a_runtime_with_other_bytes_never_runs(kube: KubeSlurm, kubelet: Any) -> None:
    kube.script("job.sh", "#!/bin/sh\n#SBATCH --job-name=checked\necho should not run\n")
    waiting = kube.start("sbatch", "-Q", "--wait", "--hold", "job.sh")
    api = kube.api()
    wait_until(lambda: kube.objects(kinds.JOB), 60, "the held job exists")
    runtime = next(c for c in kube.objects(kinds.CONFIG_MAP)
                   if c["metadata"]["name"].startswith("sbatch-k8s-runtime-"))
    name = runtime["metadata"]["name"]
    marker = kube.work / "evil-ran"
    api.delete(kinds.CONFIG_MAP, name, kube.namespace)       # as an operator may
    api.create({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "labels": runtime["metadata"]["labels"]},
                "immutable": True, "binaryData": {"runtime.pyz": base64.b64encode(
                    _evil_runtime(marker)).decode()}}, kube.namespace)

    refused = kube.run("sbatch", "-Q", "job.sh")
    assert refused.returncode == 1 and refused.stdout == "", refused
    assert refused.stderr.startswith(
        "sbatch: error: Batch job submission failed: the shared runtime ConfigMap "
        f"{name} in namespace {kube.namespace} does not hold this runtime"), refused.stderr
    assert refused.stderr.endswith(": an operator must delete it\n")

    job_id = int(kube.objects(kinds.JOB)[0]["metadata"]["labels"]["sbatch-k8s.io/job-id"])
    done = kube.run("scontrol", "release", str(job_id))
    assert done.returncode == 0, done.stderr
    out, err = waiting.communicate(timeout=180)
    line = ("the runtime in /opt/sbatch-k8s/runtime.pyz is not the one this job was "
            "submitted with")
    assert waiting.returncode != 0
    assert out == ""                                          # -Q
    assert err.startswith(f"sbatch: error: job {job_id}: {line}"), err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    shown = kube.run("scontrol", "show", "job", str(job_id)).stdout
    assert "JobState=FAILED Reason=JobLaunchFailure" in shown, shown
    assert f"SystemComment={line}" in shown, shown

    def node0() -> str:
        """node 0's detail line; a real kubelet writes its pod's Failed phase only once the
        pod is torn down (until then: Pending, its container already ended)."""
        detailed = kube.run("scontrol", "-d", "show", "job", str(job_id)).stdout
        assert f"SystemComment={line}" in detailed, detailed
        return next(n for n in detailed.splitlines()
                    if n.startswith(f"     Node=checked-{job_id}-0 "))
    wait_until(lambda: " Phase=Failed " in node0(), 60, "node 0's pod Failed")
    assert re.search(r" LastEvent=\S+ Error: container \S+ ended: exit code [1-9]", node0())
    assert not marker.exists()
