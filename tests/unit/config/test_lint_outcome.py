"""``sbatch --k8s-lint`` runs the checks submission runs and exits non-zero where ``sbatch``
would refuse the job."""

from __future__ import annotations

import pytest

from sbatch_k8s.cli.common import run_command
from sbatch_k8s.cli.sbatch import _main

CONFIG = """
[partitions.debug]
image = "python:3.12-slim"
"""


@pytest.fixture
def work(private_home):
    (private_home / "c.toml").write_text(CONFIG)
    return private_home


def _lint(work, monkeypatch, capsys, lines, backend="kubernetes", config=True):
    monkeypatch.setenv("SBATCHK8S_BACKEND", backend)
    if config:
        monkeypatch.setenv("SBATCHK8S_CONFIG", str(work / "c.toml"))
    (work / "job.sh").write_text("#!/bin/sh\n" + "".join(f"#SBATCH {x}\n" for x in lines)
                                 + "true\n")
    code = run_command("sbatch", _main, ["--k8s-lint", "job.sh"])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


@pytest.mark.parametrize("lines, last", [
    (["-p gpu"], "sbatch: error: Batch job submission failed: Invalid partition name specified"),
    (["--gres=gpu:1 --gpus-per-node=2"],
     "sbatch: fatal: --gpus-per-node and --gres=gpu are mutually exclusive."),
    (["--container-image=/images/pytorch.sqsh"],
     "sbatch: error: --container-image=/images/pytorch.sqsh: squashfs files cannot run on "
     "Kubernetes; give an image from a registry"),
    (["--mem=1000 --mem-per-cpu=100"],
     "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive."),
])
def test_what_sbatch_refuses_lint_refuses(work, monkeypatch, capsys, lines, last):
    code, out, err = _lint(work, monkeypatch, capsys, lines)
    assert (code, out[-1], err) == (1, last, "")


def test_a_job_sbatch_accepts_lints_clean_with_its_warnings(work, monkeypatch, capsys):
    code, out, _ = _lint(work, monkeypatch, capsys, ["-p gpu", "--exclusive"], config=False)
    assert code == 0
    assert [line for line in out if line.startswith("warning: ")][:2] == [
        "warning: invalid partition specified: gpu; no configuration file names partitions, "
        "so the job runs in partition debug",
        "warning: --exclusive: the partition's node size is not configured (node_cpus, "
        "node_gpus), so each pod requests only what the job asks for, 1 CPU and no GPUs, not a "
        "whole node; other jobs' pods are still kept off its nodes"]


def test_the_local_backend_checks_this_machines_capacity(work, monkeypatch, capsys):
    """What this machine lacks is a finding, not a failure: lint submits nothing, and the
    script may be meant for a cluster with GPUs (issue 18, item 9)."""
    code, out, _ = _lint(work, monkeypatch, capsys, ["--gpus=1"], backend="local")
    assert code == 0
    assert out[-1] == ("capacity: sbatch: error: Batch job submission failed: Requested node "
                       "configuration is not available")
    assert out[-2].startswith("capacity: sbatch: error: the job needs 1 GPUs; this machine "
                              "offers none")
