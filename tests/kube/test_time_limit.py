"""``--time`` and ``--signal`` on an API server with the test kubelet: node 0's runtime
enforces the limit itself as slurmstepd does (the signal ``--signal`` asks for before the
limit, then slurmstepd's ``DUE TO TIME LIMIT`` line, SIGTERM, SIGKILL after KillWait), and the
job ends TIMEOUT in squeue, sacct and its record.

Slurm's ``--time=0:05`` is minutes:seconds, rounded up to whole minutes: a one-minute limit,
so these tests last a real minute (the pods' runtime has no faster clock)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from sbatch_k8s.backends.kubernetes.api import kinds
from tests.apiserver.support import wait_until
from tests.kube.harness import KubeSlurm, submitted_id

pytestmark = pytest.mark.slow

#: The batch shell traps USR1 (``--signal=B:``: the shell alone, not its children) and
#: keeps waiting, so only the time limit ends it.
CHECKPOINT = r"""#!/bin/sh
#SBATCH -J ckpt --time=0:05 --signal=B:USR1@3
trap 'echo "batch got USR1"' USR1
echo started
while :; do sleep 0.2; done
"""
#: The limit is a minute, KillWait up to 30 s more: generous for a busy machine.
WAIT_S = 240


def _sacct(kube: KubeSlurm, job_id: int) -> str:
    return kube.run("sacct", "-j", str(job_id), "-n", "-P", "-o",
                    "JobID,State,ExitCode,Timelimit").stdout


def test_time_limit_signals_the_batch_shell_then_times_out(kube: KubeSlurm,
                                                          kubelet: Any) -> None:
    kube.script("ckpt.sh", CHECKPOINT)
    job_id = submitted_id(kube.run("sbatch", "ckpt.sh").stdout)
    limit = kube.run("squeue", "-h", "-j", str(job_id), "-o", "%l").stdout
    assert limit == "1:00\n"
    wait_until(lambda: f"{job_id}|TIMEOUT|" in _sacct(kube, job_id), WAIT_S, "TIMEOUT")

    out = kube.read(f"slurm-{job_id}.out").splitlines()
    assert out[0] == "started"
    assert out.count("batch got USR1") == 1, out
    # The signal comes before the limit's line, and the line is slurmstepd's.
    assert out.index("batch got USR1") < len(out) - 1
    assert re.fullmatch(rf"slurmstepd: error: \*\*\* JOB {job_id} ON ckpt-{job_id}-0 "
                        r"CANCELLED AT \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d DUE TO TIME LIMIT \*\*\*",
                        out[-1]), out
    lines = _sacct(kube, job_id).splitlines()
    # As Slurm: the job keeps the script's end (sacct prints 0:0 for a TIMEOUT job), the
    # batch step was cancelled by SIGTERM.
    assert lines[0] == f"{job_id}|TIMEOUT|0:0|00:01:00", lines
    assert f"{job_id}.batch|CANCELLED|0:15|" in lines, lines
    squeue = kube.run("squeue", "-h", "-t", "all", "-j", str(job_id), "-o", "%T %r").stdout
    assert squeue == "TIMEOUT TimeLimit\n"
    shown = kube.run("scontrol", "show", "job", str(job_id)).stdout
    assert "JobState=TIMEOUT Reason=TimeLimit" in shown and "ExitCode=0:15" in shown, shown

    record = kube.api().get(kinds.CONFIG_MAP, f"sbatch-k8s-job-{job_id}", kube.namespace)
    stored = json.loads(record["data"]["record.json"])
    assert stored["state"] == "TIMEOUT", stored


TASKS = r"""#!/bin/sh
#SBATCH -J tasks -N2 --ntasks-per-node=1 --time=1 --signal=USR1@5
srun -l sh -c 'trap "echo task $SLURM_PROCID got USR1" USR1
               while :; do sleep 0.2; done'
"""


def test_signal_reaches_every_task_before_the_limit(kube: KubeSlurm, kubelet: Any) -> None:
    kube.script("tasks.sh", TASKS)
    job_id = submitted_id(kube.run("sbatch", "tasks.sh").stdout)
    wait_until(lambda: f"{job_id}|TIMEOUT|" in _sacct(kube, job_id), WAIT_S, "TIMEOUT")
    out = kube.read(f"slurm-{job_id}.out").splitlines()
    assert sorted(line for line in out if "got USR1" in line) == [
        "0: task 0 got USR1", "1: task 1 got USR1"], out
    assert any(re.fullmatch(rf"slurmstepd: error: \*\*\* JOB {job_id} ON tasks-{job_id}-0 "
                            r"CANCELLED AT \S+ DUE TO TIME LIMIT \*\*\*", line)
               for line in out), out
    steps = _sacct(kube, job_id).splitlines()
    assert steps[0] == f"{job_id}|TIMEOUT|0:0|00:01:00", steps
