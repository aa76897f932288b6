"""Files and working directories on the nodes, compared with real Slurm 22.05.

``srun -o out-%n`` with several tasks per node: real Slurm writes every task's lines into the
node's one file (slurmstepd opens each file once, before any task starts). A working directory
that does not exist on a node: slurmstepd prints "couldn't chdir to ..." (once for the step on
the node, once per task) and runs the tasks in /tmp; the batch script likewise.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Dict, List

from tests.local.harness import LocalSlurm, job_id_of

TASK_LINES = "for i in 1 2 3; do echo t$SLURM_PROCID-$i; echo e$SLURM_PROCID-$i >&2; done"
CHDIR = ("slurmstepd: error: couldn't chdir to `{}': No such file or directory: going to "
         "/tmp instead")


def run_job(slurm: LocalSlurm, body: str, *args: str) -> str:
    slurm.script("job.sh", "#!/bin/bash\n#SBATCH -N2 --ntasks-per-node=3\n" + body)
    done = slurm.run("sbatch", "--wait", "-o", "job.out", *args, "job.sh", timeout=120)
    assert done.returncode == 0, done.stderr
    return slurm.read("job.out")


def sorted_lines(slurm: LocalSlurm, name: str) -> List[str]:
    return sorted(slurm.read(name).splitlines())


def test_every_task_of_a_node_writes_into_its_per_node_file(slurm: LocalSlurm) -> None:
    body = f"""\
srun -o out-%n bash -c '{TASK_LINES}'
srun -o oN-%N -e eN-%N bash -c 'echo o$SLURM_PROCID; echo e$SLURM_PROCID >&2'
srun -o app-%n --open-mode=append bash -c 'echo first$SLURM_PROCID'
srun -o app-%n --open-mode=append bash -c 'echo second$SLURM_PROCID'
srun -o trunc-%n bash -c 'echo first$SLURM_PROCID'
srun -o trunc-%n bash -c 'echo second$SLURM_PROCID'
"""
    assert run_job(slurm, body) == ""
    # What real Slurm 22.05 wrote (-N2 --ntasks-per-node=3), in file order per task.
    ranks: Dict[int, List[int]] = {0: [0, 1, 2], 1: [3, 4, 5]}
    for node, tasks in ranks.items():
        name = f"127.0.0.{node + 2}"
        assert sorted_lines(slurm, f"out-{node}") == sorted(
            f"{kind}{t}-{i}" for t in tasks for kind in "te" for i in (1, 2, 3))
        for t in tasks:  # each task's own lines stay in order
            mine = [line for line in slurm.read(f"out-{node}").splitlines()
                    if line[1:].startswith(f"{t}-")]
            assert mine == [f"{kind}{t}-{i}" for i in (1, 2, 3) for kind in "te"]
        assert sorted_lines(slurm, f"oN-{name}") == [f"o{t}" for t in tasks]
        assert sorted_lines(slurm, f"eN-{name}") == [f"e{t}" for t in tasks]
        assert sorted_lines(slurm, f"app-{node}") == sorted(
            [f"first{t}" for t in tasks] + [f"second{t}" for t in tasks])
        assert sorted(slurm.read(f"app-{node}").splitlines()[:3]) == [
            f"first{t}" for t in tasks]
        assert sorted_lines(slurm, f"trunc-{node}") == [f"second{t}" for t in tasks]


def test_tasks_run_in_tmp_when_the_working_directory_is_missing(slurm: LocalSlurm) -> None:
    missing = str(slurm.work / "gone")
    body = f"""\
srun -D {missing} bash -c 'echo task $SLURM_PROCID in $(pwd)' 2>&1 | sort
echo rc=${{PIPESTATUS[0]}}
"""
    out = run_job(slurm, body).splitlines()
    line = CHDIR.format(missing)
    # Real Slurm: per node one line from the step, one per task; every task runs in /tmp.
    assert out == [line] * 8 + [f"task {r} in /tmp" for r in range(6)] + ["rc=0"]
    assert not os.path.exists(missing)


def test_the_batch_script_runs_in_tmp_without_creating_its_directory(
        slurm: LocalSlurm) -> None:
    missing = slurm.work / "not-shared"
    absolute = slurm.work / "abs.out"
    done = slurm.run("sbatch", "--wait", "-D", str(missing), "-o", str(absolute),
                     "--wrap", "pwd")
    assert done.returncode == 0, done.stderr
    line = CHDIR.format(missing)
    assert absolute.read_text() == f"{line}\n{line}\n/tmp\n"
    assert not missing.exists()
    # A relative output name resolves where the script runs (never in the missing directory).
    name = f"sbatch-k8s-test-{uuid.uuid4().hex}.out"
    done = slurm.run("sbatch", "--wait", "-D", str(missing), "-o", name, "--wrap", "pwd")
    job = job_id_of(done.stdout)
    landed = Path("/tmp") / name
    try:
        assert landed.read_text() == f"{line}\n{line}\n/tmp\n"
    finally:
        landed.unlink()
    assert not missing.exists()
    # scontrol shows the name the controller recorded (Slurm 22.05 alike): the working
    # directory given, not /tmp where the node had to put the file.
    shown = slurm.run("scontrol", "show", "job", str(job)).stdout
    assert f"StdOut={missing}/{name}\n" in shown
