"""Jobs that end badly: scancel, a lost node, a wrong token, the time limit; and the job
life cycle around them (hold, release, dependencies)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from sbatch_k8s.runtime.protocol import ProtocolError, authenticate, read_token
from tests.local.harness import LocalSlurm, job_id_of, shell_wait


def job_row(slurm: LocalSlurm, job: int) -> sqlite3.Row:
    conn = sqlite3.connect(slurm.state / "jobs.db")
    conn.row_factory = sqlite3.Row
    return conn.execute("SELECT * FROM jobs WHERE job_id=?", (job,)).fetchone()


def submit(slurm: LocalSlurm, *args: str) -> int:
    done = slurm.run("sbatch", *args)
    assert done.returncode == 0, done.stderr
    return job_id_of(done.stdout)


def wait_state(slurm: LocalSlurm, job: int, states: tuple, timeout: float = 60) -> None:
    slurm.wait_for(lambda: job_row(slurm, job)["state"] in states, timeout)


def test_scancel_mid_run_cancels_tasks_and_records_who(slurm: LocalSlurm) -> None:
    job = submit(slurm, "-N2", "-o", "c.out", "--wrap",
                 "echo started; srun bash -c 'sleep 60' ; echo after")
    slurm.wait_for(lambda: (slurm.work / "c.out").exists() and
                   "started" in slurm.read("c.out"))
    time.sleep(0.5)
    begun = time.time()
    cancel = slurm.run("scancel", str(job))
    assert (cancel.returncode, cancel.stdout, cancel.stderr) == (0, "", "")
    wait_state(slurm, job, ("CANCELLED",))
    assert time.time() - begun < 50     # well before the task's own end (its sleep 60)
    assert re.search(rf"slurmstepd: error: \*\*\* JOB {job} ON 127\.0\.0\.2 CANCELLED AT \S+ "
                     r"\*\*\*", slurm.read("c.out"))
    acct = slurm.run("sacct", "-j", str(job), "-P", "-o", "JobID,State,ExitCode")
    lines = acct.stdout.splitlines()
    assert lines[1] == f"{job}|CANCELLED by {os.getuid()}|0:0"
    assert f"{job}.batch|CANCELLED|0:15" in lines
    shown = slurm.run("scontrol", "show", "job", str(job)).stdout
    assert " ExitCode=0:15\n" in shown  # scontrol: the batch script's end
    squeue = slurm.run("squeue", "-h", "-j", str(job), "-t", "all", "-o", "%t")
    assert squeue.stdout == "CA\n"


def test_cancel_pending_and_signal_running(slurm: LocalSlurm) -> None:
    held = submit(slurm, "-H", "--wrap", "true")
    assert slurm.run("scancel", str(held)).returncode == 0
    assert job_row(slurm, held)["state"] == "CANCELLED"
    # The task says (trapped.txt) once its trap is set; scancel signals it then.
    job = submit(slurm, "-o", "s.out", "--wrap",
                 "trap 'echo batch got USR1' USR1; srun bash -c \"trap 'echo task got USR1; "
                 "exit 0' USR1; touch trapped.txt; sleep 120 & wait\" & wait; wait; echo end")
    slurm.wait_for(lambda: (slurm.work / "trapped.txt").exists())
    assert slurm.run("scancel", "--signal=USR1", str(job)).returncode == 0
    wait_state(slurm, job, ("COMPLETED",))
    assert slurm.read("s.out").splitlines() == ["task got USR1", "end"]
    quiet = slurm.run("scancel", "99999")
    assert (quiet.returncode, quiet.stderr) == (0, "")
    loud = slurm.run("scancel", "-v", "99999")
    assert loud.stderr == ("scancel: Terminating job 99999\n"
                           "scancel: error: Kill job error on job id 99999: "
                           "Invalid job id specified\n")
    unknown = slurm.run("scontrol", "show", "job", "99999")
    assert (unknown.returncode, unknown.stderr) == (
        1, "slurm_load_jobs error: Invalid job id specified\n")


def _node_process(job_dir: Path, index: int) -> int:
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = [a for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if a]
            env = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if b"node" in cmd and cmd[-1] == str(index).encode() and \
                f"SBATCHK8S_SPOOL={job_dir}/node-{index}".encode() in env:
            return int(pid)
    raise AssertionError(f"node {index} process not found")


def test_losing_a_node_mid_step_fails_the_job_without_hanging(slurm: LocalSlurm) -> None:
    # --no-requeue: the job stays NODE_FAIL (else requeued: test_machine_requeue.py).
    job = submit(slurm, "-N2", "--no-requeue", "-o", "n.out", "--wrap",
                 "srun -l bash -c 'echo up; sleep 60'; echo srun=$?; sleep 60")
    slurm.wait_for(lambda: (slurm.work / "n.out").exists() and
                   slurm.read("n.out").count("up") == 2)
    node1 = _node_process(slurm.state / "jobs" / str(job), 1)
    begun = time.time()
    os.kill(node1, signal.SIGKILL)
    wait_state(slurm, job, ("NODE_FAIL",))
    assert time.time() - begun < 50     # well before node 0's task ends (its sleep 60)
    out = slurm.read("n.out")
    assert "srun: error: Node failure on 127.0.0.3" in out
    assert "srun: error: 127.0.0.3: task 1: Killed" in out
    assert "DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***" in out
    assert job_row(slurm, job)["reason"] == "NodeDown"


def test_a_launch_with_a_wrong_token_is_rejected(slurm: LocalSlurm) -> None:
    """Node 0 refuses a connection with a wrong token and accepts the job's (it listens
    before the batch script starts, and the script runs until both attempts are made)."""
    up, go = slurm.work / "t.up", slurm.work / "t.go"
    holding = shell_wait(f"[ -e {go} ]")
    job = submit(slurm, "-o", "t.out", "--wrap", f"touch {up}; {holding}; env; echo finished")
    try:
        slurm.wait_for(lambda: up.exists())
        row = job_row(slurm, job)

        async def attempt(token: bytes) -> None:
            reader, writer = await asyncio.open_connection(row["batch_host"], row["port"])
            try:
                await authenticate(reader, writer, token)
            finally:
                writer.close()

        with pytest.raises(ProtocolError, match="refused the job token"):
            asyncio.new_event_loop().run_until_complete(attempt(b"not-the-token"))
        token = read_token(str(slurm.state / "jobs" / str(job) / "token"))
        asyncio.new_event_loop().run_until_complete(attempt(token))
    finally:
        go.touch()
    wait_state(slurm, job, ("COMPLETED",))
    out = slurm.read("t.out")
    assert out.endswith("finished\n")
    assert token.decode() not in out
    log = (slurm.state / "jobs" / str(job) / "node-0.log").read_text()
    assert "rejected a connection" in log and "authentication failed" in log
    assert token.decode() not in log


def test_time_limit_ends_the_job_as_timeout(slurm: LocalSlurm) -> None:
    env = {"SBATCHK8S_SECONDS_PER_MINUTE": "1"}
    done = slurm.run("sbatch", "--wait", "--time=1", "-o", "to.out", "--wrap",
                     "srun sleep 30", env=env)
    assert done.returncode == 1
    job = job_id_of(done.stdout)
    row = job_row(slurm, job)
    # The job keeps the batch script's end (scontrol's ExitCode); sacct prints 0:0 for it.
    assert (row["state"], row["exit_code"], row["exit_signal"]) == ("TIMEOUT", 0, 15)
    out = slurm.read("to.out")
    assert re.search(rf"\*\*\* JOB {job} ON 127\.0\.0\.2 CANCELLED AT \S+ DUE TO TIME LIMIT "
                     r"\*\*\*", out)
    sacct = slurm.run("sacct", "-j", str(job), "-P", "-o", "JobID,State,ExitCode").stdout
    assert f"{job}|TIMEOUT|0:0" in sacct and f"{job}.batch|CANCELLED|0:15" in sacct


def test_signal_before_the_time_limit_reaches_the_batch_shell(slurm: LocalSlurm) -> None:
    env = {"SBATCHK8S_SECONDS_PER_MINUTE": "2"}
    slurm.run("sbatch", "--wait", "--time=1", "--signal=B:USR1@1", "-o", "sig.out", "--wrap",
              "trap 'echo got USR1; exit 0' USR1; sleep 30 & wait", env=env)
    assert slurm.read("sig.out") == "got USR1\n"


def test_hold_release_and_dependencies(slurm: LocalSlurm) -> None:
    first = submit(slurm, "-H", "-o", "first.out", "--wrap", "echo first")
    second = submit(slurm, "-d", f"afterok:{first}", "-o", "second.out", "--wrap",
                    "echo second")
    never = submit(slurm, "-d", f"afternotok:{first}", "--wrap", "true")
    listing = slurm.run("squeue", "-h", "-o", "%i %r").stdout.split("\n")
    assert f"{first} JobHeldUser" in listing and f"{second} Dependency" in listing
    assert slurm.run("scontrol", "release", str(first)).returncode == 0
    wait_state(slurm, second, ("COMPLETED",))
    assert slurm.read("second.out") == "second\n"
    slurm.wait_for(lambda: job_row(slurm, never)["reason"] == "DependencyNeverSatisfied")
    slurm.run("scancel", str(never))
