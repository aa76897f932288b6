"""``scontrol requeue`` and ``requeuehold`` on the local backend, as Slurm 22.05 does them.

What real slurmctld showed (``scontrol requeue`` of a running job): the run is killed and
kept by sacct as a ``REQUEUED`` row (``sacct -D``; plain ``sacct`` shows the current run
only), the job is ``PD (BeginTime)`` with ``Restarts=1``, its submit time the requeue time
and its eligible time 121 s later, then runs under the same id with
``SLURM_RESTART_COUNT=1``. ``requeuehold`` leaves it ``job requeued in held state`` (priority
0) until ``scontrol release``. The delay is shortened here with ``SBATCHK8S_REQUEUE_DELAY``.
"""

from __future__ import annotations

import re
from typing import List

from tests.local.harness import LocalSlurm, shell_wait

#: Each run appends its restart count to a file, then waits for the test's go.
RUNS = r"""#!/bin/sh
#SBATCH -J again -o again-%j.out
echo "run ${SLURM_RESTART_COUNT:-unset} of $SLURM_JOB_ID" >> runs.txt
echo "restart ${SLURM_RESTART_COUNT:-unset}"
while [ ! -e go-${SLURM_RESTART_COUNT:-0} ]; do sleep 0.1; done
"""
WAIT_S = 60.0


def _runs(slurm: LocalSlurm) -> List[str]:
    try:
        return slurm.read("runs.txt").splitlines()
    except FileNotFoundError:
        return []


def _squeue(slurm: LocalSlurm, job: str) -> str:
    return slurm.run("squeue", "-h", "-j", job, "-o", "%i %T %r").stdout.strip()


def _sacct(slurm: LocalSlurm, job: str, *args: str) -> List[str]:
    return slurm.run("sacct", "-j", job, "-n", "-P", "-o", "JobID,State,ExitCode",
                     *args).stdout.splitlines()


def test_requeue_of_a_running_job(slurm: LocalSlurm) -> None:
    slurm.env["SBATCHK8S_REQUEUE_DELAY"] = "2"
    slurm.script("again.sh", RUNS)
    job = slurm.run("sbatch", "--parsable", "again.sh").stdout.strip()
    slurm.wait_for(lambda: _runs(slurm) == [f"run unset of {job}"], WAIT_S)

    done = slurm.run("scontrol", "requeue", job)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    slurm.wait_for(lambda: _squeue(slurm, job) == f"{job} PENDING BeginTime", WAIT_S)
    shown = slurm.run("scontrol", "show", "job", job).stdout
    assert "JobState=PENDING Reason=BeginTime" in shown and "Requeue=1 Restarts=1" in shown
    # The earlier run, as slurmdbd keeps it: only with --duplicates.
    assert _sacct(slurm, job, "-X") == [f"{job}|PENDING|0:0"]
    assert _sacct(slurm, job, "-D") == [f"{job}|REQUEUED|0:0", f"{job}.batch|CANCELLED|0:15",
                                        f"{job}.extern|COMPLETED|0:0", f"{job}|PENDING|0:0"]

    slurm.wait_for(lambda: _runs(slurm)[1:] == [f"run 1 of {job}"], WAIT_S)
    assert _squeue(slurm, job) == f"{job} RUNNING None"
    (slurm.work / "go-1").write_text("")
    slurm.wait_for(lambda: _squeue(slurm, job) == "", WAIT_S)
    assert slurm.read(f"again-{job}.out") == "restart 1\n"  # truncated by the new run
    assert _sacct(slurm, job, "-D", "-X") == [f"{job}|REQUEUED|0:0", f"{job}|COMPLETED|0:0"]
    assert "Restarts=1" in slurm.run("scontrol", "show", "job", job).stdout


def test_a_job_being_requeued_shows_completing(slurm: LocalSlurm) -> None:
    """Between ``scontrol requeue`` and its run's end (a script that ignores SIGTERM lasts
    KillWait), real slurmctld shows the job ``CG COMPLETING`` (reason None) with its restart
    count already raised, and sacct the run ``REQUEUED``. KillWait is long here (a loaded
    machine runs the test's commands slowly); the script ends by itself once they ran."""
    slurm.env["SBATCHK8S_REQUEUE_DELAY"] = "600"
    slurm.env["SBATCHK8S_KILL_WAIT"] = "60"
    go = slurm.work / "go"
    holding = shell_wait(f"[ -e {go} ]")
    job = slurm.run("sbatch", "--parsable", "-o", "/dev/null", "--wrap",
                    f"trap '' TERM; echo up > up.txt; {holding}").stdout.strip()
    slurm.wait_for(lambda: (slurm.work / "up.txt").exists(), WAIT_S)
    try:
        assert slurm.run("scontrol", "requeue", job).returncode == 0
        assert slurm.run("squeue", "-h", "-j", job, "-o", "%i %t %T %r").stdout.split() == \
            [job, "CG", "COMPLETING", "None"]
        shown = slurm.run("scontrol", "show", "job", job).stdout
        assert "JobState=COMPLETING Reason=None" in shown and "Requeue=1 Restarts=1" in shown
        assert _sacct(slurm, job, "-X") == [f"{job}|REQUEUED|0:0"]
        assert slurm.run("squeue", "-h", "-j", job, "-t", "R").stdout == ""
    finally:
        go.touch()
    slurm.wait_for(lambda: _squeue(slurm, job) == f"{job} PENDING BeginTime", 120)
    assert "Restarts=1" in slurm.run("scontrol", "show", "job", job).stdout
    slurm.run("scancel", job)


