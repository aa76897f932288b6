"""Scripts from other clusters and errors a new user hits, on the local backend, end to end."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from tests.local.harness import LocalSlurm

TWO_PARTITIONS = """
[partitions.debug]
[partitions.a100]
"""


@pytest.fixture
def configured(tmp_path: Path) -> Iterator[LocalSlurm]:
    cluster = LocalSlurm(tmp_path, config=TWO_PARTITIONS)
    yield cluster
    cluster.cleanup()


def test_built_in_configuration_runs_an_unknown_partition_in_debug(slurm: LocalSlurm) -> None:
    slurm.script("job.sh", "#!/bin/sh\necho $SLURM_JOB_PARTITION\n")
    done = slurm.run("sbatch", "-p", "gpu", "--wait", "-o", "out", "job.sh")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ("sbatch: warning: invalid partition specified: gpu; no "
                           "configuration file names partitions, so the job runs in partition "
                           "debug\n")
    assert slurm.read("out") == "debug\n"


def test_a_configuration_file_refuses_an_unknown_partition(configured: LocalSlurm) -> None:
    configured.script("job.sh", "#!/bin/sh\ntrue\n")
    done = configured.run("sbatch", "-p", "gpu", "job.sh")
    assert (done.returncode, done.stdout, done.stderr) == (
        1, "", "sbatch: error: invalid partition specified: gpu\n"
               "sbatch: error: Batch job submission failed: Invalid partition name specified\n")


def test_a_gpu_job_without_pretend_gpus_says_what_to_configure(slurm: LocalSlurm) -> None:
    slurm.script("job.sh", "#!/bin/sh\ntrue\n")
    done = slurm.run("sbatch", "--gpus=2", "job.sh")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "sbatch: error: the job needs 2 GPUs; this machine offers none (pretend GPUs for local "
        "jobs: gpus = N in the [local] table of the configuration file ($SBATCHK8S_CONFIG, "
        "else ~/.config/sbatch-k8s/config.toml))\n"
        "sbatch: error: Batch job submission failed: Requested node configuration is not "
        "available\n")


SCRIPT_BYTES = (b"#!/bin/sh\n# caf\xe9 au lait (Latin-1)\ncat \"$0\" > copy\nexit 0\n"
                b"\x00\xff\xfe binary data after exit \x80\n")


def test_a_script_with_non_utf8_bytes_runs_unchanged(slurm: LocalSlurm) -> None:
    (slurm.work / "job.sh").write_bytes(SCRIPT_BYTES.replace(b"\x00", b"\x01"))
    done = slurm.run("sbatch", "--wait", "job.sh")
    assert done.returncode == 0, done.stderr
    assert (slurm.work / "copy").read_bytes() == SCRIPT_BYTES.replace(b"\x00", b"\x01")
