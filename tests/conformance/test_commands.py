"""squeue, sacct, sinfo, scontrol, scancel: default outputs (column layout, headers, field
names, value formats) for a running job and for finished jobs (COMPLETED, FAILED 3:0,
FAILED by a signal, FAILED 143 — sacct's 15:0 —, CANCELLED by uid), plus hostlist handling
and the answers for unknown jobs.

The jobs are the same on both sides (same script names, options and job names); values that
legitimately differ are normalised (ids, nodes, times, durations, the working directory,
priorities). TIMEOUT is not covered: real Slurm checks limits every 30 s, too slow here.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import pytest

from tests.conformance.compare import diff_text, parallel, report, value
from tests.conformance.normalise import Normaliser, job_ids_in
from tests.conformance.sides import OurSlurm, RealSlurm, Side

UNKNOWN_JOB = "99999999"
SINFO_STATES = r"(alloc|idle|mix|comp|drain|drng|down|resv|maint)\*?"


@dataclass
class Jobs:
    """One side's jobs: name -> id, and their node lists."""

    side: Side
    ids: Dict[str, int]
    nodes: Dict[str, List[str]]
    captured: Dict[str, Tuple[str, str, int]]   # queries taken while the runner ran


#: finished jobs: name -> (script body, sbatch options)
FINISHED: Dict[str, Tuple[str, Sequence[str]]] = {
    "done": ("true", ["-N2"]),
    "fails": ("exit 3", []),
    "killed": ("kill -9 $$", []),
    "norequeue": ("true", ["--no-requeue"]),
    "exit143": ("exit 143", []),
}

#: queries taken while the "runner" job runs (before it is cancelled)
RUNNING_QUERIES: Dict[str, Sequence[str]] = {
    "squeue-running": ["squeue", "-j", "{runner}"],
    "squeue-running-nodes": ["squeue", "-j", "{runner}", "-h", "-o", "%N"],
    "squeue-running-long": ["squeue", "-j", "{runner}", "-l"],
    "squeue-running-format": ["squeue", "-j", "{runner}", "-o", "%i %j %T %r %D %C %P"],
    "scontrol-running": ["scontrol", "show", "job", "{runner}"],
    "sacct-running": ["sacct", "-j", "{runner}"],
    "scancel-runner": ["scancel", "{runner}"],
}

#: queries after every job ended
FINISHED_QUERIES: Dict[str, Sequence[str]] = {
    **{f"sacct-{name}": ["sacct", "-j", f"{{{name}}}"]
       for name in ("done", "fails", "killed", "runner", "exit143")},
    **{f"sacct-parsable2-{name}": ["sacct", "-j", f"{{{name}}}", "--parsable2",
                                   "-o", "JobID,State,ExitCode"]
       for name in ("done", "fails", "killed", "runner", "exit143")},
    "sacct-parsable-all": ["sacct", "-j", "{done},{fails},{killed},{runner}", "--parsable",
                           "-X", "-o", "JobID,JobName,State,ExitCode,NNodes,NodeList"],
    "sacct-state-width": ["sacct", "-j", "{runner}", "-X", "-o", "JobID,State%25,ExitCode"],
    # DerivedExitCode counts srun steps only: the "fails" script's own exit 3 reads 0:0.
    "sacct-derived": ["sacct", "-j", "{done},{fails},{killed},{exit143}", "-X", "--parsable2",
                      "-o", "JobID,State,ExitCode,DerivedExitCode"],
    **{f"scontrol-{name}": ["scontrol", "show", "job", f"{{{name}}}"]
       for name in ("done", "fails", "killed", "runner", "exit143")},
    "squeue-finished": ["squeue", "-j", "{done}"],
    "squeue-finished-all-states": ["squeue", "-j", "{done},{fails},{killed},{runner}",
                                   "-t", "all"],
    "scancel-finished": ["scancel", "{done}"],
    "scontrol-requeue-no-requeue": ["scontrol", "requeue", "{norequeue}"],
}

