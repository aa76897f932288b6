"""The local scheduler: a pending job is a database row, not a process; one scheduler per
state directory starts jobs as capacity, holds, begin times and dependencies allow; killing
it loses nothing."""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from pathlib import Path
from typing import Iterator, List

import pytest

from sbatch_k8s.backends.local.supervisor import adopt_running
from tests.local.harness import LocalSlurm, job_id_of, shell_wait


@pytest.fixture
def small(tmp_path: Path) -> Iterator[LocalSlurm]:
    """A local cluster of 2 CPUs and 1000 MB of memory: easy to fill."""
    cluster = LocalSlurm(tmp_path, config="[local]\ncpus = 2\nmemory_mb = 1000\n")
    yield cluster
    cluster.cleanup()


def schedulers(slurm: LocalSlurm) -> List[int]:
    """Pids of this state directory's scheduler processes. A child the scheduler forked
    shows the scheduler's command line until it execs (long, on a loaded machine): not one."""
    found = [pid for pid in slurm.processes(with_server=False)
             if b"backends.local.scheduler" in _read(f"/proc/{pid}/cmdline")]
    return [pid for pid in found if _parent(pid) not in found]


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError:  # the process ended meanwhile
        return b""


def _parent(pid: int) -> int:
    """A process's parent pid (0 when it ended meanwhile)."""
    for line in _read(f"/proc/{pid}/status").splitlines():
        if line.startswith(b"PPid:"):
            return int(line.split()[1])
    return 0


def row(slurm: LocalSlurm, job: int) -> sqlite3.Row:
    conn = sqlite3.connect(slurm.state / "jobs.db")
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute("SELECT * FROM jobs WHERE job_id=?", (job,)).fetchone()
    finally:
        conn.close()


def submit(slurm: LocalSlurm, *args: str) -> int:
    done = slurm.run("sbatch", *args)
    assert done.returncode == 0, done.stderr
    return job_id_of(done.stdout)


def reason(slurm: LocalSlurm, job: int) -> str:
    return slurm.run("squeue", "-h", "-j", str(job), "-o", "%t %r").stdout.strip()


def test_held_jobs_cost_no_process(slurm: LocalSlurm) -> None:
    jobs = [submit(slurm, "-H", "-o", "/dev/null", "--wrap", "true") for _ in range(25)]
    slurm.wait_for(lambda: not slurm.processes(with_server=False), timeout=30)
    listing = slurm.run("squeue", "-h", "-o", "%i %t %r").stdout.splitlines()
    assert sorted(listing) == sorted(f"{job} PD JobHeldUser" for job in jobs)
    assert not slurm.processes(with_server=False)  # squeue found nothing to schedule: none started
    assert slurm.run("scontrol", "release", str(jobs[3])).returncode == 0
    slurm.wait_for(lambda: row(slurm, jobs[3])["state"] == "COMPLETED")
    # The scheduler the release started goes once only held jobs are left.
    slurm.wait_for(lambda: not slurm.processes(with_server=False), timeout=30)
    assert row(slurm, jobs[4])["state"] == "PENDING"


def test_jobs_wait_for_cpus_and_memory_with_one_scheduler(small: LocalSlurm) -> None:
    big = submit(small, "-c", "1", "--mem=800", "-o", "/dev/null", "--wrap", "sleep 60")
    small.wait_for(lambda: row(small, big)["state"] == "RUNNING")
    blocked = submit(small, "-c", "1", "--mem=400", "-o", "/dev/null", "--wrap", "true")
    fits = submit(small, "-c", "1", "--mem=100", "-o", "/dev/null", "--wrap", "sleep 60")
    # A job that does not fit does not hold back a smaller one behind it.
    small.wait_for(lambda: row(small, fits)["state"] == "RUNNING")
    small.wait_for(lambda: reason(small, blocked) == "PD Resources")
    cpu_blocked = submit(small, "-c", "1", "-o", "/dev/null", "--wrap", "true")
    small.wait_for(lambda: reason(small, cpu_blocked) == "PD Resources")
    assert len(schedulers(small)) == 1
    running_nodes = [p for p in small.processes(with_server=False) if p not in schedulers(small)]
    assert len(running_nodes) >= 2  # the two running jobs' node processes (and their tasks)
    assert small.run("scancel", str(big)).returncode == 0
    small.wait_for(lambda: row(small, blocked)["state"] == "COMPLETED")
    small.run("scancel", str(fits))
    small.wait_for(lambda: row(small, cpu_blocked)["state"] == "COMPLETED")


def test_a_job_that_can_never_fit_is_refused(small: LocalSlurm) -> None:
    done = small.run("sbatch", "-N2", "--mem=600", "--wrap", "true")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "sbatch: error: the job needs 1200 MB of memory in all; this machine offers 1000 MB "
        "(memory_mb = N in the [local] table of the configuration file ($SBATCHK8S_CONFIG, "
        "else ~/.config/sbatch-k8s/config.toml))",
        "sbatch: error: Batch job submission failed: Requested node configuration is not "
        "available"]


