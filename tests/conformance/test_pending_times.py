"""The times of pending jobs: ``scontrol show job`` (SubmitTime, EligibleTime, StartTime,
EndTime), ``squeue -O`` (SubmitTime, StartTime, EligibleTime, EndTime) and ``sacct -X``
(Submit, Start, Eligible, End), for a job with ``--begin`` ahead (and ``-t 5``), a held job,
a held job with ``--begin``, a job waiting for a dependency (on the held job), one with a
dependency and ``--begin``, and a job ``scontrol requeue`` put back to wait (``-t 10``).

Each time is compared as its offset in seconds from the job's submit time (``+3600``), or
as the word the command prints for none (``Unknown``, ``N/A``), so both sides must agree
to the second on what a pending job shows: real Slurm shows a begin time ahead as the
start time, whatever else the job waits for, and ``Unknown``/``N/A`` otherwise; the end
is that start plus a finite limit.
"""

from __future__ import annotations

import datetime
import time
from typing import Dict, List, Sequence

import pytest

from tests.conformance.compare import diff_text, parallel, report, value
from tests.conformance.sides import OurSlurm, RealSlurm, Side

STAMP = "%Y-%m-%dT%H:%M:%S"
#: job name -> sbatch options ({held}: the held job's id)
JOBS: Dict[str, Sequence[str]] = {
    "begin": ["--begin=now+1hour", "-t", "5"],
    "held": ["-H"],
    "heldbegin": ["-H", "--begin=now+1hour"],
    "dependent": ["-d", "afterok:{held}"],
    "depbegin": ["-d", "afterok:{held}", "--begin=now+1hour", "-t", "2"],
}
WAIT_S = 60.0


def _offset(text: str, base: str) -> str:
    """``+N`` seconds after ``base``, or the text itself when it is no time."""
    try:
        moment = datetime.datetime.strptime(text, STAMP)
    except ValueError:
        return text
    return f"{int((moment - datetime.datetime.strptime(base, STAMP)).total_seconds()):+d}"


def _submit(side: Side, name: str, args: Sequence[str], ids: Dict[str, int],
            body: str = "true") -> int:
    cwd = side.case_dir("pending-times")
    (cwd / f"{name}.sh").write_text(f"#!/bin/sh\n{body}\n")
    done = side.run("sbatch", "--parsable", "-J", name, "-o", "/dev/null",
                    *[a.format(**ids) for a in args], f"{name}.sh", cwd=cwd)
    assert done.stdout.strip().isdigit(), f"{side.kind}: sbatch {name}: {done.stderr}"
    return int(done.stdout.strip())


def _shown(side: Side, ids: Dict[str, int]) -> str:
    """Each job's times, one line per job and command, as offsets from its submission."""
    lines: List[str] = []
    for name, job_id in ids.items():
        fields = dict(item.split("=", 1) for item in
                      side.run("scontrol", "show", "job", str(job_id)).stdout.split()
                      if "=" in item)
        base = fields.get("SubmitTime", "")
        lines.append(f"{name} scontrol " + " ".join(
            f"{key}={_offset(fields.get(key, '?'), base)}"
            for key in ("JobState", "EligibleTime", "StartTime", "EndTime")))
        queued = side.run("squeue", "-h", "-j", str(job_id), "-O",
                          "SubmitTime,StartTime,EligibleTime,EndTime").stdout.split()
        lines.append(f"{name} squeue " + " ".join(_offset(t, queued[0]) for t in queued[1:]))
        accounted = side.run("sacct", "-X", "-n", "-P", "-j", str(job_id), "-o",
                             "Submit,Start,Eligible,End").stdout.strip().split("|")
        lines.append(f"{name} sacct " + " ".join(_offset(t, accounted[0])
                                                 for t in accounted[1:]))
    return "".join(line + "\n" for line in lines)


def _wait_field(side: Side, job_id: int, name: str, wanted: str) -> None:
    deadline = time.time() + WAIT_S
    while side.job_field(job_id, name) != wanted:
        if time.time() > deadline:
            raise AssertionError(f"{side.kind}: job {job_id} {name} not {wanted}")
        time.sleep(0.2)


def _wait_accounted(side: Side, job_id: int, state: str) -> None:
    """Until accounting has the job in ``state`` (slurmdbd lags slurmctld)."""
    deadline = time.time() + WAIT_S
    while time.time() < deadline:
        rows = side.run("sacct", "-X", "-n", "-P", "-j", str(job_id), "-o", "State").stdout
        if rows.split() == [state]:
            return
        time.sleep(0.2)


def run_side(side: Side) -> str:
    ids: Dict[str, int] = {}
    try:
        for name, args in JOBS.items():
            ids[name] = _submit(side, name, args, ids)
        requeued = _submit(side, "requeued", ["-t", "10"], ids, body="sleep 300")
        _wait_field(side, requeued, "JobState", "RUNNING")
        assert side.run("scontrol", "requeue", str(requeued)).returncode == 0
        _wait_field(side, requeued, "Reason", "BeginTime")
        ids["requeued"] = requeued
        for job_id in ids.values():
            _wait_accounted(side, job_id, "PENDING")
        return _shown(side, ids)
    finally:
        if ids:
            side.run("scancel", *[str(i) for i in ids.values()])


@pytest.fixture(scope="module")
def shown(real: RealSlurm, ours: OurSlurm) -> Dict[str, str]:
    results = parallel({"real": lambda: run_side(real), "ours": lambda: run_side(ours)})
    return {k: value(v) for k, v in results.items()}


def _requeue_second(text: str) -> str:
    """Real slurmctld sets a requeued job's begin time at the requeue (+121 s) and its new
    submit time as it processes the run's end, up to a second later: +120 or +121 (and the
    end 600 s on); ours are set together (+121)."""
    return "".join(line.replace("+120", "+121").replace("+720", "+721")
                   if line.startswith("requeued ") else line
                   for line in text.splitlines(keepends=True))


def test_pending_times(shown: Dict[str, str]) -> None:
    report(diff_text("pending-times", "times of pending jobs", _requeue_second(shown["real"]),
                     shown["ours"]))
