"""A pending job's start and eligible times on a cluster (API server and test kubelet), as
Slurm 22.05 shows them (cases recorded in ``tests/pod_side/formats/test_pending_start.py``):
a begin time ahead — ``--begin``, or the delay of ``scontrol requeue`` — is the job's
``StartTime``/``%S`` and ``EligibleTime``, held or dependent alike, ``EndTime`` that plus a
finite limit; a held or dependent job without one shows ``Unknown``/``N/A``; ``sacct``'s
``Start`` stays ``Unknown`` while pending."""

from __future__ import annotations

import datetime
from typing import Any, Dict

import pytest

from tests.apiserver.support import wait_until
from tests.kube.harness import KubeSlurm, submit

pytestmark = pytest.mark.slow

WAIT_S = 180


def _fields(kube: KubeSlurm, job_id: int) -> Dict[str, str]:
    """``scontrol show job``'s fields by name."""
    shown = kube.run("scontrol", "show", "job", str(job_id)).stdout
    return dict(item.split("=", 1) for item in shown.split() if "=" in item)


def _plus(stamp: str, seconds: int) -> str:
    moment = datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S")
    return (moment + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S")


def test_begin_held_and_dependent_jobs(kube: KubeSlurm, kubelet: Any) -> None:
    kube.script("quick.sh", "#!/bin/sh\n#SBATCH -o /dev/null\ntrue\n")
    begin = submit(kube, "--begin=now+1hour", "-t", "5", "quick.sh")
    held = submit(kube, "-H", "quick.sh")
    held_begin = submit(kube, "-H", "--begin=now+1hour", "quick.sh")
    dependent = submit(kube, "-d", f"afterok:{held}", "quick.sh")

    shown = _fields(kube, begin)
    assert shown["Reason"] == "BeginTime"
    assert shown["StartTime"] == shown["EligibleTime"] == _plus(shown["SubmitTime"], 3600)
    assert shown["EndTime"] == _plus(shown["StartTime"], 300)
    for job_id in (held, dependent):
        shown = _fields(kube, job_id)
        assert (shown["StartTime"], shown["EligibleTime"], shown["EndTime"]) == \
            ("Unknown", "Unknown", "Unknown"), shown
    shown = _fields(kube, held_begin)
    assert shown["Reason"] == "JobHeldUser"
    assert shown["StartTime"] == shown["EligibleTime"] == _plus(shown["SubmitTime"], 3600)

    listed = kube.run("squeue", "-h", "-o", "%i %S").stdout.split()
    starts = dict(zip(listed[::2], listed[1::2]))
    assert starts[str(held)] == starts[str(dependent)] == "N/A"
    assert starts[str(begin)] == _fields(kube, begin)["StartTime"]
    assert starts[str(held_begin)] == _fields(kube, held_begin)["StartTime"]
    accounted = kube.run("sacct", "-X", "-n", "-P", "-o", "JobID,Start,Eligible").stdout
    rows = {line.split("|")[0]: line.split("|")[1:] for line in accounted.splitlines()}
    assert rows[str(begin)] == ["Unknown", _fields(kube, begin)["EligibleTime"]]
    assert rows[str(held)] == rows[str(dependent)] == ["Unknown", "Unknown"]

    # Released, the held job still waits for its begin time, which it keeps showing.
    assert kube.run("scontrol", "release", str(held_begin)).returncode == 0
    shown = _fields(kube, held_begin)
    assert shown["Reason"] == "BeginTime"
    assert shown["StartTime"] == shown["EligibleTime"] == _plus(shown["SubmitTime"], 3600)

    # The dependency met, the dependent job runs: eligible from then on.
    assert kube.run("scontrol", "release", str(held)).returncode == 0
    wait_until(lambda: _fields(kube, dependent).get("JobState") == "COMPLETED", WAIT_S,
               "the dependent job ran")
    shown = _fields(kube, dependent)
    assert "Unknown" not in (shown["EligibleTime"], shown["StartTime"]), shown
    assert shown["EligibleTime"] <= shown["StartTime"]
    kube.run("scancel", str(begin), str(held_begin))


def test_requeued_job_shows_its_begin_time(kube: KubeSlurm, kubelet: Any) -> None:
    """``scontrol requeue``: ``PD (BeginTime)`` for Slurm's 121 s, its start that moment."""
    kube.script("long.sh", "#!/bin/sh\n#SBATCH -o /dev/null -t 10\nsleep 300\n")
    job_id = submit(kube, "long.sh")
    wait_until(lambda: _fields(kube, job_id).get("JobState") == "RUNNING", WAIT_S,
               "the job runs")
    done = kube.run("scontrol", "requeue", str(job_id))
    assert done.returncode == 0, done.stderr
    shown = _fields(kube, job_id)
    assert (shown["JobState"], shown["Reason"], shown["Restarts"]) == \
        ("PENDING", "BeginTime", "1"), shown
    assert shown["StartTime"] == shown["EligibleTime"] == _plus(shown["SubmitTime"], 121)
    assert shown["EndTime"] == _plus(shown["StartTime"], 600)
    listed = kube.run("squeue", "-h", "-j", str(job_id), "-O", "StartTime,EligibleTime")
    assert listed.stdout.split() == [shown["StartTime"], shown["EligibleTime"]]
    kube.run("scancel", str(job_id))