#: queries that need no job
STATIC_QUERIES: Dict[str, Sequence[str]] = {
    "sinfo": ["sinfo"],
    "sinfo-summarize": ["sinfo", "-s"],
    "hostnames-ranges": ["scontrol", "show", "hostnames", "n[1-3],n5"],
    "hostnames-product": ["scontrol", "show", "hostnames", "a[1-2]-b[3-4]"],
    "hostnames-padded": ["scontrol", "show", "hostnames", "gpu[008-011]"],
    "hostnames-empty": ["scontrol", "show", "hostnames"],
    "hostlist-sorted": ["scontrol", "show", "hostlist", "n1,n2,n3"],
    "hostlist-unsorted": ["scontrol", "show", "hostlist", "n3,n1,n2,n1"],
    "hostlistsorted": ["scontrol", "show", "hostlistsorted", "n3,n1,n2,n1"],
    "hostlist-mixed": ["scontrol", "show", "hostlist", "n01,n02,n1,n2,login"],
    "squeue-unknown": ["squeue", "-j", UNKNOWN_JOB],
    "squeue-unknown-noheader": ["squeue", "-h", "-j", UNKNOWN_JOB],
    "squeue-bad-id": ["squeue", "-j", "abc"],
    "scontrol-unknown": ["scontrol", "show", "job", UNKNOWN_JOB],
    "sacct-unknown": ["sacct", "-j", UNKNOWN_JOB],
    "sacct-unknown-noheader": ["sacct", "-X", "-n", "-j", UNKNOWN_JOB],
    "scancel-unknown": ["scancel", UNKNOWN_JOB],
    "scancel-unknown-verbose": ["scancel", "-v", UNKNOWN_JOB],
    "scancel-bad-id": ["scancel", "abc"],
    "scancel-nothing": ["scancel"],
    "scontrol-requeue-unknown": ["scontrol", "requeue", UNKNOWN_JOB],
    "scontrol-requeue-bad-id": ["scontrol", "requeue", "abc"],
    "scontrol-requeuehold-nothing": ["scontrol", "requeuehold"],
    "squeue-bad-option": ["squeue", "--bogus"],
    "sacct-bad-option": ["sacct", "--bogus"],
}
#: these print host names that are not the sides' node names: no host normalisation
LITERAL_HOSTS = {k for k in STATIC_QUERIES if k.startswith(("hostnames", "hostlist"))}

#: the running job's body: the shell replaced by sleep, so that scancel's SIGTERM ends the
#: batch step itself (CANCELLED 0:15). With `sleep 60` under sh, real Slurm signals the two
#: processes one after the other, and when sleep dies first the shell exits 143 on its own
#: (FAILED, sacct 15:0) — a race on real Slurm's side, not a difference
RUNNER = "exec sleep 60"


def submit(side: Side, name: str, body: str, args: Sequence[str]) -> int:
    cwd = side.case_dir("commands")
    (cwd / f"{name}.sh").write_text(f"#!/bin/sh\n{body}\n")
    done = side.run("sbatch", "--parsable", "-J", name, "-o", f"{name}.out", *args,
                    f"{name}.sh", cwd=cwd)
    assert done.stdout.strip().isdigit(), f"{side.kind}: sbatch {name}: {done.stderr}"
    return int(done.stdout.strip())


def wait_running(side: Side, job_id: int, timeout: float = 30) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if side.job_states(job_id) == ["RUNNING"]:
            return
        time.sleep(0.1)
    raise AssertionError(f"{side.kind}: job {job_id} not RUNNING within {timeout} s")


