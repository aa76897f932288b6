"""A partition's default memory per CPU (``def_mem_per_cpu_mb``, Slurm's DefMemPerCPU).

Real Slurm 22.05 with DefMemPerCPU=256 (../shared/tools/real-slurm), observed: a job without
a memory option has ``SLURM_MEM_PER_CPU=256`` in its batch step and its tasks (``-c2`` too);
with ``--mem=100`` it has ``SLURM_MEM_PER_NODE=100`` and no ``SLURM_MEM_PER_CPU``."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from sbatch_k8s.submit import plan, with_partition_defaults
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
    assert plan(job, config)[1].mem_per_node_mb == per_node
