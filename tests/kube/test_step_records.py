"""Every step of a cluster job stays in its record, or sacct says which are missing (issue
15, item 14). Without the job ServiceAccount, node 0 reports its steps only through its
termination message (4 KiB): a 30-step job kept its last 26 and sacct said nothing. The steps
now go packed when they do not fit as they are (a few hundred fit), and a record that still
lacks some makes sacct say how many, on stderr, its listing unchanged."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sbatch_k8s.backends.kubernetes.api import kinds
from tests.apiserver.support import wait_until
from tests.kube.harness import KubeSlurm, submitted_id

pytestmark = pytest.mark.slow


def _sacct(kube: KubeSlurm, job_id: int) -> Any:
    return kube.run("sacct", "-n", "-P", "-j", str(job_id), "-o", "JobID,State,ExitCode")


def test_thirty_steps_without_api_access_are_all_recorded(kube: KubeSlurm,
                                                          kubelet: Any) -> None:
    kube.script("steps.sh", "#!/bin/sh\n#SBATCH -J steps\n"
                "for i in $(seq 30); do srun -n1 true; done\nsrun -n1 sh -c 'exit 3'\ntrue\n")
    done = kube.run("sbatch", "--wait", "steps.sh", timeout=300)
    job_id = submitted_id(done.stdout)
    assert done.returncode == 0, done.stderr
    listed = wait_until(lambda: _sacct(kube, job_id), 60, "sacct")
    lines = listed.stdout.splitlines()
    assert lines[0] == f"{job_id}|COMPLETED|0:0"
    numbered = [line for line in lines if line.split("|")[0].partition(".")[2].isdigit()]
    assert [line.split("|")[0] for line in numbered] == [f"{job_id}.{i}" for i in range(31)]
    assert numbered[-1] == f"{job_id}.30|FAILED|3:0"
    assert listed.stderr == ""
    record, = kube.objects(kinds.CONFIG_MAP, f"sbatch-k8s.io/job-id={job_id},"
                                             "sbatch-k8s.io/kind=record")
    assert "steps_dropped" not in json.loads(record["data"]["record.json"])


def test_sacct_says_which_steps_a_record_lacks(kube: KubeSlurm, kubelet: Any) -> None:
    """A record that kept steps 4-29 only (what a capped report leaves): sacct lists what is
    there and warns, on stderr, of the rest; -X (no steps) has nothing to say."""
    kube.script("one.sh", "#!/bin/sh\n#SBATCH -J lacking\nsrun true\n")
    done = kube.run("sbatch", "--wait", "one.sh", timeout=180)
    job_id = submitted_id(done.stdout)
    wait_until(lambda: "COMPLETED" in _sacct(kube, job_id).stdout, 60, "the final record")
    client = kube.api()
    name = f"sbatch-k8s-job-{job_id}"
    record = client.get(kinds.CONFIG_MAP, name, kube.namespace)
    data = json.loads(record["data"]["record.json"])
    step = next(s for s in data["steps"] if s["step_id"] == "0")
    data["steps"] = [s for s in data["steps"] if not s["step_id"].isdigit()] + [
        dict(step, step_id=str(i)) for i in range(4, 30)]
    client.merge_patch(kinds.CONFIG_MAP, name, kube.namespace,
                       {"data": {"record.json": json.dumps(data)}})
    listed = _sacct(kube, job_id)
    assert [line.split("|")[0] for line in listed.stdout.splitlines()][3:] == \
        [f"{job_id}.{i}" for i in range(4, 30)]
    assert listed.stderr == (f"sacct: warning: job {job_id}: 4 of its 30 steps were not "
                             "recorded (steps 0-3)\n")
    assert kube.run("sacct", "-X", "-n", "-j", str(job_id)).stderr == ""
