"""Every format field of sinfo, squeue (jobs and steps) and sacct, one by one, against real
Slurm 22.05 (issue 18, item 4).

Each case prints one field — an ``-o`` letter (all 52, so the letters Slurm lacks are refused
as it refuses them), an ``-O``/``--format`` name (every one Slurm 22.05 answered or refused,
``tests/data/format_fields.py``, and a bogus one) — about the same thing on both sides: one node
(``sinfo -N -n <node 0>``), one running job with a running srun step (``squeue -j``, ``-s``),
one finished job with its batch, extern and srun steps (``sacct -j``). Compared: the exit
code, stderr, the title line, and the value lines after the usual normalisation (ids, nodes,
times, the working directory, the cluster name). Values that depend on what each side runs
on (the machine's CPUs and memory, its load, accounting statistics a side does not gather)
are listed in :data:`SHAPE_ONLY` (compared with their digits hashed) or :data:`OWN_VALUES`
(not compared), each with its reason; their titles and the refusals are compared all the
same.
"""

from __future__ import annotations

import re
import string
import time
from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple

import pytest

from tests.conformance.compare import diff_text, parallel, report, value
from tests.conformance.normalise import Normaliser
from tests.conformance.sides import OurSlurm, RealSlurm, Side
from tests.data.format_fields import (BOGUS, SACCT_NAMES, SINFO_NAMES, SQUEUE_NAMES,
                                      SQUEUE_NO_NAMES, STEP_NAMES, STEP_NO_NAMES)

LETTERS = string.ascii_letters
#: every letter, and every name Slurm 22.05 answered or refused (and a bogus one)
SINFO_TRIED = SINFO_NAMES + (BOGUS,)
SQUEUE_TRIED = SQUEUE_NAMES + SQUEUE_NO_NAMES + (BOGUS,)
STEP_TRIED = STEP_NAMES + STEP_NO_NAMES + (BOGUS,)
SACCT_TRIED = SACCT_NAMES + (BOGUS,)

#: kind -> (command, the arguments before the field, how the field is spelled, its names)
KINDS: Dict[str, Tuple[str, Sequence[str], str, Sequence[str]]] = {
    "sinfo-o": ("sinfo", ["-N", "-n", "{node}"], "-o%{}", LETTERS),
    "sinfo-O": ("sinfo", ["-N", "-n", "{node}"], "-O{}", SINFO_TRIED),
    "squeue-o": ("squeue", ["-j", "{job}"], "-o%{}", LETTERS),
    "squeue-O": ("squeue", ["-j", "{job}"], "-O{}", SQUEUE_TRIED),
    "steps-o": ("squeue", ["-s", "-j", "{job}.0"], "-o%{}", LETTERS),
    "steps-O": ("squeue", ["-s", "-j", "{job}.0"], "-O{}", STEP_TRIED),
    "sacct": ("sacct", ["-j", "{done}"], "--format={}", SACCT_TRIED),
}