def test_requeuehold_then_release_and_requeue_of_an_ended_job(slurm: LocalSlurm) -> None:
    slurm.env["SBATCHK8S_REQUEUE_DELAY"] = "0"
    slurm.script("again.sh", RUNS)
    job = slurm.run("sbatch", "--parsable", "again.sh").stdout.strip()
    slurm.wait_for(lambda: len(_runs(slurm)) == 1, WAIT_S)

    assert slurm.run("scontrol", "requeuehold", job).returncode == 0
    held = f"{job} PENDING job requeued in held state"
    slurm.wait_for(lambda: _squeue(slurm, job) == held, WAIT_S)
    shown = slurm.run("scontrol", "show", "job", job).stdout
    assert "Priority=0 " in shown and "Reason=job_requeued_in_held_state" in shown, shown
    assert len(_runs(slurm)) == 1 and _squeue(slurm, job) == held  # stays held
    # slurmstepd's line says why the run was killed (the output file is the next run's
    # once it starts).
    killed = slurm.read(f"again-{job}.out").splitlines()
    assert killed[0] == "restart unset" and re.fullmatch(
        rf"slurmstepd: error: \*\*\* JOB {job} ON \S+ CANCELLED AT \S+ "
        r"DUE TO JOB REQUEUE \*\*\*", killed[1]), killed

    assert slurm.run("scontrol", "release", job).returncode == 0
    slurm.wait_for(lambda: _runs(slurm)[1:] == [f"run 1 of {job}"], WAIT_S)
    (slurm.work / "go-1").write_text("")
    slurm.wait_for(lambda: _squeue(slurm, job) == "", WAIT_S)

    # An ended job (squeue still shows it, within MinJobAge) is requeued as it is, its exit
    # code kept on the earlier run.
    assert slurm.run("scontrol", "requeue", job).returncode == 0
    slurm.wait_for(lambda: _runs(slurm)[2:] == [f"run 2 of {job}"], WAIT_S)
    (slurm.work / "go-2").write_text("")
    slurm.wait_for(lambda: _squeue(slurm, job) == "", WAIT_S)
    assert _sacct(slurm, job, "-D", "-X") == [
        f"{job}|REQUEUED|0:0", f"{job}|REQUEUED|0:0", f"{job}|COMPLETED|0:0"]
    assert "Restarts=2" in slurm.run("scontrol", "show", "job", job).stdout


def test_requeue_refusals(slurm: LocalSlurm) -> None:
    """Slurm's lines (stderr, exit 1) for what cannot be requeued."""
    held = slurm.run("sbatch", "--parsable", "-H", "--wrap", "true").stdout.strip()
    never = slurm.run("sbatch", "--parsable", "--no-requeue", "--wrap",
                      "sleep 300").stdout.strip()
    slurm.wait_for(lambda: _squeue(slurm, never) == f"{never} RUNNING None", WAIT_S)
    done = slurm.run("scontrol", "requeue", f"{held},{never}", "999999", "abc", f"{never}_1")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines() == [
        f"Job is pending execution for job {held}",
        f"Requested operation is presently disabled for job {never}",
        "Invalid job id specified for job 999999",
        "Invalid job id specified for job abc",
        f"{never}_1: Invalid job id specified"]
    hold = slurm.run("scontrol", "requeuehold", never)
    assert (hold.returncode, hold.stderr) == (
        1, f"Requested operation is presently disabled for job {never}\n")
    bare = slurm.run("scontrol", "requeue")
    assert (bare.returncode, bare.stderr) == (1, "too few arguments for keyword:requeue\n")
    slurm.run("scancel", held, never)


def test_requeue_of_array_elements(slurm: LocalSlurm) -> None:
    """One element, then the whole array: each element answers for itself, in Slurm's
    ``<array>_<tasks>: <error>`` lines when any is refused."""
    slurm.env["SBATCHK8S_REQUEUE_DELAY"] = "300"
    array = slurm.run("sbatch", "--parsable", "--array=1-3", "--wrap",
                      "sleep 300").stdout.strip()
    running = [f"{array}_{t} RUNNING None" for t in (1, 2, 3)]
    slurm.wait_for(lambda: sorted(_squeue(slurm, array).splitlines()) == running, WAIT_S)
    assert slurm.run("scontrol", "requeue", f"{array}_2").returncode == 0
    slurm.wait_for(lambda: f"{array}_2 PENDING BeginTime" in _squeue(slurm, array), WAIT_S)
    # The requeued element keeps its own line (squeue does not fold it back).
    assert sorted(_squeue(slurm, array).splitlines()) == [
        f"{array}_1 RUNNING None", f"{array}_2 PENDING BeginTime", f"{array}_3 RUNNING None"]
    whole = slurm.run("scontrol", "requeue", array)
    assert whole.returncode == 1
    assert whole.stderr.splitlines() == [f"{array}_1,3: No error",
                                         f"{array}_2: Job is pending execution"]
    assert slurm.run("scontrol", "requeue", f"{array}_9").stderr == \
        f"Invalid job id specified for job {array}_9\n"
    slurm.wait_for(lambda: sorted(_squeue(slurm, array).splitlines()) == [
        f"{array}_{t} PENDING BeginTime" for t in (1, 2, 3)], WAIT_S)
    slurm.run("scancel", array)
