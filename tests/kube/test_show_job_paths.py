"""``scontrol show job`` and ``squeue -O StdOut,StdErr,StdIn`` show a job's stdio files as
Slurm 22.05 does, pending or running, on the Kubernetes backend as on the local one.

Slurm records each given pattern made absolute, unexpanded; scontrol expands ``%A %a %j %u
%x`` only (``%N``, ``%4j`` stay as written), squeue prints the recorded text
(:mod:`parsers.formats.job_stdio`, checked against real Slurm in
``tests/pod_side/formats/test_job_stdio.py``). The runtime's full expansion names the file
actually written.
"""

from __future__ import annotations

import os
import pwd
import re
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from tests.apiserver.support import wait_until
from tests.kube.harness import KubeSlurm, submitted_id
from tests.local.harness import LocalSlurm

pytestmark = pytest.mark.slow

USER = pwd.getpwuid(os.getuid()).pw_name
PATTERNS = ("-J", "named", "-o", "x-%j-%x-%N-%u.out", "-e", "e-%A_%a-%4j.err", "-i", "in-%j")
SQUEUE_PATHS = "StdOut:200,StdErr:200,StdIn:200"


@pytest.fixture
def local(tmp_path: Path) -> Iterator[LocalSlurm]:
    """A local cluster beside the Kubernetes one, for the same jobs."""
    cluster = LocalSlurm(tmp_path / "local")
    yield cluster
    cluster.cleanup()


def _paths(slurm: LocalSlurm, job_id: int) -> Dict[str, str]:
    """StdErr, StdIn, StdOut and WorkDir of ``scontrol show job``."""
    shown = slurm.run("scontrol", "show", "job", str(job_id))
    assert shown.returncode == 0, shown.stderr
    return dict(re.findall(r"^\s+(StdErr|StdIn|StdOut|WorkDir)=(.*)$", shown.stdout,
                           re.MULTILINE))


def _squeue(slurm: LocalSlurm, job_id: int) -> List[str]:
    out = slurm.run("squeue", "-h", "-j", str(job_id), "-O", SQUEUE_PATHS)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def _held(slurm: LocalSlurm, *args: str) -> int:
    done = slurm.run("sbatch", "--hold", *args, "--wrap", "true")
    assert done.returncode == 0, done.stderr
    return submitted_id(done.stdout)


def test_pending_job_shows_slurms_names_on_both_backends(kube: KubeSlurm,
                                                         local: LocalSlurm) -> None:
    shown = {}
    for slurm in (kube, local):
        job_id = _held(slurm, *PATTERNS)
        work = str(slurm.work)
        paths = _paths(slurm, job_id)
        assert paths == {"WorkDir": work,
                         "StdErr": f"{work}/e-{job_id}_4294967294-%4j.err",
                         "StdIn": f"{work}/in-{job_id}",
                         "StdOut": f"{work}/x-{job_id}-named-%N-{USER}.out"}
        assert _squeue(slurm, job_id) == [f"{work}/x-%j-%x-%N-%u.out",
                                          f"{work}/e-%A_%a-%4j.err", f"{work}/in-%j"]
        shown[slurm] = {k: v.replace(work, "WORK").replace(str(job_id), "ID")
                        for k, v in paths.items()}
    assert shown[kube] == shown[local]


def test_defaults_and_absolute_names(kube: KubeSlurm, local: LocalSlurm) -> None:
    for slurm in (kube, local):
        work = str(slurm.work)
        plain = _held(slurm)
        assert _paths(slurm, plain) == {"WorkDir": work, "StdErr": f"{work}/slurm-{plain}.out",
                                        "StdIn": "/dev/null",
                                        "StdOut": f"{work}/slurm-{plain}.out"}
        assert _squeue(slurm, plain) == [f"{work}/slurm-{plain}.out"] * 2 + ["/dev/null"]
        elsewhere = _held(slurm, "-D", "/tmp", "-o", "/abs/%j/%x", "-e", "%")
        assert _paths(slurm, elsewhere) == {"WorkDir": "/tmp", "StdErr": "/tmp/%",
                                            "StdIn": "/dev/null",
                                            "StdOut": f"/abs/{elsewhere}/wrap"}
        assert _squeue(slurm, elsewhere) == ["/abs/%j/%x", "/tmp/%", "/dev/null"]


def test_running_job_shows_the_same_names_and_writes_the_expanded_file(
        kube: KubeSlurm, kubelet: Any) -> None:
    kube.script("waits.sh", "#!/bin/sh\n#SBATCH -J waits -o out-%j-%N.txt\n"
                            "echo started\nsleep 120\n")
    job_id = submitted_id(kube.run("sbatch", "waits.sh").stdout)
    work = str(kube.work)
    pending = _paths(kube, job_id)
    wait_until(lambda: "RUNNING" in kube.run("squeue", "-h", "-j", str(job_id), "-o",
                                             "%T").stdout, 60, f"job {job_id} running")
    running = _paths(kube, job_id)
    assert running == pending == {"WorkDir": work, "StdErr": f"{work}/out-{job_id}-%N.txt",
                                  "StdIn": "/dev/null",
                                  "StdOut": f"{work}/out-{job_id}-%N.txt"}
    assert _squeue(kube, job_id) == [f"{work}/out-%j-%N.txt"] * 2 + ["/dev/null"]
    # The runtime names the file for node 0: %N is its hostname.
    written = Path(work) / f"out-{job_id}-waits-{job_id}-0.txt"
    wait_until(lambda: written.exists() and "started" in written.read_text(), 60,
               f"{written} written")
    assert kube.run("scancel", str(job_id)).returncode == 0
