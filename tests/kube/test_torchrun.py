"""The design document's torchrun script, unchanged, on the indexed-job target: a 2-pod ×
2-process gloo all-reduce whose rendezvous goes over the pods' names (the test kubelet runs
the pods on this machine; torch runs on the CPU). Two torchrun jobs at once with the
rendezvous endpoint fixed to the runtime's ``$MASTER_ADDR:$MASTER_PORT``: each job's node 0
is a pod with an address of its own, so both finish (issue 18, item 5). On real nodes
(``--with-real-node``, the torch image of ``../shared/tools/real-node``, ``WITH_TORCH=1``):
the same script without GPUs, and with too little memory, where the kernel kills a
torchrun agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.data import TORCHRUN_SCRIPT
from tests.kube import harness
from tests.kube.harness import CONFIG, KubeSlurm, submitted_id
from tests.local.test_torchrun import TRAIN, check_torchrun_output, run_two_at_once

pytestmark = pytest.mark.slow


@pytest.fixture
def gpu_kubelet(request: pytest.FixtureRequest, cluster: Any) -> Iterator[Any]:
    """Two Ready nodes with 2 (pretend) GPUs each, so --gpus-per-node=2 pods schedule."""
    from tests.kube.real_nodes import skip_on_real_nodes
    from tests.kubelet import TestKubelet

    skip_on_real_nodes(request.config, "the test kubelet's nodes pretend to have GPUs "
                       "(test_torchrun_on_real_nodes runs the script on CPUs there)")
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


def test_two_torchrun_jobs_with_fixed_endpoints_both_finish(cluster: Any, kube: KubeSlurm,
                                                            kubelet: Any,
                                                            tmp_path: Path) -> None:
    if harness.CONFIG_FILTER is not None:     # real nodes: torch is in their torch image
        kube = _torch_kube(cluster, tmp_path / "torch")
    else:
        pytest.importorskip("torch", reason="torch is needed (CI installs torch==2.13.0)")
    run_two_at_once(kube, shared_addresses=False)


def _cpu_script() -> str:
    """The design's script on CPUs: two processes per node, no GPUs asked."""
    return TORCHRUN_SCRIPT.read_text().replace(" --gpus-per-node=8", "").replace(
        '"$SLURM_GPUS_PER_NODE"', "2")


def _torch_kube(cluster: Any, tmp_path: Path) -> KubeSlurm:
    from tests.kube.real_nodes import TORCH_IMAGE

    if harness.CONFIG_FILTER is None:
        pytest.skip("runs on real nodes (--with-real-node), in their torch image")
    return KubeSlurm(tmp_path, cluster.kubeconfig,
                     config=CONFIG.replace('image = "python:3.12-slim"',
                                           f'image = "{TORCH_IMAGE}"'))


def test_torchrun_on_real_nodes(cluster: Any, kubelet: Any, tmp_path: Path) -> None:
    """Real kubelets, containerd and DNS: the rendezvous goes over the cluster DNS."""
    kube = _torch_kube(cluster, tmp_path)
    kube.script("train.py", TRAIN)
    kube.script("llm.sh", _cpu_script())
    done = kube.run("sbatch", "--wait", "--mem=2G", "llm.sh", timeout=600)
    assert done.returncode == 0, done.stderr
    check_torchrun_output(kube.read(f"logs/llm-{submitted_id(done.stdout)}.out"))
    kube.cleanup()


def test_torchrun_out_of_memory_ends_the_step(cluster: Any, kubelet: Any,
                                              tmp_path: Path) -> None:
    """Too little memory for two torch workers per node: the kernel kills a torchrun agent
    or worker. The task is over when its process is (its workers no longer hold the step
    open), the step is OUT_OF_MEMORY and the job ends at once — before, it sat until its
    time limit and ended TIMEOUT with no word of memory."""
    kube = _torch_kube(cluster, tmp_path)
    kube.script("train.py", TRAIN)
    kube.script("llm.sh", _cpu_script().replace("--time=2-00:00:00", "--time=10"))
    done = kube.run("sbatch", "--wait", "--mem=300M", "llm.sh", timeout=600)
    job = submitted_id(done.stdout)
    out = kube.read(f"logs/llm-{job}.out")
    assert "oom-kill event(s)" in out and "Out Of Memory" in out, out
    rows = kube.run("sacct", "-j", str(job), "-n", "-P", "-o", "JobID,State").stdout
    assert f"{job}.0|OUT_OF_MEMORY" in rows.splitlines(), rows
    assert "TIMEOUT" not in rows, rows
    kube.cleanup()
