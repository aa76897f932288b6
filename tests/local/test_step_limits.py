"""A step's limits inside a job, and the job's end reaching running steps, as real Slurm 22.05
prints and records them (observed there with ``KillWait=5``; our jobs run with KillWait 1 s
and, where a time limit is involved, a minute of ``SBATCHK8S_SECONDS_PER_MINUTE`` seconds).

Real Slurm's lines for a step past its ``srun -t`` (job 373, ``-N2 -n2``)::

    slurmstepd-n3: error: *** STEP 373.0 ON n3 CANCELLED AT … DUE TO TIME LIMIT ***
    srun: error: n3: task 0: Terminated
    srun: error: n4: task 1: Terminated
    srun: Force Terminated StepId=373.0
    rc=143

and ``sacct``: ``373.0|TIMEOUT|0:15``. For a job reaching its own limit while ``srun sleep
600`` runs on two nodes (jobs 374, 390), in an order that varies between runs::

    srun: Job step aborted: Waiting up to 7 seconds for job step to finish.
    slurmstepd-n1: error: *** JOB 390 ON n1 CANCELLED AT … DUE TO TIME LIMIT ***
    slurmstepd-n1: error: *** STEP 390.0 ON n1 CANCELLED AT … DUE TO TIME LIMIT ***
    srun: got SIGCONT
    srun: error: n2: task 1: Terminated
    srun: error: n1: task 0: Terminated

(``srun: forcing job termination`` too, when srun's SIGTERM comes before its tasks' ends),
with the step ``CANCELLED 0:15``.
"""

from __future__ import annotations

import re
import sqlite3
import time
from typing import Dict, List, Optional, Tuple

from tests.local.harness import LocalSlurm, job_id_of, shell_wait

STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"
FAST_MINUTE = {"SBATCHK8S_SECONDS_PER_MINUTE": "2"}
#: A minute long enough for a step to start within a job's one-minute limit on a loaded
#: machine (srun's start-up can take seconds there).
ROOMY_MINUTE = {"SBATCHK8S_SECONDS_PER_MINUTE": "20"}


def run_job(slurm: LocalSlurm, body: str, *args: str,
            env: Optional[Dict[str, str]] = None) -> Tuple[int, str]:
    """Run ``body`` as a batch script to its end: its job id and output."""
    slurm.script("job.sh", "#!/bin/bash\n" + body)
    done = slurm.run("sbatch", "--wait", "-o", "job.out", *args, "job.sh", env=env)
    return job_id_of(done.stdout), slurm.read("job.out")


def sacct_steps(slurm: LocalSlurm, job: int) -> List[str]:
    """``JobID|State|ExitCode`` of the job and its steps."""
    listing = slurm.run("sacct", "-j", str(job), "-P", "-n", "-o", "JobID,State,ExitCode")
    return listing.stdout.splitlines()


def test_a_step_past_its_time_limit_is_ended_as_slurmstepd_does(slurm: LocalSlurm) -> None:
    job, out = run_job(slurm, "srun -t 0:05 sleep 60; echo rc=$?\n"
                       "srun -t 1 -N1 -n1 bash -c 'trap \"\" TERM; sleep 60'; echo rc=$?\n"
                       "srun -t 0 -N1 -n1 true; echo rc=$?\n", "-N2", "-n2", env=FAST_MINUTE)
    lines = out.splitlines()
    # -t 0:05 is one minute (Slurm rounds a step's seconds up to minutes).
    assert re.fullmatch(rf"slurmstepd: error: \*\*\* STEP {job}\.0 ON 127\.0\.0\.2 CANCELLED AT "
                        rf"{STAMP} DUE TO TIME LIMIT \*\*\*", lines[0]), lines
    assert sorted(lines[1:3]) == ["srun: error: 127.0.0.2: task 0: Terminated",
                                  "srun: error: 127.0.0.3: task 1: Terminated"]
    assert lines[3:5] == [f"srun: Force Terminated StepId={job}.0", "rc=143"]
    # Tasks that ignore SIGTERM get SIGKILL after KillWait (at least 5 s, as slurmd waits).
    assert re.fullmatch(rf"slurmstepd: error: \*\*\* STEP {job}\.1 ON 127\.0\.0\.2 CANCELLED AT "
                        rf"{STAMP} DUE TO TIME LIMIT \*\*\*", lines[5]), lines
    assert lines[6:] == ["srun: error: 127.0.0.2: task 0: Killed",
                         f"srun: Force Terminated StepId={job}.1", "rc=137", "rc=0"]
    steps = sacct_steps(slurm, job)
    assert f"{job}.0|TIMEOUT|0:15" in steps and f"{job}.1|TIMEOUT|0:9" in steps
    assert f"{job}.2|COMPLETED|0:0" in steps and f"{job}|COMPLETED|0:0" in steps


