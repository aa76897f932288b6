"""The design document's torchrun script, unchanged, on the indexed-job target: a 2-pod ×
2-process gloo all-reduce whose rendezvous goes over the pods' names (the test kubelet runs
the pods on this machine; torch runs on the CPU). Two torchrun jobs at once with the
rendezvous endpoint fixed to the runtime's ``$MASTER_ADDR:$MASTER_PORT``: each job's node 0
is a pod with an address of its own, so both finish (issue 18, item 5)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.data import TORCHRUN_SCRIPT
from tests.kube.harness import KubeSlurm, submitted_id
from tests.local.test_torchrun import TRAIN, check_torchrun_output, run_two_at_once

pytestmark = pytest.mark.slow


@pytest.fixture
def gpu_kubelet(cluster: Any) -> Iterator[Any]:
    """Two Ready nodes with 2 (pretend) GPUs each, so --gpus-per-node=2 pods schedule."""
    from tests.kubelet import TestKubelet

    with TestKubelet(cluster.kubeconfig, nodes=2, gpus=2) as running:
        yield running


def test_design_torchrun_script_runs_on_pods(kube: KubeSlurm, gpu_kubelet: Any,
                                             tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="torch is needed (CI installs torch==2.13.0)")
    kube.script("train.py", TRAIN)
    kube.script("llm.sh", TORCHRUN_SCRIPT.read_text())
    done = kube.run("sbatch", "--wait", "--gpus-per-node=2", "llm.sh", timeout=300)
    assert done.returncode == 0, done.stderr
    job = submitted_id(done.stdout)
    check_torchrun_output(kube.read(f"logs/llm-{job}.out"))


def test_two_torchrun_jobs_with_fixed_endpoints_both_finish(kube: KubeSlurm,
                                                            kubelet: Any) -> None:
    pytest.importorskip("torch", reason="torch is needed (CI installs torch==2.13.0)")
    run_two_at_once(kube, shared_addresses=False)
