"""What tools that drive Slurm run, against real Slurm 22.05 (issue 18): each command line as
the tool runs it, compared after the usual normalisation, and read the way the tool reads it.

- a workflow manager's status poll ``sacct -X --parsable2 --clusters all --noheader
  --format=JobIdRaw,State --starttime <2 days ago> --endtime now --name <uuid>``, then its
  ``JobIdRaw|State`` lines; ``-M``/``--clusters`` of every command, known, unknown and mixed;
  ``sbatch -M`` naming the cluster (item 1);
- a job-step executor's ``srun -n1 --cpu-bind=q --cpus-per-task=2 --nodes=1`` inside a job,
  under an environment with nothing but ``SLURM_JOB_ID`` (item 2);
- a pilot-job library's ``sbatch -N2 --exclusive`` (item 3);
- ``sinfo -o "%P %G %l %p %c %m"`` (item 4; every field alone: ``test_format_fields``);
- ``sacct -j N.S`` of a step that exists and of one that does not (item 7);
- a job name with a byte that is not UTF-8, as sacct shows it (item 9).
"""

from __future__ import annotations

import datetime
import re
import uuid
from dataclasses import dataclass, field
from typing import Dict, List, Sequence, Tuple

import pytest

from tests.conformance.compare import diff_text, parallel, report, value
from tests.conformance.normalise import Normaliser
from tests.conformance.sides import OurSlurm, RealSlurm, Side

NAME = f"wf-{uuid.uuid4().hex[:12]}"
#: What the executor keeps of the job's environment: the job id, and PATH and HOME.
#: (On the real side also SLURM_CONF: its slurm.conf is not at the default /etc/slurm, where a
#: real node has it; ours has none.)
EXECUTOR = ('env -i PATH="$PATH" HOME="$HOME" ${SLURM_CONF:+SLURM_CONF="$SLURM_CONF"} '
            'SLURM_JOB_ID="$SLURM_JOB_ID" '
            "srun -n1 --cpu-bind=q --cpus-per-task=2 --nodes=1 sh -c 'echo step $SLURM_STEP_ID'"
            " > executor.out 2> executor.err; echo $? > executor.rc")
#: case -> command line (``{cluster}``, ``{ok}``, ``{steps}``: this side's values)
QUERIES: Dict[str, Sequence[str]] = {
    "wf-sacct-clusters-all": ["sacct", "-X", "--parsable2", "--clusters", "all", "--noheader",
                              "--format=JobIdRaw,State", "--starttime", "{two_days_ago}",
                              "--endtime", "now", "--name", NAME],
    "sacct-clusters-ALL": ["sacct", "-X", "-P", "-n", "-M", "ALL", "-o", "JobIdRaw",
                           "--name", NAME, "-S", "{two_days_ago}"],
    "sacct-clusters-bogus": ["sacct", "-X", "-P", "-n", "-M", "bogus", "-o", "JobIdRaw",
                             "--name", NAME, "-S", "{two_days_ago}"],
    "sacct-clusters-own-and-bogus": ["sacct", "-X", "-P", "-n", "-M", "{cluster},bogus", "-o",
                                     "JobIdRaw", "--name", NAME, "-S", "{two_days_ago}"],
    "sacct-federation": ["sacct", "-X", "-P", "-n", "--federation", "-o", "JobIdRaw",
                         "--name", NAME, "-S", "{two_days_ago}"],
    "squeue-clusters-all": ["squeue", "-M", "all", "-j", "{ok}"],
    "squeue-clusters-all-noheader": ["squeue", "-M", "all", "-h", "-j", "{ok}"],
    "squeue-clusters-mixed": ["squeue", "-M", "bogus,{cluster}", "-j", "{ok}"],
    "squeue-clusters-unknown": ["squeue", "-M", "bogus,bogus2"],
    "squeue-local": ["squeue", "--local", "-j", "{ok}"],
    "sinfo-clusters-mixed": ["sinfo", "-M", "{cluster},bogus", "-o", "%P %a %V"],
    "sinfo-clusters-unknown": ["sinfo", "-M", "bogus"],
    "scancel-clusters-mixed": ["scancel", "-M", "{cluster},bogus", "99999999"],
    "scancel-clusters-unknown": ["scancel", "-M", "bogus", "99999999"],
    "scancel-sibling-unknown-job": ["scancel", "--sibling={cluster}", "99999999"],
    "scontrol-clusters-unknown": ["scontrol", "-M", "bogus", "show", "job", "99999999"],
    "scontrol-clusters-mixed": ["scontrol", "-M", "{cluster},bogus", "show", "job", "{ok}"],
    "sbatch-clusters-unknown": ["sbatch", "-M", "bogus", "--wrap=true"],
    "sinfo-pilot-format": ["sinfo", "-p", "gpu", "-o", "%P %G %l %p %c %m"],
    "sacct-step-exists": ["sacct", "-j", "{steps}.1", "-P", "-n", "-o", "JobID,State"],
    "sacct-step-exists-allocations": ["sacct", "-X", "-j", "{steps}.1", "-P", "-n", "-o",
                                      "JobID,State"],
    "sacct-step-missing": ["sacct", "-j", "{steps}.5", "--format=Reason", "--noheader"],
    "sacct-step-and-job": ["sacct", "-j", "{steps},{steps}.1", "-P", "-n", "-o",
                           "JobID,State"],
    "sacct-latin1-name": ["sacct", "-X", "-j", "{latin1}", "-P", "-n", "-o", "JobName"],
}
#: Cases whose values depend on the machine: compared with digits hashed.
SHAPE_ONLY = {"sinfo-pilot-format": "the real gpu partition's nodes have 4 CPUs, 4000 MB and "
                                    "4 GPUs; ours are the local pool"}


