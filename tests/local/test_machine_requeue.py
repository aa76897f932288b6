"""A job the machine ends is requeued as slurmctld requeues it: on the local backend, a node
process that dies (``NODE_FAIL``) or is stopped by SIGTERM (``PREEMPTED``) ends the run, and a
job that may be requeued runs again under its id — no command needs to be typed: the
scheduler process requeues it when it records the end. Its earlier run stays in ``sacct -D``
as it ended; the job waits ``PD (BeginTime)`` for the requeue delay (shortened here with
``SBATCHK8S_REQUEUE_DELAY``), then runs with ``SLURM_RESTART_COUNT`` one higher.
"""

from __future__ import annotations

import datetime
import os
import re
import signal

from tests.local.harness import LocalSlurm
from tests.local.test_requeue import _runs, _sacct, _squeue

#: A 2-node job: each run appends its restart count; the first run waits (to lose a node),
#: the next one ends at once. Output appended, so both runs' lines stay.
LOSES_A_NODE = r"""#!/bin/sh
#SBATCH -N2 -o lost.out --open-mode=append
echo "run ${SLURM_RESTART_COUNT:-unset} of $SLURM_JOB_ID" >> runs.txt
echo "restart ${SLURM_RESTART_COUNT:-unset}"
[ -n "$SLURM_RESTART_COUNT" ] || sleep 120
"""
WAIT_S = 60.0


def _node_process(slurm: LocalSlurm, job: str, index: int) -> int:
    """The pid of node ``index`` of ``job`` (its spool directory in its environment)."""
    spool = f"SBATCHK8S_SPOOL={slurm.state}/jobs/{job}/node-{index}\0".encode()
    wanted = f"node\0--contract\0local\0--index\0{index}\0".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if not f.read().endswith(wanted):
                    continue
            with open(f"/proc/{entry}/environ", "rb") as f:
                if spool in f.read():
                    return int(entry)
        except OSError:
            continue
    raise AssertionError(f"node {index} of job {job} not found")


def _start_first_run(slurm: LocalSlurm, *options: str) -> str:
    slurm.script("lost.sh", LOSES_A_NODE)
    job = slurm.run("sbatch", "--parsable", *options, "lost.sh").stdout.strip()
    # Node 0 starts the script only once node 1 answered: both are up.
    slurm.wait_for(lambda: _runs(slurm) == [f"run unset of {job}"], WAIT_S)
    return job


def test_a_lost_node_requeues_the_job_which_runs_again(slurm: LocalSlurm) -> None:
    slurm.env["SBATCHK8S_REQUEUE_DELAY"] = "1"
    job = _start_first_run(slurm, "--requeue")
    os.kill(_node_process(slurm, job, 1), signal.SIGKILL)

    slurm.wait_for(lambda: _runs(slurm)[1:] == [f"run 1 of {job}"], WAIT_S)
    slurm.wait_for(lambda: _squeue(slurm, job) == "", WAIT_S)
    assert _sacct(slurm, job, "-D", "-X") == [f"{job}|NODE_FAIL|0:0", f"{job}|COMPLETED|0:0"]
    assert _sacct(slurm, job, "-X") == [f"{job}|COMPLETED|0:0"]
    shown = slurm.run("scontrol", "show", "job", job).stdout
    assert "JobState=COMPLETED Reason=None" in shown and "Requeue=1 Restarts=1" in shown
    # The earlier run as it ended: node 0's slurmstepd line, then the next run's lines.
    out = slurm.read("lost.out").splitlines()
    assert out[0] == "restart unset" and out[-1] == "restart 1", out
    assert any(re.fullmatch(rf"slurmstepd: error: \*\*\* JOB {job} ON \S+ CANCELLED AT \S+ "
                            r"DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS \*\*\*", line)
               for line in out), out
    # The requeue delay: eligible that long after the requeue (its new submit time).
    times = {k: datetime.datetime.fromisoformat(v)
             for k, v in re.findall(r"(SubmitTime|EligibleTime)=(\S+)", shown)}
    assert (times["EligibleTime"] - times["SubmitTime"]).total_seconds() == 1
    # The earlier run's node files are kept beside the job.
    assert (slurm.state / "jobs" / job / "requeued-1" / "node-1.log").exists()


