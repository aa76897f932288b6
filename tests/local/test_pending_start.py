"""A pending job's start and eligible times on the local backend, as Slurm 22.05 shows them.

Real slurmctld (recorded in ``tests/pod_side/formats/test_pending_start.py``): a job with a
begin time ahead — ``--begin``, or the 121 s delay of ``scontrol requeue`` — shows it as
``StartTime=`` / squeue ``%S`` and as ``EligibleTime=``, held or waiting for a dependency
alike, ``EndTime=`` that plus a finite limit; a held or dependent job without one shows
``Unknown``/``N/A`` for both; ``sacct`` shows ``Start`` ``Unknown`` while pending and the
eligible time as ``Eligible``.
"""

from __future__ import annotations

import datetime
from typing import Dict

from tests.local.harness import LocalSlurm

WAIT_S = 60.0


def _submit(slurm: LocalSlurm, *args: str) -> str:
    done = slurm.run("sbatch", "--parsable", "-o", "/dev/null", *args)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _fields(slurm: LocalSlurm, job: str) -> Dict[str, str]:
    """``scontrol show job``'s fields by name."""
    shown = slurm.run("scontrol", "show", "job", job).stdout
    return dict(item.split("=", 1) for item in shown.split() if "=" in item)


def _plus(stamp: str, seconds: int) -> str:
    moment = datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S")
    return (moment + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S")


def test_begin_held_and_dependent_jobs(slurm: LocalSlurm) -> None:
    begin = _submit(slurm, "--begin=now+1hour", "-t", "5", "--wrap", "true")
    held = _submit(slurm, "-H", "--wrap", "true")
    held_begin = _submit(slurm, "-H", "--begin=now+1hour", "--wrap", "true")
    dependent = _submit(slurm, "-d", f"afterok:{held}", "--wrap", "true")

    shown = _fields(slurm, begin)
    assert shown["StartTime"] == shown["EligibleTime"] == _plus(shown["SubmitTime"], 3600)
    assert shown["EndTime"] == _plus(shown["StartTime"], 300)
    for job in (held, dependent):
        shown = _fields(slurm, job)
        assert (shown["StartTime"], shown["EligibleTime"], shown["EndTime"]) == \
            ("Unknown", "Unknown", "Unknown")
    shown = _fields(slurm, held_begin)
    assert shown["Reason"] == "JobHeldUser"
    assert shown["StartTime"] == shown["EligibleTime"] == _plus(shown["SubmitTime"], 3600)
    assert shown["EndTime"] == "Unknown"  # no --time: the partition's (unlimited)

    listed = slurm.run("squeue", "-h", "-o", "%i %S %T %r").stdout.splitlines()
    starts = {line.split()[0]: line.split()[1] for line in listed}
    assert starts[held] == starts[dependent] == "N/A"
    assert starts[begin] == _fields(slurm, begin)["StartTime"]
    assert starts[held_begin] == _fields(slurm, held_begin)["StartTime"]

    accounted = slurm.run("sacct", "-X", "-n", "-P", "-o", "JobID,Start,Eligible").stdout
    rows = {line.split("|")[0]: line.split("|")[1:] for line in accounted.splitlines()}
    assert rows[begin] == ["Unknown", _fields(slurm, begin)["EligibleTime"]]
    assert rows[held_begin] == ["Unknown", _fields(slurm, held_begin)["EligibleTime"]]
    assert rows[held] == rows[dependent] == ["Unknown", "Unknown"]

    # Released, the held job still waits for its begin time, which it keeps showing.
    assert slurm.run("scontrol", "release", held_begin).returncode == 0
    shown = _fields(slurm, held_begin)
    assert shown["StartTime"] == shown["EligibleTime"] == _plus(shown["SubmitTime"], 3600)

    # The dependency met, the dependent job runs: eligible from then on.
    assert slurm.run("scontrol", "release", held).returncode == 0
    slurm.wait_for(lambda: _fields(slurm, dependent)["JobState"] == "COMPLETED", WAIT_S)
    shown = _fields(slurm, dependent)
    assert shown["EligibleTime"] != "Unknown"
    assert shown["EligibleTime"] <= shown["StartTime"] != "Unknown"
    slurm.run("scancel", begin, held_begin)


def test_requeued_job_shows_its_begin_time(slurm: LocalSlurm) -> None:
    """``scontrol requeue``: ``PD (BeginTime)`` for 121 s, its start that moment."""
    job = _submit(slurm, "-t", "10", "--wrap", "sleep 300")
    slurm.wait_for(lambda: _fields(slurm, job)["JobState"] == "RUNNING", WAIT_S)
    assert slurm.run("scontrol", "requeue", job).returncode == 0
    slurm.wait_for(lambda: _fields(slurm, job)["Reason"] == "BeginTime", WAIT_S)
    shown = _fields(slurm, job)
    assert shown["JobState"] == "PENDING" and shown["Restarts"] == "1"
    assert shown["StartTime"] == shown["EligibleTime"] == _plus(shown["SubmitTime"], 121)
    assert shown["EndTime"] == _plus(shown["StartTime"], 600)
    listed = slurm.run("squeue", "-h", "-j", job, "-O", "StartTime,EligibleTime").stdout.split()
    assert listed == [shown["StartTime"], shown["EligibleTime"]]
    slurm.run("scancel", job)


def test_a_dependent_job_with_a_begin_time_waits_for_its_dependency_first(
        slurm: LocalSlurm) -> None:
    """Real slurmctld shows ``Dependency`` (not ``BeginTime``) for a job that has both until
    the dependency is met, then ``BeginTime`` until then; its begin time is its start and
    eligible time throughout."""
    held = _submit(slurm, "-H", "--wrap", "true")
    both = _submit(slurm, "-d", f"afterok:{held}", "--begin=now+1hour", "--wrap", "true")
    slurm.wait_for(lambda: _fields(slurm, both)["Reason"] == "Dependency", WAIT_S)
    shown = _fields(slurm, both)
    assert shown["StartTime"] == shown["EligibleTime"] == _plus(shown["SubmitTime"], 3600)
    listed = slurm.run("squeue", "-h", "-j", both, "-o", "%T %r").stdout.split()
    assert listed == ["PENDING", "Dependency"]
    assert slurm.run("scontrol", "release", held).returncode == 0
    slurm.wait_for(lambda: _fields(slurm, both)["Reason"] == "BeginTime", WAIT_S)
    assert _fields(slurm, both)["EligibleTime"] == shown["EligibleTime"]
    slurm.run("scancel", both)