def wait_sacct_running(side: Side, job_id: int, timeout: float = 10) -> None:
    """Until accounting shows the job RUNNING with its real name (not the placeholder)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        rows = side.run("sacct", "-n", "-P", "-X", "-j", str(job_id),
                        "-o", "JobName,State,Partition").stdout.split("|")
        if len(rows) == 3 and rows[0] == "runner" and rows[1] == "RUNNING" and rows[2].strip():
            return
        time.sleep(0.1)


def query(side: Side, args: Sequence[str], ids: Dict[str, int]) -> Tuple[str, str, int]:
    words = [a.format(**ids) for a in args]
    done = side.run(words[0], *words[1:], cwd=side.case_dir("commands"))
    return done.stdout, done.stderr, done.returncode


def run_side(side: Side) -> Jobs:
    ids = {name: submit(side, name, body, args) for name, (body, args) in FINISHED.items()}
    ids["runner"] = submit(side, "runner", RUNNER, ["-N2"])
    wait_running(side, ids["runner"])
    time.sleep(1.2)         # a non-zero elapsed time, as users see it
    wait_sacct_running(side, ids["runner"])
    captured = {}
    for name, args in RUNNING_QUERIES.items():
        captured[name] = query(side, args, ids)
    for job_id in ids.values():
        side.wait_done(job_id)
    for job_id in ids.values():
        side.wait_sacct(job_id)
    nodes = {name: side.expand(side.job_field(job_id, "NodeList"))
             for name, job_id in ids.items()}
    for name, args in FINISHED_QUERIES.items():
        captured[name] = query(side, args, ids)
    for name, args in STATIC_QUERIES.items():
        captured[name] = query(side, args, ids)
    return Jobs(side, ids, nodes, captured)


@pytest.fixture(scope="module")
def sides(real: RealSlurm, ours: OurSlurm) -> Dict[str, Jobs]:
    results = parallel({"real": lambda: run_side(real), "ours": lambda: run_side(ours)})
    return {k: value(v) for k, v in results.items()}


def job_of(case: str) -> Optional[str]:
    for name in ("runner", "done", "fails", "killed", "exit143"):
        if case.endswith(name) or "running" in case and name == "runner":
            return name
    return None


def normalise(jobs: Jobs, other: Jobs, case: str, text: str) -> str:
    """Ids of all four jobs (of both sides), the nodes of the job the case (or, listing
    several jobs, the line) is about, times, durations, priorities; scontrol's scheduling
    artefacts of real Slurm."""
    if "," in command_line(case) and "{" in command_line(case):
        return "".join(normalise_line(jobs, other, case, line)
                       for line in text.splitlines(keepends=True))
    name = job_of(case)
    return normalise_for(jobs, other, case, text, jobs.nodes.get(name, []) if name else [])


def normalise_line(jobs: Jobs, other: Jobs, case: str, line: str) -> str:
    """One line of a several-job listing, with the nodes of the job it names first (a later
    number may be a count that equals another job's id)."""
    names = {job_id: name for name, job_id in jobs.ids.items()}
    named = [names[i] for i in job_ids_in(line) if i in names]
    return normalise_for(jobs, other, case, line, jobs.nodes[named[0]] if named else [])


def placeholders(jobs: Jobs, case: str) -> Dict[int, str]:
    """The four jobs' ids → ``<name>``; none for a query about no job (``sinfo``: its node
    counts are no ids, whatever the ids are)."""
    if case in STATIC_QUERIES:
        return {}
    return {job_id: f"<{n}>" for n, job_id in jobs.ids.items()}


def normalise_for(jobs: Jobs, other: Jobs, case: str, text: str, nodes: List[str]) -> str:
    norm = Normaliser(jobs.side, placeholders(jobs, case), nodes,
                      hosts=case not in LITERAL_HOSTS, other_jobs=placeholders(other, case))
    if jobs.side.kind == "real" and "Scheduler=Main" not in text:
        # the backfill scheduler (not the main one) starts a job with no time limit as if
        # it had 365 days (scontrol TimeLimit=365-00:00:00, EndTime=start+1 year, squeue -l
        # TIME_LIMIT 365-00:00 or 365-00:00:00); which scheduler starts a job is timing
        text = text.replace("TimeLimit=365-00:00:00", "TimeLimit=UNLIMITED")
        text = re.sub(r"(JobState=RUNNING.*?EndTime=)\S+", r"\1Unknown", text, flags=re.S)
        text = text.replace("Scheduler=Backfill", "Scheduler=Main")
        if case == "squeue-running-long":
            text = re.sub(r" 365-00:00(:00)? ", " UNLIMITED ", text)
    text = norm.text(text)
    text = re.sub(r"\b(Priority|RunTime|SecsPreSuspend)=\S+",
                  lambda m: re.sub(r"\d", "#", m.group(0)), text)
    if case.startswith("squeue"):     # TIME (used); sacct's default format has no times
        text = norm.elapsed(text)
    if case.startswith("sinfo"):
        # node states and A/I/O/T counts depend on what else runs (other users' jobs)
        text = re.sub(rf" +{SINFO_STATES}(?= )", lambda m: " " * (len(m.group(0)) - 4)
                      + "<st>", text)
        text = re.sub(r"\b\d+/\d+/\d+/\d+\b", lambda m: re.sub(r"\d+", "#", m.group(0)),
                      text)
    return text


ALL = list(RUNNING_QUERIES) + list(FINISHED_QUERIES) + list(STATIC_QUERIES)


def command_line(case: str) -> str:
    args = {**RUNNING_QUERIES, **FINISHED_QUERIES, **STATIC_QUERIES}[case]
    return " ".join(args)


@pytest.mark.parametrize("case", ALL)
def test_command(case: str, sides: Dict[str, Jobs]) -> None:
    real, ours = sides["real"], sides["ours"]
    problems: List[str] = []
    for what, r, o in zip(("stdout", "stderr", "exit code"), real.captured[case],
                          ours.captured[case]):
        if what == "exit code":
            r, o = str(r), str(o)
        problems += diff_text(case, f"`{command_line(case)}` {what}",
                              normalise(real, ours, case, r), normalise(ours, real, case, o))
    report(problems)