def test_a_job_reaching_its_limit_ends_its_running_step_once(slurm: LocalSlurm) -> None:
    """The step's limit is longer than what is left of the job's: Slurm takes it as given,
    and the job's limit ends the step first. No line twice, no false node failure, every
    step recorded."""
    job, out = run_job(slurm, "srun -t 60 sleep 600; echo rc=$?\necho after\n",
                       "-N2", "-t", "1", env=ROOMY_MINUTE)
    lines = out.splitlines()
    assert len(lines) == len(set(lines)), lines
    assert lines[0] == "srun: Job step aborted: Waiting up to 3 seconds for job step to finish."
    assert re.fullmatch(rf"slurmstepd: error: \*\*\* JOB {job} ON 127\.0\.0\.2 CANCELLED AT "
                        rf"{STAMP} DUE TO TIME LIMIT \*\*\*", lines[1]), lines
    assert re.fullmatch(rf"slurmstepd: error: \*\*\* STEP {job}\.0 ON 127\.0\.0\.2 CANCELLED AT "
                        rf"{STAMP} DUE TO TIME LIMIT \*\*\*", lines[2]), lines
    rest = set(lines[3:])
    assert {"srun: got SIGCONT", "srun: error: 127.0.0.2: task 0: Terminated",
            "srun: error: 127.0.0.3: task 1: Terminated"} <= rest
    assert rest <= {"srun: got SIGCONT", "srun: error: 127.0.0.2: task 0: Terminated",
                    "srun: error: 127.0.0.3: task 1: Terminated",
                    "srun: forcing job termination"}, lines
    steps = sacct_steps(slurm, job)
    assert steps[0] == f"{job}|TIMEOUT|0:0"
    assert f"{job}.batch|CANCELLED|0:15" in steps and f"{job}.0|CANCELLED|0:15" in steps


def test_scancel_of_the_job_ends_its_running_step_once(slurm: LocalSlurm) -> None:
    slurm.script("job.sh", "#!/bin/bash\necho started\nsrun sleep 60; echo rc=$?\n")
    job = job_id_of(slurm.run("sbatch", "-N2", "-o", "job.out", "job.sh").stdout)
    slurm.wait_for(lambda: slurm.run("squeue", "-s", "-h", "-j", str(job)).stdout.count(
        f"{job}.0") == 1)
    time.sleep(0.3)
    assert slurm.run("scancel", str(job)).returncode == 0
    slurm.wait_for(lambda: _state(slurm, job) == "CANCELLED")
    lines = slurm.read("job.out").splitlines()
    assert len(lines) == len(set(lines)), lines
    assert lines[:2] == ["started", "srun: Job step aborted: Waiting up to 3 seconds for job "
                                    "step to finish."]
    assert re.fullmatch(rf"slurmstepd: error: \*\*\* JOB {job} ON 127\.0\.0\.2 CANCELLED AT "
                        rf"{STAMP} \*\*\*", lines[2]), lines
    assert re.fullmatch(rf"slurmstepd: error: \*\*\* STEP {job}\.0 ON 127\.0\.0\.2 CANCELLED AT "
                        rf"{STAMP} \*\*\*", lines[3]), lines
    assert not any("Node failure" in line or "could not record" in line for line in lines)
    assert f"{job}.0|CANCELLED|0:15" in sacct_steps(slurm, job)


def _state(slurm: LocalSlurm, job: int) -> str:
    conn = sqlite3.connect(slurm.state / "jobs.db")
    try:
        return str(conn.execute("SELECT state FROM jobs WHERE job_id=?", (job,)).fetchone()[0])
    finally:
        conn.close()


def test_a_nodelist_longer_than_the_node_count_is_cut(slurm: LocalSlurm) -> None:
    _, out = run_job(slurm, "srun -w 127.0.0.3,127.0.0.2 -N1 -n1 bash -c "
                     "'echo $SLURMD_NODENAME'; echo rc=$?\n"
                     "srun -w 127.0.0.2,127.0.0.3 -N1 hostname; echo rc=$?\n", "-N2", "-n2")
    cut = ("srun: error: Required nodelist includes more nodes than permitted by max-node "
           "count (2 > 1). Eliminating nodes from the nodelist.")
    assert out.splitlines() == [
        cut, "127.0.0.3", "rc=0",
        cut, "srun: error: Unable to create step for job 1: More processors requested than "
             "permitted", "rc=1"]


