"""Contract profiles on the local backend: a 2-node job's batch script and its srun tasks on
both nodes see the chosen platform's variables beside SLURM_* (node 0's in the batch script,
each task its own node's), and the profile's files are where its variables point.

The expected values are written from the platforms' rules (reference: a PyTorchJob's RANK is
the pod's index, WORLD_SIZE pods × processes; OpenMPI hostfiles are ``host slots=N``), not
from the profile table."""

from __future__ import annotations

import json
import re
from typing import Dict

from tests.local.harness import LocalSlurm, job_id_of

NODES = ("127.0.0.2", "127.0.0.3")

PYTORCHJOB = """#!/bin/bash
#SBATCH --nodes=2 --ntasks-per-node=1 --output=out.txt --error=err.txt
echo "batch MASTER_ADDR=$MASTER_ADDR MASTER_PORT=$MASTER_PORT" \
     "WORLD_SIZE=$WORLD_SIZE RANK=$RANK"
echo "batch PET_NNODES=$PET_NNODES PET_NODE_RANK=$PET_NODE_RANK" \
     "PET_NPROC_PER_NODE=$PET_NPROC_PER_NODE"
srun --label bash -c 'echo "node $SLURMD_NODENAME RANK=$RANK PET_NODE_RANK=$PET_NODE_RANK" \
     "WORLD_SIZE=$WORLD_SIZE PET_MASTER_ADDR=$PET_MASTER_ADDR"'
"""


def _fields(line: str) -> Dict[str, str]:
    return dict(word.split("=", 1) for word in line.split() if "=" in word)


def _run(slurm: LocalSlurm, *args: str) -> str:
    done = slurm.run("sbatch", "--wait", *args, timeout=120)
    assert done.returncode == 0, (done.stdout, done.stderr, slurm.read("err.txt")
                                  if (slurm.work / "err.txt").exists() else "")
    job_id_of(done.stdout)
    return slurm.read("out.txt")


def test_a_pytorchjob_script_sees_kubeflows_variables_on_both_nodes(slurm: LocalSlurm) -> None:
    slurm.script("job.sh", PYTORCHJOB)
    out = _run(slurm, "--k8s-contract=pytorchjob", "job.sh")
    lines = out.splitlines()
    batch = _fields(" ".join(line for line in lines if line.startswith("batch ")))
    assert batch.pop("MASTER_PORT").isdigit(), out      # the job's own (issue 18, item 5)
    assert batch == {"MASTER_ADDR": NODES[0], "WORLD_SIZE": "2",
                     "RANK": "0", "PET_NNODES": "2", "PET_NODE_RANK": "0",
                     "PET_NPROC_PER_NODE": "1"}, out
    tasks = {line.split(":")[0]: _fields(line) for line in lines if re.match(r"^\d: node ", line)}
    assert tasks == {str(i): {"RANK": str(i), "PET_NODE_RANK": str(i), "WORLD_SIZE": "2",
                              "PET_MASTER_ADDR": NODES[0]} for i in range(2)}, out
    assert [line.split()[2] for line in sorted(lines) if re.match(r"^\d: node ", line)] == \
        list(NODES)


HOROVOD = """#!/bin/bash
#SBATCH --nodes=2 --ntasks-per-node=1 --output=out.txt --error=err.txt
echo "batch RANK=${RANK-unset} HYDRA_HOST_FILE=$HYDRA_HOST_FILE"
srun --label bash -c 'echo "node $SLURMD_NODENAME"
    cat "$OMPI_MCA_orte_default_hostfile" "$HYDRA_HOST_FILE"'
"""


def test_a_partitions_horovod_contract_gives_every_task_the_hostfiles(tmp_path) -> None:
    slurm = LocalSlurm(tmp_path, config='[partitions.mpi]\ncontract = "task-training-horovod"\n')
    try:
        slurm.script("job.sh", HOROVOD)
        out = _run(slurm, "--partition=mpi", "job.sh")
    finally:
        slurm.cleanup()
    assert "batch RANK=unset HYDRA_HOST_FILE=/" in out, out  # Horovod mode sets no rank
    for label in ("0", "1"):
        mine = [line[3:] for line in out.splitlines() if line.startswith(f"{label}: ")]
        assert mine[0] == f"node {NODES[int(label)]}", out
        assert mine[1:] == [f"{NODES[0]} slots=1", f"{NODES[1]} slots=1",
                            f"{NODES[0]}:1", f"{NODES[1]}:1"], out


DEEPSPEED = """#!/bin/bash
#SBATCH --nodes=2 --ntasks-per-node=1 --output=out.txt --error=err.txt
echo "batch WORLD_SIZE=$WORLD_SIZE RANK=$RANK SLOTS=$SLOTS MASTER_ADDR=$MASTER_ADDR"
srun --label bash -c 'echo "RANK=$RANK"'
"""