def test_killing_the_scheduler_loses_no_job_and_starts_none_twice(small: LocalSlurm) -> None:
    """The first job runs until the test has killed the scheduler and a new one has taken
    it over; the second, waiting for its CPUs meanwhile, runs after it, once."""
    go = small.work / "first.go"
    holding = shell_wait(f"[ -e {go} ]")
    first = submit(small, "-c", "2", "-o", "first.out", "--wrap",
                   f"echo started; {holding}; echo first")
    second = submit(small, "-c", "2", "-o", "second.out", "--wrap", "echo second")
    try:
        small.wait_for(lambda: (small.work / "first.out").exists(), timeout=60)
        started = row(small, first)["start_time"]
        # A new job reads "None" until the scheduler's next pass weighs it (Slurm's too).
        small.wait_for(lambda: reason(small, second) == "PD Resources", timeout=60)
        (killed,) = schedulers(small)
        os.kill(killed, signal.SIGKILL)
        small.wait_for(lambda: killed not in schedulers(small), timeout=60)
        # The next command starts a new scheduler; it takes the running job over.
        assert small.run("squeue").returncode == 0
        small.wait_for(lambda: len(schedulers(small)) == 1, timeout=60)
    finally:
        go.touch()
    small.wait_for(lambda: row(small, second)["state"] == "COMPLETED", timeout=60)
    done = row(small, first)
    assert (done["state"], done["exit_code"], done["start_time"]) == ("COMPLETED", 0, started)
    assert small.read("first.out") == "started\nfirst\n"
    assert small.read("second.out") == "second\n"
    assert row(small, second)["start_time"] >= done["end_time"]
    steps = small.run("sacct", "-j", str(first), "-n", "-P", "-o", "JobID,State").stdout
    assert f"{first}.batch|COMPLETED" in steps.splitlines()


def test_a_job_marked_running_but_never_launched_goes_back_to_pending(
        slurm: LocalSlurm) -> None:
    """The scheduler died between marking the job RUNNING and starting its nodes."""
    job = submit(slurm, "-H", "--wrap", "true")
    conn = sqlite3.connect(slurm.state / "jobs.db", isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute("UPDATE jobs SET state='RUNNING', hold=0, start_time=1 WHERE job_id=?", (job,))
    assert adopt_running(conn, slurm.env) == {}
    assert (row(slurm, job)["state"], row(slurm, job)["start_time"]) == ("PENDING", None)
    conn.close()
    slurm.run("squeue")  # there is work again: a scheduler starts and runs it
    slurm.wait_for(lambda: row(slurm, job)["state"] == "COMPLETED")


def test_begin_time_then_run(slurm: LocalSlurm) -> None:
    """A job waits for its begin time (still ahead when squeue looks, however slow the
    machine), then runs."""
    job = submit(slurm, "--begin=now+15", "-o", "/dev/null", "--wrap", "true")
    assert reason(slurm, job) == "PD BeginTime"
    slurm.wait_for(lambda: row(slurm, job)["state"] == "COMPLETED", timeout=60)
    assert row(slurm, job)["start_time"] >= row(slurm, job)["begin_time"]


def test_kill_on_invalid_dep_and_wait_woken_by_scancel(slurm: LocalSlurm) -> None:
    failing = submit(slurm, "-o", "/dev/null", "--wrap", "exit 3")
    killed = submit(slurm, "-d", f"afterok:{failing}", "--kill-on-invalid-dep=yes",
                    "--wrap", "true")
    kept = submit(slurm, "-d", f"afterok:{failing}", "--wrap", "true")
    slurm.wait_for(lambda: row(slurm, killed)["state"] == "CANCELLED")
    slurm.wait_for(lambda: row(slurm, kept)["reason"] == "DependencyNeverSatisfied")
    assert row(slurm, kept)["state"] == "PENDING"
    waiting = slurm.start("sbatch", "--wait", "-d", f"afterok:{failing}", "--wrap", "true")
    slurm.wait_for(lambda: len(slurm.run("squeue", "-h").stdout.splitlines()) == 2)
    begun = time.time()
    waited = job_id_of(waiting.stdout.readline())
    assert slurm.run("scancel", str(waited), str(kept)).returncode == 0
    assert waiting.wait(30) == 1
    assert time.time() - begun < 30


def test_array_limit_with_one_scheduler(slurm: LocalSlurm) -> None:
    """``%2``: the elements beyond two wait (``JobArrayTaskLimit``, one scheduler deciding)
    while two run; the elements run until the test has seen that, and never more than two
    at once."""
    go = slurm.work / "go"
    base = submit(slurm, "--array=0-5%2", "-o", "/dev/null", "--wrap",
                  shell_wait(f"[ -e {go} ]"))
    try:
        slurm.wait_for(lambda: "JobArrayTaskLimit" in reason(slurm, base), timeout=60)
        assert len(schedulers(slurm)) == 1
    finally:
        go.touch()
    slurm.wait_for(lambda: not slurm.run("squeue", "-h").stdout, timeout=120)
    conn = sqlite3.connect(slurm.state / "jobs.db")
    spans = conn.execute("SELECT start_time, end_time FROM jobs WHERE array_job_id=?",
                         (base,)).fetchall()
    conn.close()
    assert len(spans) == 6
    for start, _ in spans:  # never more than 2 elements at once
        assert sum(1 for s, e in spans if s <= start < e) <= 2


def test_scancel_right_as_a_job_starts_cancels_it(slurm: LocalSlurm) -> None:
    """A job just marked RUNNING whose node 0 does not listen yet is cancelled all the same
    (scancel asks again while node 0 starts; it answered 'finished' and the job ran on)."""
    job = submit(slurm, "-o", "late.out", "--wrap", "sleep 20; echo ran")
    slurm.wait_for(lambda: row(slurm, job)["state"] == "RUNNING", timeout=30, interval=0.005)
    done = slurm.run("scancel", str(job))
    assert (done.returncode, done.stderr) == (0, "")
    slurm.wait_for(lambda: row(slurm, job)["state"] == "CANCELLED", timeout=30)
    assert "ran" not in slurm.read("late.out")
