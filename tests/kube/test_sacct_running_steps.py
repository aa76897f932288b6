"""``sacct`` of a running cluster job lists the steps that already ended (issue 8), end to end
on the emulated API server with the test kubelet: node 0 (pods with the job ServiceAccount)
publishes its ended steps beside its running ones, sacct lists ``.0 COMPLETED 0:0`` and
``.1 FAILED 3:0`` while the script still runs — the same lines as the local backend gives
for the same script, from the warm cache with no API call — and the same after the job's
end, from node 0's report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator, List

import pytest

from sbatch_k8s.backends.kubernetes.api import kinds
from tests.apiserver.support import wait_until
from tests.kube.harness import KubeSlurm, submitted_id
from tests.local.harness import LocalSlurm
# Fixtures of other modules (taken by name through ``request``):
from tests.kube.test_dependencies import account_kube  # noqa: F401
from tests.kube.test_watch_cache import emulated, requests_of, warm  # noqa: F401

pytestmark = pytest.mark.slow

#: Two steps that end (the second with exit code 3), then the script waits for ``go``.
SCRIPT = """\
#!/bin/sh
#SBATCH -J ended
srun true
srun sh -c 'exit 3'
touch steps-done
while [ ! -f go ]; do sleep 0.1; done
"""
#: sacct's columns compared between the backends.
FIELDS = "JobID,JobName,State,ExitCode,NNodes,NTasks,AllocCPUS,NodeList,Start,End"


@pytest.fixture
def local(tmp_path: Path) -> Iterator[LocalSlurm]:
    """The local backend, for the same script."""
    slurm = LocalSlurm(tmp_path / "local")
    yield slurm
    slurm.cleanup()


def _lines(slurm: LocalSlurm, job_id: int) -> List[List[str]]:
    """sacct's lines of the job, the job id and node list made neutral (``J``, ``N``), and
    the times as ``set`` or ``Unknown``; the job's own line first."""
    done = slurm.run("sacct", "-n", "-P", "-j", str(job_id), "-o", FIELDS)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    rows = [line.split("|") for line in done.stdout.splitlines()]
    node = rows[0][7]
    return [[row[0].replace(str(job_id), "J", 1)] + row[1:7] +
            ["N" if row[7] == node else row[7]] +
            ["Unknown" if t == "Unknown" else "set" for t in row[8:]] for row in rows]


def _steps_done(slurm: LocalSlurm, job_id: int) -> List[List[str]]:
    """The job's sacct lines once ``.1`` is listed ended ([] before)."""
    if not (slurm.work / "steps-done").exists():
        return []
    lines = _lines(slurm, job_id)
    return lines if any(line[0] == "J.1" and line[2] == "FAILED" for line in lines) else []


def _ran(slurm: LocalSlurm, job_id: int) -> List[List[str]]:
    """The job's sacct lines once it is COMPLETED ([] before)."""
    lines = _lines(slurm, job_id)
    return lines if lines[0][2] == "COMPLETED" else []


def test_sacct_lists_ended_steps_while_the_job_runs_as_the_local_backend_does(
        request: pytest.FixtureRequest, kubelet: Any, local: LocalSlurm) -> None:
    server = request.getfixturevalue("emulated")
    kube: KubeSlurm = request.getfixturevalue("account_kube")
    warm(server, kube)
    for slurm in (local, kube):
        slurm.script("ended.sh", SCRIPT)
    local_id = submitted_id(local.run("sbatch", "ended.sh").stdout)
    kube_id = submitted_id(kube.run("sbatch", "ended.sh").stdout)

    expected = [
        ["J", "ended", "RUNNING", "0:0", "1", "", "1", "N", "set", "Unknown"],
        ["J.batch", "batch", "RUNNING", "0:0", "1", "1", "1", "N", "set", "Unknown"],
        ["J.extern", "extern", "RUNNING", "0:0", "1", "1", "1", "N", "set", "Unknown"],
        ["J.0", "true", "COMPLETED", "0:0", "1", "1", "1", "N", "set", "set"],
        ["J.1", "sh", "FAILED", "3:0", "1", "1", "1", "N", "set", "set"]]
    on_local = wait_until(lambda: _steps_done(local, local_id), 60, "the local steps' end")
    assert on_local == expected
    on_kube = wait_until(lambda: _steps_done(kube, kube_id), 120, "the cluster steps' end")
    assert on_kube == on_local
    listing, calls = requests_of(server, kube, "sacct", "-n", "-P", "-j", str(kube_id),
                                 "-o", "JobID,State,ExitCode")
    assert calls == []
    assert listing.stdout.splitlines()[-2:] == [f"{kube_id}.0|COMPLETED|0:0",
                                                f"{kube_id}.1|FAILED|3:0"]
    record = kube.api().get(kinds.CONFIG_MAP, f"sbatch-k8s-job-{kube_id}", kube.namespace)
    published = json.loads(record["data"]["running-steps.json"])
    assert [(e["id"], e["state"], e.get("exit_code", 0)) for e in published] == [
        ("0", "COMPLETED", 0), ("1", "FAILED", 3)]

    for slurm in (local, kube):
        (slurm.work / "go").write_text("")
    ended = [[line[0], line[1], "COMPLETED" if line[0] in ("J", "J.batch", "J.extern")
              else line[2]] + line[3:9] + ["set"] for line in expected]
    assert wait_until(lambda: _ran(local, local_id), 60, "the local job's end") == ended
    assert wait_until(lambda: _ran(kube, kube_id), 120, "the cluster job's end") == ended