def test_deepspeed_hostfile_is_the_jobs_copy_named_once_on_stderr(slurm: LocalSlurm) -> None:
    slurm.script("job.sh", DEEPSPEED)
    out = _run(slurm, "--k8s-contract=task-training-deepspeed", "job.sh")
    assert "batch WORLD_SIZE=2 RANK=0 SLOTS=1 MASTER_ADDR=127.0.0.2" in out, out
    assert sorted(line for line in out.splitlines() if line[:1].isdigit()) == \
        ["0: RANK=0", "1: RANK=1"], out
    err = slurm.read("err.txt")
    notes = re.findall(r"^sbatch-k8s: warning: contract task-training-deepspeed: "
                       r"/job/hostfile is not written \(.*\); the job's copy is (\S+)$", err,
                       re.MULTILINE)
    assert len(notes) == 1, err
    with open(notes[0]) as f:
        assert f.read() == f"{NODES[0]} slots=1\n{NODES[1]} slots=1\n"


def test_an_unknown_contract_is_refused_in_one_line(slurm: LocalSlurm) -> None:
    slurm.script("job.sh", "#!/bin/sh\ntrue\n")
    done = slurm.run("sbatch", "--k8s-contract=mpijob", "job.sh")
    assert done.returncode == 255 and done.stdout == ""  # as sbatch's option errors
    assert done.stderr == ("sbatch: error: Invalid --k8s-contract specification: mpijob (one "
                           "of slurm, pytorchjob, aihub, aistation, task-training, "
                           "task-training-deepspeed, task-training-horovod, "
                           "task-training-tensorflow, volcano, modelarts)\n")
    assert slurm.run("squeue", "-h").stdout == ""


MODELARTS = """#!/bin/bash
#SBATCH --nodes=2 --ntasks-per-node=2 --gpus-per-node=2 --output=out.txt --error=err.txt
echo "batch ASCEND_DEVICE_ID=$ASCEND_DEVICE_ID RANK_ID=$RANK_ID RANK_SIZE=$RANK_SIZE"
cp "$RANK_TABLE_FILE/jobstart_hccl.json" table.json
srun --label bash -c 'echo "RANK_ID=$RANK_ID RANK_SIZE=$RANK_SIZE" \
     "ASCEND_DEVICE_ID=$ASCEND_DEVICE_ID STEP_GPUS=$SLURM_STEP_GPUS"'
"""


def test_modelarts_gives_a_completed_rank_table_and_ranks_per_task(gpu_slurm: LocalSlurm
                                                                   ) -> None:
    gpu_slurm.script("job.sh", MODELARTS)
    out = _run(gpu_slurm, "--k8s-contract=modelarts", "job.sh")
    table = json.loads(gpu_slurm.read("table.json"))
    assert table["status"] == "completed"
    servers = table["group_list"][0]["instance_list"]
    assert [s["server_id"] for s in servers] == list(NODES)
    cards = [[d["device_id"] for d in s["devices"]] for s in servers]
    assert [len(c) for c in cards] == [2, 2]
    batch = _fields(next(line for line in out.splitlines() if line.startswith("batch ")))
    assert batch == {"ASCEND_DEVICE_ID": cards[0][0], "RANK_ID": "0", "RANK_SIZE": "4"}, out
    tasks = {int(line.split(":")[0]): _fields(line) for line in out.splitlines()
             if line[:1].isdigit()}
    assert sorted(tasks) == [0, 1, 2, 3], out
    for rank, seen in tasks.items():  # RANK_ID = SLURM_PROCID; the card among the task's
        assert (seen["RANK_ID"], seen["RANK_SIZE"]) == (str(rank), "4"), out
        assert seen["ASCEND_DEVICE_ID"] in seen["STEP_GPUS"].split(","), out
        assert seen["ASCEND_DEVICE_ID"] in cards[rank // 2], out


def test_the_lint_counts_the_profiles_variables_as_set(slurm: LocalSlurm) -> None:
    slurm.script("job.sh", "#!/bin/bash\n#SBATCH --nodes=2\necho \"$RANK $WORLD_SIZE\"\n")
    plain = slurm.run("sbatch", "--k8s-lint", "job.sh")
    assert "nothing sets $RANK" in plain.stdout and "nothing sets $WORLD_SIZE" in plain.stdout
    profiled = slurm.run("sbatch", "--k8s-lint", "--k8s-contract=pytorchjob", "job.sh")
    assert profiled.returncode == 0, profiled.stderr
    assert "nothing sets" not in profiled.stdout, profiled.stdout
