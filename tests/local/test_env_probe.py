"""The SLURM_* environment of a 2-node × 2-task job against real Slurm's (recorded in
tests/data/real-slurm): the same names and, after normalising ids, hosts,
ports and paths, the same values. Differences must be listed in
tests/conformance/differences.py."""

from __future__ import annotations

import re
from typing import Dict, List

import pytest

from tests.conformance.differences import INTENDED
from tests.data import REAL_SLURM_RECORDINGS
from tests.local.harness import LocalSlurm, job_id_of

PROBE = """#!/bin/bash
#SBATCH --nodes=2 --ntasks-per-node=2 --job-name=envprobe
env | grep -E '^(SLURM|SLURMD)_' | LC_ALL=C sort > batch.env
srun --label env | grep -E '^[0-9]+: (SLURM|SLURMD)_' | sort
"""


def parse_tasks(lines: List[str]) -> Dict[int, Dict[str, str]]:
    tasks: Dict[int, Dict[str, str]] = {}
    for line in lines:
        label, _, assignment = line.partition(": ")
        name, _, value = assignment.partition("=")
        tasks.setdefault(int(label), {})[name] = value
    return tasks


def parse_env(lines: List[str]) -> Dict[str, str]:
    return dict(line.split("=", 1) for line in lines if "=" in line)


def normalise(env: Dict[str, str], job: str, nodes: List[str], node_list: str) -> Dict[str, str]:
    """Replace what legitimately differs between two runs or clusters by placeholders."""
    out = {}
    for name, value in env.items():
        if f"value:{name}" in INTENDED:
            value = "<intended>"
        elif name in ("SLURM_TASK_PID", "SLURM_SRUN_COMM_PORT", "SLURM_STEP_LAUNCHER_PORT"):
            value = "<number>" if value.isdigit() else value
        elif name in ("SLURM_JOB_ID", "SLURM_JOBID") and value == job:
            value = "<job>"
        elif name in ("SLURM_SUBMIT_DIR",):
            value = "<dir>"
        elif name in ("SLURM_SUBMIT_HOST",):
            value = "<host>"
        elif name in ("SLURM_JOB_USER", "SLURM_JOB_ACCOUNT", "SLURM_JOB_UID", "SLURM_JOB_GID"):
            value = "<id>"
        elif name == "SLURM_CLUSTER_NAME":
            value = "<cluster>"
        else:
            if value == node_list:
                value = "<nodes>"
            for i, node in enumerate(nodes):
                if value == node:
                    value = f"<node{i}>"
        out[name] = value
    return out


def compare(ours: Dict[str, str], real: Dict[str, str], where: str) -> List[str]:
    problems = []
    for name in sorted(set(ours) ^ set(real)):
        if f"env:{name}" not in INTENDED:
            side = "only sbatch-k8s" if name in ours else "only real Slurm"
            problems.append(f"{where}: {name} set by {side}")
    for name in sorted(set(ours) & set(real)):
        if ours[name] != real[name]:
            problems.append(f"{where}: {name}: sbatch-k8s {ours[name]!r} vs Slurm {real[name]!r}")
    return problems


@pytest.fixture
def recorded() -> Dict[str, List[str]]:
    return {name: (REAL_SLURM_RECORDINGS / name).read_text().splitlines()
            for name in ("envprobe.out", "envprobe-batch.env")}


def test_task_and_batch_environment_match_real_slurm(slurm: LocalSlurm,
                                                     recorded: Dict[str, List[str]]) -> None:
    slurm.script("envprobe.sh", PROBE)
    done = slurm.run("sbatch", "--wait", "-o", "probe.out", "envprobe.sh")
    job = str(job_id_of(done.stdout))
    ours = parse_tasks(slurm.read("probe.out").splitlines())
    real = parse_tasks(recorded["envprobe.out"])
    assert sorted(ours) == sorted(real) == [0, 1, 2, 3]
    real_job = real[0]["SLURM_JOB_ID"]
    problems: List[str] = []
    for rank in real:
        problems += compare(
            normalise(ours[rank], job, ["127.0.0.2", "127.0.0.3"], "127.0.0.[2-3]"),
            normalise(real[rank], real_job, ["n1", "n2"], "n[1-2]"), f"task {rank}")
    problems += compare(
        normalise(parse_env(slurm.read("batch.env").splitlines()), job,
                  ["127.0.0.2", "127.0.0.3"], "127.0.0.[2-3]"),
        normalise(parse_env(recorded["envprobe-batch.env"]), real_job, ["n1", "n2"], "n[1-2]"),
        "batch")
    assert problems == []


def test_value_formats_are_slurms(slurm: LocalSlurm) -> None:
    slurm.script("envprobe.sh", PROBE)
    slurm.run("sbatch", "--wait", "-o", "probe.out", "envprobe.sh")
    task = parse_tasks(slurm.read("probe.out").splitlines())[3]
    assert task["SLURM_TASKS_PER_NODE"] == task["SLURM_STEP_TASKS_PER_NODE"] == "2(x2)"
    assert task["SLURM_GTIDS"] == "2,3"
    assert re.fullmatch(r"\d{4}", task["SLURM_UMASK"])
