"""What scontrol, sacct and squeue show of a cluster job's memory and time limit (issue 15,
item 7), as real Slurm 22.05 shows them (../shared/tools/real-slurm, DefMemPerCPU=256):
``sbatch -N2 --ntasks-per-node=2`` with no memory option gets ``MinMemoryCPU=256M``,
``TRES=cpu=4,mem=1G,node=2,billing=4`` and sacct ``ReqMem 1G`` — the default per CPU, and
that times the job's CPUs — while each pod requests 2 CPUs' worth, 512Mi. A job without
``--time`` shows the limit it runs with: the partition's DefaultTime."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from sbatch_k8s.backends.kubernetes.api.kinds import JOB
from tests.kube.harness import CONFIG, KubeSlurm, submitted_id

DEFAULTS = CONFIG + "def_mem_per_cpu_mb = 256\ndefault_time_min = 30\nmax_time_min = 120\n"


@pytest.fixture
def kube_defaults(cluster: Any, tmp_path: Path) -> Iterator[KubeSlurm]:
    slurm = KubeSlurm(tmp_path, cluster.kubeconfig, config=DEFAULTS)
    yield slurm
    slurm.cleanup()


def _container_resources(kube: KubeSlurm, job_id: int) -> Any:
    workload, = kube.objects(JOB, f"sbatch-k8s.io/job-id={job_id}")
    return workload["spec"]["template"]["spec"]["containers"][0]["resources"]


def test_default_memory_per_cpu_and_default_time_as_slurm_shows_them(
        kube_defaults: KubeSlurm) -> None:
    kube = kube_defaults
    job_id = submitted_id(kube.run("sbatch", "--hold", "-N2", "--ntasks-per-node=2",
                                   "--wrap", "true").stdout)
    assert _container_resources(kube, job_id)["limits"]["memory"] == "512Mi"
    shown = kube.run("scontrol", "show", "job", str(job_id)).stdout
    assert "MinMemoryCPU=256M " in shown, shown
    assert "TRES=cpu=4,mem=1G,node=2,billing=4" in shown, shown
    assert "TimeLimit=00:30:00 " in shown, shown
    accounting = kube.run("sacct", "-j", str(job_id), "-X", "-n", "-P", "-o",
                          "ReqMem,Timelimit,ReqTRES").stdout
    assert accounting == "1G|00:30:00|billing=4,cpu=4,mem=1G,node=2\n", accounting
    assert kube.run("squeue", "-h", "-j", str(job_id), "-o", "%l %m").stdout == "30:00 256M\n"


def test_memory_per_node_and_an_asked_time(kube_defaults: KubeSlurm) -> None:
    kube = kube_defaults
    job_id = submitted_id(kube.run("sbatch", "--hold", "-N2", "--mem=700M", "--time=5",
                                   "--wrap", "true").stdout)
    assert _container_resources(kube, job_id)["limits"]["memory"] == "700Mi"
    shown = kube.run("scontrol", "show", "job", str(job_id)).stdout
    assert "MinMemoryNode=700M " in shown and "TimeLimit=00:05:00 " in shown, shown
    assert "mem=1400M" in shown, shown
    done = kube.run("sbatch", "--hold", "--mem=200M", "--wrap", "true")
    assert "sbatch: warning: /dev/shm holds at most 200Mi, the pod's memory limit, not the " \
           "partition's shm_size, 64Mi" not in done.stderr       # 64Mi fits: no warning
    done = kube.run("sbatch", "--hold", "--mem=32M", "--wrap", "true")
    assert "sbatch: warning: /dev/shm holds at most 32Mi, the pod's memory limit, not the " \
           "partition's shm_size, 64Mi" in done.stderr, done.stderr
