"""Held and throttled arrays on a cluster as slurmctld shows them (issue 15, item 16): the
elements that never started are one line (squeue ``N_[0-99]``, ``scontrol show job N`` one
record with ``ArrayTaskId=0-99``, sacct ``N_[0-99]``), each with the array's own reason
(JobHeldUser for ``--hold``; JobArrayTaskLimit only once a ``%`` limit is reached) — checked
against real Slurm 22.05 (../shared/tools/real-slurm) and the local backend."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator, List

import pytest

from tests.apiserver.support import wait_until
from tests.kube.harness import KubeSlurm, submitted_id
from tests.local.harness import LocalSlurm


@pytest.fixture
def local(tmp_path: Path) -> Iterator[LocalSlurm]:
    slurm = LocalSlurm(tmp_path / "local")
    yield slurm
    slurm.cleanup()


def _views(slurm: LocalSlurm, job_id: int) -> List[str]:
    """squeue, squeue -r's first lines, scontrol's head and sacct, the id made neutral."""
    squeue = slurm.run("squeue", "-h", "-o", "%i|%t|%r").stdout
    expanded = slurm.run("squeue", "-h", "-r", "-o", "%i|%r").stdout.splitlines()
    shown = slurm.run("scontrol", "show", "job", str(job_id)).stdout.splitlines()
    task = slurm.run("scontrol", "show", "job", f"{job_id}_7").stdout.splitlines()
    sacct = slurm.run("sacct", "-n", "-P", "-j", str(job_id), "-o",
                      "JobID,JobIDRaw,State,Reason,NodeList").stdout
    text = [squeue, str(len(expanded)), expanded[0], expanded[-1], shown[0], shown[3],
            task[0], sacct]
    return [_neutral(line, job_id) for line in text]


def _neutral(text: str, job_id: int) -> str:
    """``text`` with the job id (not the task ids or counts that contain its digits) as N."""
    return re.sub(rf"(?<!\w){job_id}(?=_|\||\s|$)", "N", text, flags=re.M)


HELD = ["N_[0-99]|PD|JobHeldUser\n", "100", "N_0|JobHeldUser", "N_99|JobHeldUser",
        "JobId=N ArrayJobId=N ArrayTaskId=0-99 JobName=wrap",
        "   JobState=PENDING Reason=JobHeldUser Dependency=(null)",
        "JobId=N ArrayJobId=N ArrayTaskId=7 JobName=wrap",
        "N_[0-99]|N|PENDING|JobHeldUser|None assigned\n"]


def test_a_held_array_is_one_line_everywhere(kube: KubeSlurm) -> None:
    job_id = submitted_id(kube.run("sbatch", "--hold", "--array=0-99", "--wrap",
                                   "true").stdout)
    assert _views(kube, job_id) == HELD


def test_the_local_backend_shows_it_alike(local: LocalSlurm) -> None:
    job_id = submitted_id(local.run("sbatch", "--hold", "--array=0-99", "--wrap",
                                    "true").stdout)
    assert _views(local, job_id) == HELD


def _squeue(slurm: LocalSlurm) -> str:
    return slurm.run("squeue", "-h", "-o", "%i|%t|%r").stdout


def test_a_throttled_array_waits_on_its_limit(kube: KubeSlurm, kubelet: Any) -> None:
    job_id = submitted_id(kube.run("sbatch", "--array=0-5%2", "--wrap", "sleep 60").stdout)
    wait_until(lambda: _squeue(kube).count("|R|") == 2, 120, "two elements running")
    lines = _neutral(_squeue(kube), job_id).splitlines()
    # the running elements come latest start first (the same second keeps the task order)
    assert lines[0] == "N_[2-5%2]|PD|JobArrayTaskLimit", lines
    assert sorted(lines[1:]) == ["N_0|R|None", "N_1|R|None"], lines
    starts = kube.run("squeue", "-h", "-t", "R", "-o", "%S").stdout.split()
    assert starts == sorted(starts, reverse=True), starts
    sacct = kube.run("sacct", "-n", "-P", "-X", "-j", str(job_id), "-o", "JobID,State")
    assert _neutral(sacct.stdout, job_id).splitlines() == [
        "N_0|RUNNING", "N_1|RUNNING", "N_[2-5%2]|PENDING"], sacct.stdout
    assert kube.run("scancel", str(job_id)).returncode == 0
