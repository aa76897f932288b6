"""SIGTERM to a node process (Kubernetes deleting its pod): as slurmstepd on every node, the
node's tasks get SIGTERM, KillWait to run their handlers, then SIGKILL; then it exits."""

from __future__ import annotations

import os
import signal
import time
from typing import List

from tests.local.harness import LocalSlurm, job_id_of

TRAPPING_TASK = ("trap 'echo got TERM on node $SLURM_NODEID; exit 7' TERM\n"
                 "touch up.$SLURM_PROCID; while true; do sleep 0.1; done\n")
STUBBORN_TASK = "trap '' TERM\ntouch up.$SLURM_PROCID; while true; do sleep 0.1; done\n"


def start_job(slurm: LocalSlurm, task: str) -> int:
    """A 2-node job whose step runs ``task`` (a bash script) on both nodes; its id, once
    both tasks are up (``--no-requeue``: the job ends PREEMPTED, not requeued)."""
    slurm.script("task.sh", task)
    slurm.script("job.sh", "#!/bin/bash\n#SBATCH -N2 --no-requeue -o job.out\n"
                           "srun -N2 -n2 bash task.sh\necho srun rc=$?\n")
    job = job_id_of(slurm.run("sbatch", "job.sh").stdout)
    slurm.wait_for(lambda: (slurm.work / "up.0").exists() and (slurm.work / "up.1").exists())
    return job


def node_processes(slurm: LocalSlurm, index: int) -> List[int]:
    """Pids of this cluster's ``runtime node --index <index>`` processes."""
    marker = str(slurm.state).encode()
    wanted = f"node\0--contract\0local\0--index\0{index}\0".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if not f.read().endswith(wanted):
                    continue
            with open(f"/proc/{entry}/environ", "rb") as f:
                if marker in f.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def test_sigterm_to_node_1_lets_its_task_run_its_handler(slurm: LocalSlurm) -> None:
    job = start_job(slurm, TRAPPING_TASK)
    [node1] = node_processes(slurm, 1)
    os.kill(node1, signal.SIGTERM)
    slurm.wait_for(lambda: not os.path.exists(f"/proc/{node1}"), timeout=60)
    slurm.wait_for(lambda: slurm.run("squeue", "-h", "-j", str(job)).stdout == "",
                   timeout=60)
    out = slurm.read("job.out").splitlines()
    assert "got TERM on node 1" in out
    assert "srun: error: 127.0.0.3: task 1: Exited with exit code 7" in out
    log = (slurm.state / "jobs" / str(job) / "node-1.log").read_text()
    assert "sbatch-k8s: got SIGTERM: ending this node's tasks\n" in log


def test_sigterm_ends_a_task_that_ignores_it_after_killwait(slurm: LocalSlurm) -> None:
    job = start_job(slurm, STUBBORN_TASK)
    [node1] = node_processes(slurm, 1)
    begun = time.time()
    os.kill(node1, signal.SIGTERM)
    slurm.wait_for(lambda: not os.path.exists(f"/proc/{node1}"), timeout=60)
    waited = time.time() - begun
    assert 1.0 <= waited < 29  # KillWait is 1 s here, not the default 30 s
    slurm.wait_for(lambda: slurm.run("squeue", "-h", "-j", str(job)).stdout == "",
                   timeout=60)
    assert "srun: error: 127.0.0.3: task 1: Killed" in slurm.read("job.out").splitlines()