#: Fields whose values depend on the machine each side runs on: compared with digits
#: hashed (the value's form, not its number).
SHAPE_ONLY: Dict[str, str] = {
    "sinfo:CPUs CPUsState Cores Sockets Threads SocketCoreThread Memory FreeMem CPUsLoad "
    "Gres GresUsed Port AllocMem c e m z C O X Y Z G":
        "the real Slurm's emulated nodes have 4 CPUs, 4000 MB and 4 GPUs of a shared machine "
        "and their slurmd ports; ours are the local pool (16 CPUs by default, the machine's "
        "memory, pretend GPUs) and have no daemon of their own (port 0)",
    "squeue:AllocSID":
        "the session id of the submitting process, a pid on either side",
    "squeue:Priority PriorityLong PendingTime p Q":
        "priorities and pending times are computed from the jobs' ages",
    "sacct:Priority CPUTimeRAW ElapsedRaw ResvCPURAW":
        "priorities and times in seconds depend on the jobs' ages",
}
#: Fields whose values one side cannot have: not compared (titles and refusals still are).
OWN_VALUES: Dict[str, str] = {
    "sinfo:NodeHost n":
        "every emulated node of the real Slurm is this machine (hostname vm); each local node "
        "has its own hostname, its address",
    "sinfo:Version v":
        "slurmd's version; no slurmd runs under sbatch-k8s (N/A, as sinfo prints an unknown one)",
    "sinfo:NodeAddr o":
        "every emulated node of the real Slurm has this machine's address 127.0.0.1; a local "
        "node's address is its name",
    "sinfo:All":
        "every field at once (the ones above included)",
    "squeue:AllocNodes":
        "the submit host as slurmctld resolves it (localhost for 127.0.0.1); the local "
        "backend records the submitting machine's name",
    "squeue:MinMemory tres-alloc Tres m":
        "the emulated cluster's DefMemPerCPU=256 gives every job memory (256M, mem=256M); "
        "sbatch-k8s has no memory default",
    "sacct:AllocTRES ReqTRES ReqMem":
        "the emulated cluster's DefMemPerCPU=256 (mem=256M, 256M); sbatch-k8s has no memory "
        "default",
    "squeue:AssocID":
        "slurmdbd's association id; there is no association database (0)",
    "sacct:AssocID DBIndex QOSRAW WCKeyID":
        "slurmdbd's row and association ids; there is no accounting database",
    "sacct:AveCPU AveCPUFreq AveDiskRead AveDiskWrite AvePages AveRSS AveVMSize MaxDiskRead "
    "MaxDiskReadNode MaxDiskReadTask MaxDiskWrite MaxDiskWriteNode MaxDiskWriteTask MaxPages "
    "MaxPagesNode MaxPagesTask MaxRSS MaxRSSNode MaxRSSTask MaxVMSize MaxVMSizeNode "
    "MaxVMSizeTask MinCPU MinCPUNode MinCPUTask TotalCPU UserCPU SystemCPU TRESUsageInAve "
    "TRESUsageInMax TRESUsageInMaxNode TRESUsageInMaxTask TRESUsageInMin TRESUsageInMinNode "
    "TRESUsageInMinTask TRESUsageInTot TRESUsageOutAve TRESUsageOutMax TRESUsageOutMaxNode "
    "TRESUsageOutMaxTask TRESUsageOutMin TRESUsageOutMinNode TRESUsageOutMinTask "
    "TRESUsageOutTot ConsumedEnergy ConsumedEnergyRaw":
        "jobacct_gather's per-step statistics: the local backend records none yet (blank, as "
        "sacct prints a step without them)",
    "sacct:SubmitLine":
        "the submitting command line: not recorded by the local backend",
    "sacct:Layout ReqCPUFreq ReqCPUFreqGov ReqCPUFreqMax ReqCPUFreqMin":
        "what slurmctld records of an srun step's task distribution and CPU frequency request; "
        "steps record neither here",
}


def _table(entries: Dict[str, str]) -> Dict[Tuple[str, str], str]:
    out = {}
    for key, reason in entries.items():
        command, names = key.split(":", 1)
        out.update({(command, name): reason for name in names.split()})
    return out


SHAPES, OWN = _table(SHAPE_ONLY), _table(OWN_VALUES)
CASES = [(kind, name) for kind, (_c, _a, _s, names) in KINDS.items() for name in names]


@dataclass
class Ready:
    """One side, with the ids and node its cases name."""

    side: Side
    ids: Dict[str, int]
    node: str
    printed: Dict[Tuple[str, str], Tuple[str, str, int]]


def _submit(side: Side, name: str, body: str) -> int:
    cwd = side.case_dir("fields")
    # a time limit: which real scheduler starts a job without one changes what it shows
    done = side.run("sbatch", "--parsable", "-N1", "-t", "10", "-J", name, "-o",
                    f"{name}.out", f"--wrap={body}", cwd=cwd)
    assert done.stdout.strip().isdigit(), f"{side.kind}: sbatch: {done.stderr}"
    return int(done.stdout.strip())


def _step_running(side: Side, job_id: int, timeout: float = 30) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        shown = side.run("squeue", "-h", "-s", "-j", f"{job_id}.0", "-o", "%i").stdout
        if shown.strip():
            return
        time.sleep(0.2)
    raise AssertionError(f"{side.kind}: step {job_id}.0 not running within {timeout} s")


