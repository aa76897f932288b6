"""srun outside an allocation on a cluster: a one-step job whose output comes back from node
0's pod log (through the API server's ``pods/log``, proxied to the test kubelet), with
``--label``, the step's exit code and Slurm's lines; Ctrl-C revokes a waiting job and, twice,
cancels a running one."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from typing import Any, List

import pytest

from sbatch_k8s.backends.kubernetes.api import kinds
from tests.apiserver.support import wait_until
from tests.kube.harness import KubeSlurm
from tests.kube.real_nodes import NODE_CPUS, RealNodes
from tests.local.harness import BIN

pytestmark = pytest.mark.slow


class Running:
    """An srun started in the background, its stderr collected line by line."""

    def __init__(self, kube: KubeSlurm, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(BIN / "srun"), *args], cwd=kube.work, env=kube.env,
            text=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.stderr: List[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr.append(line)

    def wait_for_stderr(self, text: str, timeout_s: float = 120) -> None:
        wait_until(lambda: any(text in line for line in self.stderr), timeout_s,
                   f"{text!r} on srun's stderr; got {self.stderr}")

    def finish(self, timeout_s: float = 120) -> "tuple[int, str, str]":
        assert self.process.stdout is not None
        out = self.process.stdout.read()
        code = self.process.wait(timeout_s)
        self._reader.join(10)
        return code, out, "".join(self.stderr)


def job_of(kube: KubeSlurm, name: str) -> int:
    """The id of the job named ``name`` (sacct)."""
    out = kube.run("sacct", "-X", "-n", "-P", "-o", "JobID,JobName").stdout
    return max(int(i) for i, n in (line.split("|") for line in out.splitlines()) if n == name)


def test_label_prints_every_nodes_lines(kube: KubeSlurm, kubelet: Any) -> None:
    done = kube.run("srun", "-N2", "--label", "hostname", timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    job_id = job_of(kube, "hostname")
    assert sorted(done.stdout.splitlines()) == [f"0: hostname-{job_id}-0",
                                                f"1: hostname-{job_id}-1"]
    sacct = kube.run("sacct", "-j", str(job_id), "-n", "-P", "-o", "JobID,State,ExitCode")
    assert f"{job_id}|COMPLETED|0:0" in sacct.stdout.splitlines()
    assert f"{job_id}.0|COMPLETED|0:0" in sacct.stdout.splitlines()


def test_the_steps_exit_code_and_slurms_task_lines(kube: KubeSlurm, kubelet: Any) -> None:
    done = kube.run("srun", "-N2", "sh", "-c", "echo out; echo err >&2; exit 3", timeout=180)
    assert done.returncode == 3, done.stdout + done.stderr
    job_id = job_of(kube, "sh")
    lines = done.stdout.splitlines()
    # the pod log merges the tasks' stdout and stderr (and the inner srun's): all on stdout
    assert sorted(lines) == sorted(["out", "err", "out", "err",
                                    f"srun: error: sh-{job_id}-0: task 0: Exited with exit code 3",
                                    f"srun: error: sh-{job_id}-1: task 1: Exited with exit code 3"])
    sacct = kube.run("sacct", "-j", str(job_id), "-X", "-n", "-P", "-o", "State,ExitCode")
    assert sacct.stdout == "FAILED|3:0\n"


def test_output_larger_than_a_pipe_buffer_arrives_intact(kube: KubeSlurm,
                                                         kubelet: Any) -> None:
    done = kube.run("srun", "seq", "200000", timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == "".join(f"{i}\n" for i in range(1, 200001))


def test_ctrl_c_twice_cancels_the_running_job(kube: KubeSlurm, kubelet: Any) -> None:
    srun = Running(kube, "-N2", "-l", "sh", "-c", "echo started; sleep 300")
    assert srun.process.stdout is not None
    assert srun.process.stdout.readline().endswith(": started\n")
    job_id = job_of(kube, "sh")
    srun.process.send_signal(signal.SIGINT)
    srun.wait_for_stderr(f"srun: StepId={job_id}.0 tasks 0-1: running")
    assert kube.objects(kinds.JOB, f"sbatch-k8s.io/job-id={job_id}")   # still running
    srun.process.send_signal(signal.SIGINT)
    srun.process.send_signal(signal.SIGINT)
    code, out, err = srun.finish()
    assert code == 128 + signal.SIGTERM, err
    assert "srun: interrupt (one more within 1 sec to abort)\n" in err
    assert "srun: forcing job termination\n" in err
    assert f"slurmstepd: error: *** JOB {job_id} ON sh-{job_id}-0 CANCELLED AT" in out
    sacct = kube.run("sacct", "-j", str(job_id), "-X", "-n", "-P", "-o", "State")
    assert sacct.stdout.startswith("CANCELLED by ")
    assert not kube.objects(kinds.JOB, f"sbatch-k8s.io/job-id={job_id}")
    wait_until(lambda: not kube.objects(kinds.POD, f"sbatch-k8s.io/job-id={job_id}"), 120,
               "the job's pods gone")


def _node_cpus(kubelet: Any) -> int:
    """The CPUs of one node: the real nodes' (their partitions say so), else the test
    kubelet's 4."""
    return NODE_CPUS if isinstance(kubelet, RealNodes) else 4


def test_a_waiting_job_says_so_and_ctrl_c_revokes_it(kube: KubeSlurm, kubelet: Any,
                                                     tmp_path: Any) -> None:
    if isinstance(kubelet, RealNodes):   # their partitions know the CPUs: both nodes busy
        blocker = kube.run("sbatch", "-N2", f"-c{NODE_CPUS}", "--wrap",
                           f"while [ ! -e {tmp_path / 'go'} ]; do sleep 0.1; done")
        assert blocker.returncode == 0, blocker.stderr
        srun = Running(kube, f"-c{NODE_CPUS}", "hostname")
    else:
        srun = Running(kube, "-c", "64", "hostname")       # more CPUs than any node has
    srun.wait_for_stderr("queued and waiting for resources")
    (tmp_path / "go").touch()
    job_id = job_of(kube, "hostname")
    assert f"srun: job {job_id} queued and waiting for resources\n" in srun.stderr
    srun.process.send_signal(signal.SIGINT)
    code, out, err = srun.finish()
    assert (code, out) == (1, "")
    assert err.endswith(f"srun: Job allocation {job_id} has been revoked\n"
                        f"srun: Force Terminated JobId={job_id}\n")
    sacct = kube.run("sacct", "-j", str(job_id), "-X", "-n", "-P", "-o", "State")
    assert sacct.stdout.startswith("CANCELLED by ")
    assert kube.everything(f"sbatch-k8s.io/job-id={job_id}") == {
        "ConfigMap": [f"sbatch-k8s-job-{job_id}"]}                 # the record alone


def test_a_queued_step_starts_when_resources_free_up(kube: KubeSlurm, kubelet: Any,
                                                     tmp_path: Any) -> None:
    go = tmp_path / "go"
    cpus = _node_cpus(kubelet)
    blocker = kube.run("sbatch", "-N2", f"-c{cpus}", "--wrap",
                       f"while [ ! -e {go} ]; do sleep 0.1; done")
    assert blocker.returncode == 0, blocker.stderr
    srun = Running(kube, f"-c{cpus}", "echo", "ran")
    srun.wait_for_stderr("queued and waiting for resources")
    go.touch()
    code, out, err = srun.finish()
    job_id = job_of(kube, "echo")
    assert (code, out) == (0, "ran\n"), err
    assert f"srun: job {job_id} queued and waiting for resources\n" \
           f"srun: job {job_id} has been allocated resources\n" in err
