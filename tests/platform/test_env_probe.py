"""Platform mode end to end: N containers with nothing but a platform's variables and files
run an env-probe script through ``runtime run``; the script runs once, on node 0, and every
task sees the Slurm view that node order implies."""

from __future__ import annotations

import re
from typing import Callable, Dict, List

import pytest

from tests.platform import oracles
from tests.platform.harness import Outcome, PlatformCluster

PROBE = """#!/bin/bash
#SBATCH --job-name=probe --nodes={nodes} --ntasks-per-node=2
echo "batch $(hostname) job=$SLURM_JOB_ID nodes=$SLURM_NNODES list=$SLURM_JOB_NODELIST" \
    >> {ran}
echo "batch-line $(hostname)"
srun bash -c 'echo "task $SLURM_PROCID node=$SLURM_NODEID name=$SLURMD_NODENAME \
host=$(hostname) job=$SLURM_JOB_ID ntasks=$SLURM_NTASKS local=$SLURM_LOCALID"'
exit {code}
"""

TASK = re.compile(r"^task (\d+) node=(\d+) name=(\S+) host=(\S+) job=(\d+) ntasks=(\d+) "
                  r"local=(\d+)$", re.MULTILINE)

JOBS: Dict[str, Callable[[], oracles.PlatformJob]] = {
    "pytorchjob": lambda: oracles.pytorchjob("llm-a", 3, 2),
    "pytorchjob-legacy": lambda: oracles.pytorchjob("llm-b", 2, 1, legacy=True),
    "aihub": lambda: oracles.aihub_pytorchjob("hub-7", 2, 4),
    "trainjob": lambda: oracles.trainjob("tj", 3, 1),
    "indexed-job": lambda: oracles.indexed_job("llm-9", 3, "llm-9-svc"),
    "jobset": lambda: oracles.jobset("js", "node", 2),
    "volcano": lambda: oracles.volcano("vj", [("master", 1), ("worker", 2)]),
    "task-training-pytorch": lambda: oracles.task_training_pytorch("ttp", 3, 1),
    "task-training-deepspeed": lambda: oracles.task_training_deepspeed("ttd", 2, 2),
    "tf-config": lambda: oracles.tf_config("tf", 2, chief=True),
    "aistation": lambda: oracles.aistation("ais", 3, 1, "run-1"),
    # The master's container starts last: the workers retry until it listens.
    "aistation-master-last": lambda: _reversed(oracles.aistation("late", 4, 1, "run-2")),
}


def _reversed(made: oracles.PlatformJob) -> oracles.PlatformJob:
    return made._replace(nodes=made.nodes[::-1])


def run_probe(cluster: PlatformCluster, made: oracles.PlatformJob, name: str,
              code: int = 0, args: List[str] = ()) -> Outcome:
    ran = f"ran-{name}.txt"
    cluster.write(f"probe-{name}.sh", PROBE.format(nodes=len(made.order), ran=ran, code=code))
    return cluster.run(made.nodes, list(args) + [f"probe-{name}.sh"], timeout_s=120)


def check_view(cluster: PlatformCluster, made: oracles.PlatformJob, name: str,
               outcome: Outcome) -> None:
    order = made.order
    ran = cluster.read(f"ran-{name}.txt").splitlines()
    assert len(ran) == 1, (ran, outcome.logs)
    host_zero = made.nodes[[n.hostname for n in made.nodes].index(order[0])]
    log_zero = outcome.logs[made.nodes.index(host_zero)]
    assert f"batch-line {order[0]}" in log_zero, log_zero
    batch = re.match(r"batch (\S+) job=(\d+) nodes=(\d+) list=(\S+)", ran[0])
    assert batch and batch.group(1) == order[0] and batch.group(3) == str(len(order)), ran
    job_id = batch.group(2)
    tasks = sorted(TASK.findall(log_zero), key=lambda t: int(t[0]))
    assert [int(t[0]) for t in tasks] == list(range(2 * len(order))), log_zero
    for procid, node, node_name, host, job, ntasks, local in tasks:
        assert int(node) == int(procid) // 2 and int(local) == int(procid) % 2
        assert node_name == host == order[int(node)], tasks
        assert job == job_id and ntasks == str(2 * len(order))


@pytest.mark.parametrize("name", sorted(JOBS))
def test_probe_runs_once_with_the_slurm_view(cluster: PlatformCluster, name: str) -> None:
    made = JOBS[name]()
    outcome = run_probe(cluster, made, name)
    assert outcome.codes == [0] * len(made.nodes), outcome.logs
    check_view(cluster, made, name, outcome)


def test_verbose_names_the_contract_and_its_variables(cluster: PlatformCluster) -> None:
    made = oracles.pytorchjob("verbose", 2, 1)
    outcome = run_probe(cluster, made, "verbose", args=["-v"])
    for log in outcome.logs:
        assert re.search(r"^sbatch-k8s: run: contract pytorchjob: .*, detected from "
                         r"PET_NODE_RANK; facts from PET_NODE_RANK, PET_NNODES", log,
                         re.MULTILINE), log
    assert "node 1 of 2 (verbose-worker-0)" in outcome.logs[1]


def test_named_contract_and_script_exit_code(cluster: PlatformCluster) -> None:
    made = oracles.indexed_job("fail", 2, "fail")
    outcome = run_probe(cluster, made, "fail", code=7, args=["--contract", "indexed-job"])
    assert outcome.codes == [7, 7], outcome.logs
    check_view(cluster, made, "fail", outcome)