@dataclass
class Ran:
    """One side's jobs and what each case printed."""

    side: Side
    ids: Dict[str, int] = field(default_factory=dict)
    printed: Dict[str, Tuple[str, str, int]] = field(default_factory=dict)
    files: Dict[str, str] = field(default_factory=dict)


def _submit(side: Side, *args: str) -> Tuple[str, str, int]:
    done = side.run("sbatch", *args, cwd=side.case_dir("tools"))
    return done.stdout, done.stderr, done.returncode


def _job_id(side: Side, printed: Tuple[str, str, int]) -> int:
    found = re.search(r"(\d+)", printed[0])
    assert found and printed[2] == 0, f"{side.kind}: sbatch: {printed}"
    return int(found.group(1))


def run_side(side: Side) -> Ran:
    ran = Ran(side)
    cwd = side.case_dir("tools")
    submitted = {
        "ok": _submit(side, "--parsable", "-J", NAME, "-o", "/dev/null", "--wrap=sleep 3"),
        "fails": _submit(side, "--parsable", "-J", NAME, "-o", "/dev/null", "--wrap=exit 1"),
        "steps": _submit(side, "--parsable", "-o", "/dev/null",
                         "--wrap=srun true; srun true"),
        "latin1": _submit(side, "--parsable", "-J", "caf\udce9", "-o", "/dev/null",
                          "--wrap=true"),
        "executor": _submit(side, "--parsable", "-N1", "-c2", "-o", "executor-job.out",
                            f"--wrap={EXECUTOR}"),
        # the pilot-job library: whole nodes; each node's CPUs as sinfo describes them
        "exclusive": _submit(side, "-N2", "--exclusive", "-o", "exclusive.out",
                             "--wrap=echo cpus $SLURM_JOB_CPUS_PER_NODE; srun -l true"),
        "named": _submit(side, "-M", side.cluster, "--parsable", "-o", "/dev/null",
                         "--wrap=true"),
    }
    ran.printed["sbatch-exclusive"] = submitted["exclusive"]
    ran.printed["sbatch-clusters-named"] = submitted["named"]
    ran.ids = {name: _job_id(side, out) for name, out in submitted.items()}
    ids = {k: str(v) for k, v in ran.ids.items()}
    two_days_ago = (datetime.datetime.now() - datetime.timedelta(days=2)).strftime(
        "%Y-%m-%dT%H:%M")
    for job_id in ran.ids.values():
        side.wait_done(job_id)
        side.wait_sacct(job_id)
    for name, args in QUERIES.items():
        words = [a.format(cluster=side.cluster, two_days_ago=two_days_ago, **ids)
                 for a in args]
        done = side.run(words[0], *words[1:], cwd=cwd)
        ran.printed[name] = (done.stdout, done.stderr, done.returncode)
    for name in ("executor.out", "executor.err", "executor.rc", "exclusive.out"):
        path = cwd / name
        ran.files[name] = path.read_text() if path.exists() else f"<missing {name}>"
    return ran


