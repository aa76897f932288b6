"""Jobs end to end on an API server with the test kubelet: sbatch → pods run the script once →
srun fans out to every pod → squeue shows the job → sacct shows how it ended."""

from __future__ import annotations

from typing import Any

import pytest

from sbatch_k8s.backends.kubernetes.api import kinds
from tests.apiserver.support import wait_until
from tests.kube.real_nodes import NODE_CPUS, RealNodes
from tests.kube.harness import KubeSlurm, submitted_id

pytestmark = pytest.mark.slow

TWO_NODES = """#!/bin/sh
#SBATCH --job-name=pair --nodes=2 --ntasks-per-node=2
echo "batch on $(hostname) job $SLURM_JOB_ID nodes $SLURM_JOB_NODELIST"
srun --label sh -c 'echo "task $SLURM_PROCID of $SLURM_NTASKS on $(hostname)"'
"""


def test_two_node_job_runs_script_once_and_srun_everywhere(kube: KubeSlurm,
                                                           kubelet: Any) -> None:
    kube.script("pair.sh", TWO_NODES)
    done = kube.run("sbatch", "--wait", "pair.sh", timeout=120)
    assert done.returncode == 0, done.stderr
    job_id = submitted_id(done.stdout)
    out = kube.read(f"slurm-{job_id}.out").splitlines()
    assert out[0] == f"batch on pair-{job_id}-0 job {job_id} nodes pair-{job_id}-[0-1]"
    tasks = sorted(out[1:])
    assert tasks == sorted(
        f"{rank}: task {rank} of 4 on pair-{job_id}-{rank // 2}" for rank in range(4))
    sacct = kube.run("sacct", "-j", str(job_id), "-n", "-P", "-o", "JobID,State,ExitCode")
    assert sacct.returncode == 0, sacct.stderr
    lines = sacct.stdout.splitlines()
    assert lines[0] == f"{job_id}|COMPLETED|0:0"
    assert f"{job_id}.batch|COMPLETED|0:0" in lines
    assert f"{job_id}.0|COMPLETED|0:0" in lines


def test_exit_code_reaches_sbatch_wait_and_sacct(kube: KubeSlurm, kubelet: Any) -> None:
    kube.script("fail.sh", "#!/bin/sh\necho about to fail\nexit 3\n")
    done = kube.run("sbatch", "--wait", "fail.sh", timeout=120)
    assert done.returncode == 3, done.stderr
    job_id = submitted_id(done.stdout)
    sacct = kube.run("sacct", "-j", str(job_id), "-X", "-n", "-P", "-o", "State,ExitCode")
    assert sacct.stdout == "FAILED|3:0\n"


def test_squeue_shows_running_then_scancel_cancels(kube: KubeSlurm, kubelet: Any) -> None:
    kube.script("sleepy.sh", "#!/bin/sh\n#SBATCH -J sleepy\nsleep 120\n")
    job_id = submitted_id(kube.run("sbatch", "sleepy.sh").stdout)

    def running() -> str:
        out = kube.run("squeue", "-h", "-o", "%i %j %T %D %N").stdout
        return out if "RUNNING" in out else ""

    line = wait_until(running, 60, f"job {job_id} running")
    assert line == f"{job_id} sleepy RUNNING 1 sleepy-{job_id}-0\n"
    cancel = kube.run("scancel", str(job_id))
    assert cancel.returncode == 0, cancel.stderr
    sacct = kube.run("sacct", "-j", str(job_id), "-X", "-n", "-P", "-o", "State")
    assert sacct.stdout.startswith("CANCELLED by ")
    steps = kube.run("sacct", "-j", str(job_id), "-n", "-P", "-o", "JobID,State,ExitCode")
    assert steps.stdout.splitlines()[1:] == [f"{job_id}.batch|CANCELLED|0:15",
                                             f"{job_id}.extern|COMPLETED|0:0"]
    wait_until(lambda: not kube.objects(kinds.POD, f"sbatch-k8s.io/job-id={job_id}"), 60,
               "the job's pods gone")
    assert kube.run("squeue", "-h").stdout == ""


def test_hold_and_release(kube: KubeSlurm, kubelet: Any) -> None:
    kube.script("held.sh", "#!/bin/sh\n#SBATCH -J held\necho released\n")
    job_id = submitted_id(kube.run("sbatch", "--hold", "held.sh").stdout)
    out = kube.run("squeue", "-h", "-o", "%i %T %r").stdout
    assert out == f"{job_id} PENDING JobHeldUser\n"
    assert not kube.objects(kinds.POD, f"sbatch-k8s.io/job-id={job_id}")
    release = kube.run("scontrol", "release", str(job_id))
    assert release.returncode == 0, release.stderr
    wait_until(lambda: kube.run("sacct", "-j", str(job_id), "-X", "-n", "-o", "State")
               .stdout.split() == ["COMPLETED"], 60, "the released job completed")
    assert kube.read(f"slurm-{job_id}.out") == "released\n"


def test_sinfo_lists_the_kubelet_nodes(kube: KubeSlurm, kubelet: Any) -> None:
    out = kube.run("sinfo", "-h", "-N", "-o", "%N %T %c")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    cpus = NODE_CPUS if isinstance(kubelet, RealNodes) else 4   # the test kubelet's nodes
    assert len(lines) == 2 and all(line.endswith(f" idle {cpus}") for line in lines), lines


def test_array_elements_run_and_are_accounted(kube: KubeSlurm, kubelet: Any) -> None:
    kube.script("arr.sh", "#!/bin/sh\n#SBATCH -J arr -o arr-%A_%a.out\n"
                          "echo element $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_JOB_ID\n")
    done = kube.run("sbatch", "--wait", "--array=0-2", "arr.sh", timeout=120)
    assert done.returncode == 0, done.stderr
    job_id = submitted_id(done.stdout)
    for task in range(3):
        assert kube.read(f"arr-{job_id}_{task}.out") == f"element {task} of {job_id}\n"
    sacct = kube.run("sacct", "-j", str(job_id), "-X", "-n", "-P", "-o", "JobID,State")
    assert sacct.stdout.splitlines() == [f"{job_id}_{t}|COMPLETED" for t in range(3)]


@pytest.mark.parametrize("target,kind", [("jobset", kinds.JOBSET),
                                         ("pytorchjob", kinds.PYTORCHJOB),
                                         ("mpijob", kinds.MPIJOB)])
def test_other_targets_are_created_and_pending(kube: KubeSlurm, target: str,
                                               kind: Any) -> None:
    kube.script("hello.sh", "#!/bin/sh\n#SBATCH -J other -N2\nhostname\n")
    done = kube.run("sbatch", f"--k8s-target={target}", "hello.sh")
    assert done.returncode == 0, done.stderr
    job_id = submitted_id(done.stdout)
    assert [o["metadata"]["name"] for o in kube.objects(kind)] == [f"other-{job_id}"]
    out = kube.run("squeue", "-h", "-o", "%i %T")
    assert out.stdout == f"{job_id} PENDING\n"