def test_gpus_of_a_step_without_gpus_in_the_job(slurm: LocalSlurm) -> None:
    _, out = run_job(slurm, "srun -N1 -n1 --gpus=1 true; echo rc=$?\n"
                     "srun --gres=gpu:1 true; echo rc=$?\n")
    refusal = ["srun: error: Step requested GRES but job doesn't have GRES",
               "srun: error: Unable to create step for job 1: Invalid generic resource (gres) "
               "specification", "rc=1"]
    assert out.splitlines() == refusal + refusal


GPU_PROBE = "bash -c 'echo $SLURM_PROCID $SLURMD_NODENAME $CUDA_VISIBLE_DEVICES " \
            "$SLURM_STEP_GPUS $SLURM_GPUS_ON_NODE' | sort"


def test_a_step_gets_only_the_gpus_it_asks_for(gpu_slurm: LocalSlurm) -> None:
    _, out = run_job(gpu_slurm, f"srun -N1 -n1 --gpus=1 {GPU_PROBE}\n"
                     f"srun -N2 -n2 --gpus=3 {GPU_PROBE}\n"
                     f"srun -N1 -n2 --gpus-per-task=1 {GPU_PROBE}\n"
                     f"srun -N1 -n1 --gres=gpu:2 {GPU_PROBE}\n"
                     f"srun -N1 -n1 {GPU_PROBE}\n"
                     "srun -N1 -n1 --gpus-per-node=3 true; echo rc=$?\n"
                     "srun -N2 -n2 --gpus=1 true; echo rc=$?\n",
                     "-N2", "--ntasks-per-node=2", "--gres=gpu:2")
    unable = ("srun: error: Unable to create step for job 1: Invalid generic resource (gres) "
              "specification")
    assert out.splitlines() == [
        "0 127.0.0.2 0 0 1",
        "0 127.0.0.2 0,1 0,1 2", "1 127.0.0.3 2 2 1",
        "0 127.0.0.2 0 0 2", "1 127.0.0.2 1 1 2",
        "0 127.0.0.2 0,1 0,1 2",
        "0 127.0.0.2 0,1 0,1 2",
        "srun: error: Step requested gres_per_node=gpu:3 is more than the job's "
        "gres_per_node=gpu:2", unable, "rc=1",
        "srun: error: Step requested gres=gpu:1 is less than the requested min nodes=2",
        unable, "rc=1"]


def test_parallel_steps_get_distinct_gpus_and_wait_for_them(gpu_slurm: LocalSlurm) -> None:
    """As Slurm binds them: each one-GPU step the lowest free GPU; a step finding none free
    waits until one is released; a step asking for none (all of them) waits for all. The
    script starts each step once the one before has printed (in run_job's job.out), and the
    steps hold their GPUs until it lets them go (step 0's first)."""
    probe = "echo $SLURM_STEP_ID $CUDA_VISIBLE_DEVICES"
    holding = shell_wait("[ -e go.$SLURM_STEP_ID ]")
    body = "".join(
        f"srun -N1 -n1 --exact --gpus=1 bash -c '{probe}; {holding}' &\n"
        + shell_wait(f'[ "$(wc -l < job.out)" -ge {printed} ]') + "\n"
        for printed in (1, 2, 3))
    body += (f"srun -N1 -n1 --exact --gpus=1 bash -c '{probe}' & last=$!\n"
             + shell_wait('grep -q "Requested nodes are busy" job.out') + "\n"
             "touch go.0; wait $last; touch go.1 go.2; wait\n"
             "srun -N1 -n1 --exact bash -c 'echo all $CUDA_VISIBLE_DEVICES'\n")
    _, out = run_job(gpu_slurm, body, "-N1", "-n4", "--gres=gpu:3")
    lines = out.splitlines()
    assert lines[:3] == ["0 0", "1 1", "2 2"]
    assert lines[3:] == [
        "srun: Job 1 step creation temporarily disabled, retrying (Requested nodes are busy)",
        "srun: Step created for job 1", "3 0", "all 0,1,2"]
