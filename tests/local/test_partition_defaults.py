"""A partition's default memory per CPU (``def_mem_per_cpu_mb``, Slurm's DefMemPerCPU).

Real Slurm 22.05 with DefMemPerCPU=256 (../shared/tools/real-slurm), observed: a job without
a memory option has ``SLURM_MEM_PER_CPU=256`` in its batch step and its tasks (``-c2`` too);
with ``--mem=100`` it has ``SLURM_MEM_PER_NODE=100`` and no ``SLURM_MEM_PER_CPU``."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from parsers.jobspec import SubmitOptions
from sbatch_k8s.submission_plan import plan_submission, with_partition_defaults
from tests.local.harness import LocalSlurm
from tests.pod_side.support import job_for
from translators.config import cluster_config_from_dict

CONFIG = "[partitions.debug]\ndef_mem_per_cpu_mb = 256\n"
PROBE = ('#!/bin/sh\necho batch: $(env | grep -E "^SLURM_MEM" | sort)\n'
         'srun sh -c "echo task: \\$(env | grep -E ^SLURM_MEM | sort)"\n')


@pytest.fixture
def slurm_with_default(tmp_path: Path) -> Iterator[LocalSlurm]:
    cluster = LocalSlurm(tmp_path, config=CONFIG)
    yield cluster
    cluster.cleanup()


@pytest.mark.parametrize("args, expected", [
    ((), "batch: SLURM_MEM_PER_CPU=256\ntask: SLURM_MEM_PER_CPU=256\n"),
    (("-c2",), "batch: SLURM_MEM_PER_CPU=256\ntask: SLURM_MEM_PER_CPU=256\n"),
    (("--mem=100",), "batch: SLURM_MEM_PER_NODE=100\ntask: SLURM_MEM_PER_NODE=100\n"),
])
def test_tasks_see_the_default_memory_per_cpu_as_in_slurm(slurm_with_default: LocalSlurm,
                                                          args, expected) -> None:
    slurm_with_default.script("job.sh", PROBE)
    done = slurm_with_default.run("sbatch", "--wait", "-o", "out", *args, "job.sh")
    assert done.returncode == 0, done.stderr
    assert slurm_with_default.read("out") == expected


@pytest.mark.parametrize("args, per_cpu, per_node", [
    ("-c4", 256, 1024),
    ("-n2 -c3", 256, 1536),
    ("--mem-per-gpu=1000 --gpus=1", None, 1000),
    ("--mem-per-cpu=10 -c2", 10, 20),
])
def test_pods_request_the_default_memory(args, per_cpu, per_node):
    config = cluster_config_from_dict({"partitions": {"debug": {"def_mem_per_cpu_mb": 256}}})
    job = with_partition_defaults(job_for(args), config)
    assert job.mem_per_cpu_mb == per_cpu
    plan = plan_submission(job_for(args), SubmitOptions(), config, {})
    assert plan.job.mem_per_cpu_mb == per_cpu
    assert plan.allocation.mem_per_node_mb == per_node


def test_scontrol_and_sacct_show_the_default_per_cpu_as_slurm(
        slurm_with_default: LocalSlurm) -> None:
    """Issue 15, item 7 (real Slurm 22.05, DefMemPerCPU=256, ``-N2 --ntasks-per-node=2``):
    ``MinMemoryCPU=256M``, ``TRES=cpu=4,mem=1G,…``, sacct ``ReqMem 1G`` (was 512M per CPU,
    2G in all: the per-node amount taken for a per-CPU one)."""
    done = slurm_with_default.run("sbatch", "--hold", "-N2", "--ntasks-per-node=2", "--wrap",
                                  "true")
    job_id = done.stdout.split()[-1]
    shown = slurm_with_default.run("scontrol", "show", "job", job_id).stdout
    assert "MinMemoryCPU=256M " in shown and "TRES=cpu=4,mem=1G,node=2,billing=4" in shown, \
        shown
    accounting = slurm_with_default.run("sacct", "-j", job_id, "-X", "-n", "-P", "-o",
                                        "ReqMem,ReqTRES").stdout
    assert accounting == "1G|billing=4,cpu=4,mem=1G,node=2\n", accounting
