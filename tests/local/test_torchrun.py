"""The design document's torchrun script (``tests/data/llm-torchrun.sh``), unchanged, runs a
2-node × 2-process gloo all-reduce; two torchrun jobs at once, each rendezvousing at the
``$MASTER_ADDR:$MASTER_PORT`` the runtime gives it, both finish (issue 18, item 5).

Only the GPU count is lowered on the command line (``--gpus-per-node=2`` overrides the
script's 8, as Slurm's precedence rules allow), so each node starts 2 processes; the local
backend hands out pretend GPUs and torch runs on the CPU with gloo."""

from __future__ import annotations

import re

import pytest

from tests.data import TORCHRUN_SCRIPT
from tests.local.harness import LocalSlurm, job_id_of

#: A training framework's launch line with a fixed rendezvous endpoint: the job's own
#: MASTER_ADDR and MASTER_PORT (the script sets neither).
FIXED_ENDPOINT = """#!/bin/bash
#SBATCH -N2 --ntasks-per-node=1 -c2 -o %x-%j.out
echo "endpoint $MASTER_ADDR:$MASTER_PORT"
srun --label torchrun --nnodes 2 --nproc_per_node 2 --rdzv_id "$SLURM_JOB_ID" \\
     --rdzv_backend c10d --rdzv_endpoint "$MASTER_ADDR:$MASTER_PORT" train.py
"""

TRAIN = r"""import os
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
value = torch.tensor([float(rank + 1)])
dist.all_reduce(value)
line = (f"rank {rank}/{world} node {os.environ['GROUP_RANK']} local {os.environ['LOCAL_RANK']} "
        f"sum {value.item():.0f}\n")
os.write(1, line.encode())  # one write: the two processes of a node share the task's stdout
dist.destroy_process_group()
"""


def test_design_torchrun_script_runs_unchanged(gpu_slurm: LocalSlurm) -> None:
    pytest.importorskip("torch", reason="torch is needed (CI installs torch==2.13.0)")
    script = TORCHRUN_SCRIPT.read_text()
    assert "srun --label torchrun" in script
    gpu_slurm.script("train.py", TRAIN)
    gpu_slurm.script("llm.sh", script)
    done = gpu_slurm.run("sbatch", "--wait", "--gpus-per-node=2", "llm.sh", timeout=240)
    assert done.returncode == 0, done.stderr
    job = job_id_of(done.stdout)
    check_torchrun_output(gpu_slurm.read(f"logs/llm-{job}.out"))


def check_torchrun_output(out: str) -> None:
    """Four ranks summed 10, two per srun task, as c10d numbers the nodes."""
    results = re.findall(r"^(\d): rank (\d)/4 node (\d) local (\d) sum 10$", out,
                         re.MULTILINE)
    assert sorted(r[1] for r in results) == ["0", "1", "2", "3"], out
    # c10d numbers the nodes in the order they join the rendezvous, so either srun task may
    # be torchrun's node 0; each task is one node running global ranks 2g and 2g+1.
    per_task = {label: sorted((int(rank), int(node), int(local))
                              for lab, rank, node, local in results if lab == label)
                for label in ("0", "1")}
    groups = set()
    for label, rows in per_task.items():
        (rank_a, node_a, _), (rank_b, node_b, _) = rows
        assert node_a == node_b and [rank_a, rank_b] == [2 * node_a, 2 * node_a + 1], out
        assert [local for _, _, local in rows] == [0, 1], out
        groups.add(node_a)
    assert groups == {0, 1}, out


def run_two_at_once(slurm: LocalSlurm, shared_addresses: bool = True) -> None:
    """Submit :data:`FIXED_ENDPOINT` twice at once, wait for both; both all-reduce alone,
    each at its own endpoint (``shared_addresses``: both jobs' node 0 is 127.0.0.2)."""
    slurm.script("train.py", TRAIN)
    slurm.script("fixed.sh", FIXED_ENDPOINT)
    started = [slurm.start("sbatch", "--wait", "-J", name, "fixed.sh")
               for name in ("first", "second")]
    outputs = [p.communicate(timeout=300) for p in started]
    for process, (out, err), name in zip(started, outputs, ("first", "second")):
        assert process.returncode == 0, (err, [(f.name, f.read_text(errors="replace"))
                                               for f in slurm.work.glob(f"{name}-*.out")])
    endpoints = []
    for (out, _err), name in zip(outputs, ("first", "second")):
        text = slurm.read(f"{name}-{job_id_of(out)}.out")
        check_torchrun_output(text)
        endpoints.append(re.search(r"^endpoint (\S+)$", text, re.MULTILINE).group(1))
    assert len(set(endpoints)) == 2, endpoints     # each job its own rendezvous
    hosts = {e.rsplit(":", 1)[0] for e in endpoints}
    ports = {e.rsplit(":", 1)[1] for e in endpoints}
    # locally both node 0s are 127.0.0.2: the ports differ; pods have their own addresses,
    # and their ports differ too (by job id), since the test kubelet's pods share this
    # machine's network stack and torch's store binds every address
    assert (len(hosts), len(ports)) == ((1, 2) if shared_addresses else (2, 2)), endpoints


def test_two_torchrun_jobs_with_fixed_endpoints_both_finish(slurm: LocalSlurm) -> None:
    pytest.importorskip("torch", reason="torch is needed (CI installs torch==2.13.0)")
    run_two_at_once(slurm)