@pytest.fixture(scope="module")
def sides(real: RealSlurm, ours: OurSlurm) -> Dict[str, Ran]:
    results = parallel({"real": lambda: run_side(real), "ours": lambda: run_side(ours)})
    return {k: value(v) for k, v in results.items()}


def _normalised(ran: Ran, other: Ran, text: str, case: str) -> str:
    jobs = {job_id: f"<{name}>" for name, job_id in ran.ids.items()}
    others = {job_id: f"<{name}>" for name, job_id in other.ids.items()}
    text = Normaliser(ran.side, jobs, [], other_jobs=others).text(text)
    # priorities and run times follow the jobs' ages
    text = re.sub(r"\b(Priority|RunTime)=\S+", lambda m: re.sub(r"\d", "#", m.group(0)), text)
    return re.sub(r"\d+", "#", text) if case in SHAPE_ONLY else text


CASES = ["sbatch-exclusive", "sbatch-clusters-named"] + list(QUERIES)


@pytest.mark.parametrize("case", CASES)
def test_tool_command(case: str, sides: Dict[str, Ran]) -> None:
    real, ours = sides["real"], sides["ours"]
    problems: List[str] = []
    for what, r, o in zip(("stdout", "stderr", "exit code"), real.printed[case],
                          ours.printed[case]):
        problems += diff_text(case, what, _normalised(real, ours, str(r), case),
                              _normalised(ours, real, str(o), case))
    report(problems)


def test_the_workflow_managers_poll_reads_every_job(sides: Dict[str, Ran]) -> None:
    """The poll's lines, read as the workflow manager reads them: ``id|state`` per job."""
    for ran in sides.values():
        states = dict(line.split("|") for line in
                      ran.printed["wf-sacct-clusters-all"][0].splitlines())
        assert states == {str(ran.ids["ok"]): "COMPLETED",
                          str(ran.ids["fails"]): "FAILED"}, (ran.side.kind, states)


def test_the_executors_srun_runs_with_only_the_job_id(sides: Dict[str, Ran]) -> None:
    """The step's output, srun's messages and its exit code, as the executor judges it."""
    real, ours = sides["real"], sides["ours"]
    problems: List[str] = []
    for name in ("executor.out", "executor.err", "executor.rc"):
        problems += diff_text("executor", name, real.files[name], ours.files[name])
    report(problems)
    assert ours.files["executor.rc"] == "0\n"


def test_exclusive_nodes_have_all_their_cpus(sides: Dict[str, Ran]) -> None:
    """Each of the two nodes has all the CPUs sinfo says a node has (4 there, 16 here)."""
    for ran in sides.values():
        node_cpus = ran.side.run("sinfo", "-h", "-N", "-p", "debug", "-o", "%c").stdout.split()
        line = ran.files["exclusive.out"].splitlines()[0]
        assert line == f"cpus {node_cpus[0]}(x2)", (ran.side.kind, line, node_cpus)


def test_a_latin1_name_reads_as_sacct_stores_it(sides: Dict[str, Ran]) -> None:
    for ran in sides.values():
        assert ran.printed["sacct-latin1-name"][0] == "caf?\n", ran.side.kind