def test_a_stopped_node_requeues_the_job_pending_its_begin_time(slurm: LocalSlurm) -> None:
    """SIGTERM to node 1 (its pod deleted, on a cluster): PREEMPTED, then requeued; the job
    waits ``PD (BeginTime)`` with one more restart until the delay is over."""
    slurm.env["SBATCHK8S_REQUEUE_DELAY"] = "600"
    job = _start_first_run(slurm)  # Slurm's default: JobRequeue=1
    os.kill(_node_process(slurm, job, 1), signal.SIGTERM)

    slurm.wait_for(lambda: _squeue(slurm, job) == f"{job} PENDING BeginTime", WAIT_S)
    shown = slurm.run("scontrol", "show", "job", job).stdout
    assert "JobState=PENDING Reason=BeginTime" in shown and "Requeue=1 Restarts=1" in shown
    assert _sacct(slurm, job, "-D", "-X") == [f"{job}|PREEMPTED|0:0", f"{job}|PENDING|0:0"]
    assert _runs(slurm) == [f"run unset of {job}"]
    assert slurm.run("scancel", job).returncode == 0
    slurm.wait_for(lambda: _squeue(slurm, job) == "", WAIT_S)
    assert _sacct(slurm, job, "-D", "-X") == [f"{job}|PREEMPTED|0:0",
                                              f"{job}|CANCELLED by {os.getuid()}|0:0"]


def test_a_no_requeue_job_stays_node_fail(slurm: LocalSlurm) -> None:
    slurm.env["SBATCHK8S_REQUEUE_DELAY"] = "0"
    job = _start_first_run(slurm, "--no-requeue")
    os.kill(_node_process(slurm, job, 1), signal.SIGKILL)

    slurm.wait_for(lambda: _squeue(slurm, job) == "", WAIT_S)
    # Real Slurm 22.05: sacct prints NODE_FAIL 0:0, scontrol the script's ExitCode=0:15.
    assert _sacct(slurm, job, "-D", "-X") == [f"{job}|NODE_FAIL|0:0"]
    shown = slurm.run("scontrol", "show", "job", job).stdout
    assert "JobState=NODE_FAIL Reason=NodeDown" in shown and "Requeue=0 Restarts=0" in shown
    assert "ExitCode=0:15" in shown
    assert _runs(slurm) == [f"run unset of {job}"]


def test_losing_node_0_is_a_node_failure_and_requeues(slurm: LocalSlurm) -> None:
    """The batch host's node process killed (nothing of it left to report): the job's node
    failed — NODE_FAIL (NodeDown), not a failed script — and it is requeued like any lost
    node's job; the other node does not outlive it."""
    slurm.env["SBATCHK8S_REQUEUE_DELAY"] = "1"
    job = _start_first_run(slurm)
    node1 = _node_process(slurm, job, 1)
    os.kill(_node_process(slurm, job, 0), signal.SIGKILL)

    slurm.wait_for(lambda: _runs(slurm)[1:] == [f"run 1 of {job}"], WAIT_S)
    slurm.wait_for(lambda: _squeue(slurm, job) == "", WAIT_S)
    assert _sacct(slurm, job, "-D", "-X") == [f"{job}|NODE_FAIL|0:0", f"{job}|COMPLETED|0:0"]
    assert not os.path.exists(f"/proc/{node1}/cmdline") or \
        open(f"/proc/{node1}/stat").read().split()[2] == "Z"


def test_srun_outside_a_job_is_not_requeued_when_it_loses_a_node(slurm: LocalSlurm) -> None:
    """slurmctld requeues batch jobs only: srun's own job ends NODE_FAIL, and srun with it."""
    slurm.env["SBATCHK8S_REQUEUE_DELAY"] = "0"
    process = slurm.start("srun", "-N2", "bash", "-c",
                          "echo up >> ran.$SLURM_NODEID; sleep 120")
    try:
        slurm.wait_for(lambda: (slurm.work / "ran.1").exists(), WAIT_S)
        job = slurm.run("squeue", "-h", "-o", "%i").stdout.strip()
        # As real Slurm shows srun's job: requeue allowed by default, but no batch job.
        shown = slurm.run("scontrol", "show", "job", job).stdout
        assert "Requeue=1 Restarts=0 BatchFlag=0" in shown, shown
        refused = slurm.run("scontrol", "requeue", job)
        assert (refused.returncode, refused.stderr) == (
            1, f"Only batch jobs are accepted or processed for job {job}\n")
        os.kill(_node_process(slurm, job, 1), signal.SIGKILL)
        _, err = process.communicate(timeout=WAIT_S)
    finally:
        process.kill()
    assert process.returncode != 0
    assert "srun: error: Node failure on 127.0.0.3" in err, err
    [run] = _sacct(slurm, job, "-D", "-X")  # one run (its exit code: srun's)
    assert run.startswith(f"{job}|NODE_FAIL|"), run
    assert slurm.read("ran.0") == "up\n"