def _print(side: Side, kind: str, name: str, ids: Dict[str, int],
           node: str) -> Tuple[str, str, int]:
    command, before, spelling, _names = KINDS[kind]
    args = [a.format(node=node, **ids) for a in before] + [spelling.format(name)]
    done = side.run(command, *args, cwd=side.case_dir("fields"))
    return done.stdout, done.stderr, done.returncode


def prepare(side: Side) -> Ready:
    ids = {"done": _submit(side, "done", "srun true; srun -n1 sh -c 'exit 3'; exit 0"),
           "job": _submit(side, "fields", "srun sleep 120")}
    side.wait_done(ids["done"])
    side.wait_sacct(ids["done"])
    _step_running(side, ids["job"])
    node = side.node_names[0]
    ready = Ready(side, ids, node, {})
    results = parallel({(kind, name): (lambda k=kind, n=name: _print(side, k, n, ids, node))
                        for kind, name in CASES}, workers=6)
    ready.printed = {key: value(result) for key, result in results.items()}
    side.run("scancel", str(ids["job"]))
    return ready


@pytest.fixture(scope="module")
def sides(real: RealSlurm, ours: OurSlurm) -> Dict[str, Ready]:
    results = parallel({"real": lambda: prepare(real), "ours": lambda: prepare(ours)})
    return {k: value(v) for k, v in results.items()}


#: Fields that print a node's state, which depends on what else runs on the real side.
STATES = {("sinfo", n) for n in ("StateCompact", "StateLong", "StateComplete", "t", "T")}
NODE_STATE = re.compile(r"\b(alloc|allocated|idle|mix|mixed|comp|completing|drain|drained|"
                        r"drng|draining|down|resv|reserved)\b")


def _normalised(ready: Ready, other: Ready, text: str) -> str:
    jobs = {job_id: f"<{name}>" for name, job_id in ready.ids.items()}
    others = {job_id: f"<{name}>" for name, job_id in other.ids.items()}
    norm = Normaliser(ready.side, jobs, [ready.node], other_jobs=others)
    if ready.side.kind == "real":   # which of its schedulers started the job
        text = text.replace("SchedBackfill", "SchedMain")
    return norm.elapsed(norm.text(text))


def _values(text: str, how: str) -> str:
    """The value lines (after the title) as compared: all, their form, a state, or nothing.
    Runs of blanks count as one: a placeholder (``<node0>``, ``<cluster>``) is not as wide
    as what it replaced (the titles keep the widths checked)."""
    lines = [" ".join(line.split()) + "\n" for line in text.splitlines()[1:]]
    if how == "own":
        return ""
    if how == "shape":
        return re.sub(r"\d+", "#", "".join(lines))
    if how == "state":
        return NODE_STATE.sub("<state>", "".join(lines))
    return "".join(lines)


@pytest.mark.parametrize("kind, name", CASES, ids=[f"{k}-{n}" for k, n in CASES])
def test_field(kind: str, name: str, sides: Dict[str, Ready]) -> None:
    real, ours = sides["real"], sides["ours"]
    command = KINDS[kind][0] if not kind.startswith("steps") else "squeue"
    key = (command, name)
    how = "own" if key in OWN else "shape" if key in SHAPES else \
        "state" if key in STATES else "all"
    case = f"fields-{kind}-{name}"
    (r_out, r_err, r_rc), (o_out, o_err, o_rc) = real.printed[(kind, name)], \
        ours.printed[(kind, name)]
    r_out, o_out = _normalised(real, ours, r_out), _normalised(ours, real, o_out)
    problems: List[str] = []
    problems += diff_text(case, "exit code", str(r_rc), str(o_rc))
    problems += diff_text(case, "stderr", _normalised(real, ours, r_err),
                          _normalised(ours, real, o_err))
    problems += diff_text(case, "title", r_out.splitlines(keepends=True)[0] if r_out else "",
                          o_out.splitlines(keepends=True)[0] if o_out else "")
    problems += diff_text(case, f"values ({how})", _values(r_out, how), _values(o_out, how))
    report(problems)
