"""One time limit, whatever runs the job: a partition's DefaultTime and MaxTime hold the same
on the local backend, on a cluster and in ``--k8s-print`` (issue 17: the local backend once
ignored both, so a job without ``--time`` ran unlimited there and one beyond MaxTime was
accepted, while the manifests printed for the same script had the limit).

As real Slurm 22.05 answers with ``DefaultTime=30 MaxTime=120`` on the partition: a job
without ``--time`` shows ``TimeLimit=00:30:00``; ``--time=200`` is refused with ``sbatch:
error: Batch job submission failed: Requested time limit is invalid (missing or exceeds some
limit)`` and exit 1, nothing created.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator, List

import pytest
import yaml

from tests.kube.harness import CONFIG, KubeSlurm, submitted_id
from tests.local.harness import LocalSlurm

LIMITS = "default_time_min = 30\nmax_time_min = 120\n"
REFUSAL = ("sbatch: error: Batch job submission failed: Requested time limit is invalid "
           "(missing or exceeds some limit)\n")


@pytest.fixture(params=["local", "kubernetes"])
def either(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LocalSlurm]:
    """The same partition limits on the local backend and on the test cluster."""
    if request.param == "local":
        image = 'image = "python:3.12-slim"\n'  # --k8s-print needs one
        slurm = LocalSlurm(tmp_path, config="[partitions.debug]\n" + image + LIMITS)
    else:
        cluster = request.getfixturevalue("cluster")
        slurm = KubeSlurm(tmp_path, cluster.kubeconfig, config=CONFIG + LIMITS)
    yield slurm
    slurm.cleanup()


def _jobs(slurm: LocalSlurm) -> List[str]:
    return slurm.run("squeue", "-h", "-o", "%i").stdout.split()


def test_a_job_without_time_gets_the_partition_default(either: LocalSlurm) -> None:
    job_id = submitted_id(either.run("sbatch", "--hold", "--wrap", "true").stdout)
    shown = either.run("scontrol", "show", "job", str(job_id)).stdout
    assert "TimeLimit=00:30:00 " in shown, shown
    assert either.run("squeue", "-h", "-j", str(job_id), "-o", "%l").stdout == "30:00\n"
    accounting = either.run("sacct", "-j", str(job_id), "-X", "-n", "-P", "-o",
                            "Timelimit").stdout
    assert accounting == "00:30:00\n", accounting
    if isinstance(either, KubeSlurm):
        return
    # the runtime enforces what the job description says
    description = json.loads((either.state / "jobs" / str(job_id) / "job.json").read_text())
    assert description["time_limit_min"] == 30


def test_an_asked_time_within_max_time_is_kept(either: LocalSlurm) -> None:
    job_id = submitted_id(either.run("sbatch", "--hold", "--time=5", "--wrap", "true").stdout)
    shown = either.run("scontrol", "show", "job", str(job_id)).stdout
    assert "TimeLimit=00:05:00 " in shown, shown


@pytest.mark.parametrize("asked", ["--time=200", "--time=0"])
def test_beyond_max_time_is_refused_and_nothing_is_created(either: LocalSlurm,
                                                            asked: str) -> None:
    done = either.run("sbatch", "--hold", asked, "--wrap", "true")
    assert (done.returncode, done.stdout, done.stderr) == (1, "", REFUSAL)
    assert _jobs(either) == []
    printed = either.run("sbatch", "--k8s-print", asked, "--wrap", "true")
    assert (printed.returncode, printed.stdout, printed.stderr) == (1, "", REFUSAL)


def test_k8s_print_has_the_limit_the_backends_run_with(either: LocalSlurm) -> None:
    """The pods' deadline is the default limit plus the fixed margin on both backends'
    printed manifests: the limit comes from the same plan."""
    from translators.plan import DEADLINE_MARGIN_S

    printed = either.run("sbatch", "--k8s-print=objects", "--wrap", "true")
    assert printed.returncode == 0, printed.stderr
    workloads = [d for d in yaml.safe_load_all(printed.stdout) if d and d["kind"] == "Job"]
    pod = workloads[0]["spec"]["template"]["spec"]
    assert pod["activeDeadlineSeconds"] == 30 * 60 + DEADLINE_MARGIN_S
