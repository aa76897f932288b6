"""``sbatch --k8s-print job.sh | kubectl apply --server-side -f -`` on a real API server: the
printed stream creates a job that runs, where a client-side
``kubectl apply`` is refused: the runtime ConfigMap does not fit its 256 kB
``last-applied-configuration`` annotation (issue 15, item 9). Needs ``kubectl`` and
``--with-kube-apiserver`` (server-side apply is the real server's)."""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

import pytest

from sbatch_k8s.backends.kubernetes.api import kinds
from tests.apiserver.support import wait_until
from tests.kube.harness import KubeSlurm

JOB = "#!/bin/sh\n#SBATCH --job-name=printed\necho printed and applied\n"


def _pipe(kube: KubeSlurm, apply: str) -> "subprocess.CompletedProcess[str]":
    sbatch = " ".join(kube.commands("sbatch"))
    return subprocess.run(["/bin/sh", "-c", f"{sbatch} --k8s-print job.sh | {apply}"],
                          cwd=kube.work, env=dict(kube.env, SBATCHK8S_BACKEND="local"),
                          capture_output=True, text=True, timeout=120)


def test_the_printed_job_applies_server_side_and_runs(cluster: Any, kubelet: Any,
                                                      kube: KubeSlurm) -> None:
    if getattr(cluster, "faults", None) is not None:
        pytest.skip("server-side apply needs a real API server (--with-kube-apiserver)")
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("no kubectl")
    kube.script("job.sh", JOB)
    namespace = kube.namespace
    client_side = _pipe(kube, f"{kubectl} -n {namespace} apply -f -")
    assert client_side.returncode != 0
    assert "metadata.annotations: Too long: must have at most 262144 bytes" in \
        client_side.stderr, client_side.stderr
    for kind in (kinds.JOB, kinds.SERVICE, kinds.SECRET, kinds.CONFIG_MAP):
        for item in kube.objects(kind):                # what it did create, taken back
            kube.api().delete(kind, item["metadata"]["name"], namespace)
    wait_until(lambda: not kube.everything(), 60, "the half-applied job is gone")

    done = _pipe(kube, f"{kubectl} -n {namespace} apply --server-side -f -")
    assert done.returncode == 0, done.stderr
    assert "configmap/sbatch-k8s-runtime-" in done.stdout and \
        "job.batch/printed-1 serverside-applied" in done.stdout, done.stdout

    def succeeded() -> bool:
        job = kube.api().get(kinds.JOB, "printed-1", namespace) or {}
        return bool((job.get("status") or {}).get("succeeded"))
    wait_until(succeeded, 180, "the printed job ran to completion")
    assert kube.read("slurm-1.out") == "printed and applied\n"
