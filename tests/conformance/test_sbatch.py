"""sbatch: what it prints (stdout, stderr) and its exit code, for good submissions
(``--parsable``, ``-Q``, ``--wait``, ``--test-only``) and for bad scripts and options.

Each case runs the same ``sbatch`` command line on both sides, in a fresh directory holding
the case's script; the outputs are compared after normalisation (job ids, node names, times,
the working directory).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import pytest

from tests.conformance.compare import diff_result, parallel, report, value
from tests.conformance.normalise import Normaliser
from tests.conformance.sides import OurSlurm, RealSlurm, Side

OK = "#!/bin/sh\ntrue\n"


@dataclass
class Case:
    args: Sequence[str]
    script: Optional[str] = OK          # None: no script file is written
    script_name: str = "job.sh"
    operands: Sequence[str] = ("job.sh",)
    stdin: Optional[str] = None


def directive(*lines: str) -> str:
    return "#!/bin/sh\n" + "".join(f"#SBATCH {line}\n" for line in lines) + "true\n"


CASES: Dict[str, Case] = {
    # good submissions
    "sbatch-default": Case([]),
    "sbatch-parsable": Case(["--parsable"]),
    "sbatch-quiet": Case(["-Q"]),
    "sbatch-wait-exit3": Case(["--wait"], "#!/bin/sh\nexit 3\n"),
    "sbatch-wait-parsable-exit3": Case(["--wait", "--parsable"], "#!/bin/sh\nexit 3\n"),
    "sbatch-wait-array-max": Case(["--wait", "--array=1-3"],
                                  "#!/bin/sh\nexit $SLURM_ARRAY_TASK_ID\n"),
    "sbatch-wait-signal": Case(["--wait"], "#!/bin/sh\nkill -9 $$\n"),
    "sbatch-test-only": Case(["--test-only"]),
    "sbatch-test-only-N2": Case(["--test-only", "-N2"]),
    "sbatch-stdin": Case([], operands=(), stdin=OK),
    "sbatch-wrap": Case(["--wrap=true"], operands=()),
    "sbatch-script-args-after-name": Case([], operands=("job.sh", "--time", "--bogus")),
    "sbatch-unique-prefix": Case(["--part=debug", "--tasks=2"]),
    # bad options on the command line
    "bad-unknown-option": Case(["--bogus"]),
    "bad-unknown-short": Case(["-j"]),
    "bad-ambiguous-prefix": Case(["--ntask=2"]),
    "bad-missing-argument": Case(["--time"], operands=()),
    "bad-missing-argument-short": Case(["-N"], operands=()),
    "bad-flag-with-argument": Case(["--parsable=yes"]),
    "bad-time": Case(["--time=abc"]),
    "bad-mem": Case(["--mem=12Q"]),
    "bad-nodes-0": Case(["-N", "0"]),
    "bad-nodes-abc": Case(["-N", "abc"]),
    "bad-nodes-2-1": Case(["-N", "2-1"]),
    "bad-ntasks-abc": Case(["-n", "abc"]),
    "bad-ntasks-0": Case(["-n", "0"]),
    "bad-cpus-per-task-0": Case(["-c", "0"]),
    "bad-array-5-1": Case(["--array=5-1"]),
    "bad-array-a-b": Case(["--array=a-b"]),
    "bad-array-too-big": Case(["--array=0-2000"]),
    "bad-mem-and-mem-per-cpu": Case(["--mem=1000", "--mem-per-cpu=100"]),
    "bad-partition": Case(["-p", "nosuch"]),
    "bad-dependency": Case(["-d", "bogus"]),
    "bad-begin": Case(["--begin=bogus"]),
    "bad-signal": Case(["--signal=FOO"]),
    "bad-open-mode": Case(["--open-mode=bogus"]),
    "bad-gres-count": Case(["--gres=gpu:9", "-p", "gpu"]),
    "bad-ntasks-per-node-vs-n": Case(["--ntasks-per-node=2", "-n", "3", "-N", "1"]),
    "bad-nonexistent-script": Case([], None, operands=("nonexistent.sh",)),
    "bad-nonexistent-script-path": Case([], None, operands=("./nonexistent.sh",)),
    "bad-wrap-with-args": Case(["--wrap=echo hi"], operands=("job.sh", "a", "b")),
    # bad scripts
    "script-no-shebang": Case([], "echo hello\n"),
    "script-empty": Case([], ""),
    "script-whitespace-only": Case([], "  \n\t\n\n"),
    "script-dos-line-breaks": Case([], "#!/bin/sh\r\ntrue\r\n"),
    "script-nul-byte": Case([], "#!/bin/sh\ntrue\0\n"),
    "script-unknown-option": Case([], directive("--bogus=1")),
    "script-ambiguous-prefix": Case([], directive("--ntask=2")),
    "script-missing-argument": Case([], directive("--time")),
    "script-bad-time": Case([], directive("--time=abc")),
    "script-bad-mem": Case([], directive("--mem=12Q")),
    "script-nodes-0": Case([], directive("--nodes=0")),
    "script-array-5-1": Case([], directive("--array=5-1")),
    "script-unmatched-double-quote": Case([], directive('--job-name="unterminated')),
    "script-unmatched-single-quote": Case([], directive("--job-name='unterminated")),
    "script-colon": Case([], directive(":")),
    "script-positional": Case([], directive("somepositional")),
    "script-positional-after-options": Case([], directive("-N1 somepositional")),
    "script-slurm-prefix": Case([], "#!/bin/sh\n#SLURM --bogus\ntrue\n"),
}

#: cases whose answer names the nodes a job would start on, which depends on what else runs:
#: they run first, once both sides' debug partitions are idle, before the other cases' jobs
#: take some of those nodes
PLACEMENT_CASES: Tuple[str, ...] = tuple(name for name, case in CASES.items()
                                         if "--test-only" in case.args)
#: how long to wait for idle nodes (the previous module's cancelled jobs may still be ending)
IDLE_WAIT_S = 20.0

ID_PATTERNS = (r"Submitted batch job (\d+)", r"^(\d+)(?:;\S+)?$", r"\bJob (\d+) to start")


def run_case(side: Side, name: str) -> Tuple[str, str, int]:
    """sbatch's stdout, stderr and exit code for one case, as printed."""
    case = CASES[name]
    cwd = side.case_dir(name)
    if case.script is not None:
        (cwd / case.script_name).write_bytes(case.script.encode())
    done = side.run("sbatch", *case.args, *case.operands, cwd=cwd, stdin=case.stdin,
                    timeout=60)
    return done.stdout, done.stderr, done.returncode


def submitted_ids(result: Tuple[str, str, int]) -> Dict[int, str]:
    """The ids sbatch reported (``Submitted batch job N``, ``N;cluster``, ``Job N to start``)."""
    text = result[0] + result[1]
    return {int(m): "<job>" for p in ID_PATTERNS for m in re.findall(p, text, re.M)}


def normalised(side: Side, result: Tuple[str, str, int],
               other: Tuple[str, str, int]) -> Tuple[str, str, int]:
    """One side's result with both sides' ids replaced (its own first)."""
    norm = Normaliser(side, submitted_ids(result), other_jobs=submitted_ids(other))
    return norm.text(result[0]), norm.text(result[1]), result[2]


def run_cases(real: RealSlurm, ours: OurSlurm, names: Sequence[str]) -> Dict[str, object]:
    """The named cases on both sides, concurrently: ``side:name`` → result."""
    calls = {}
    for name in names:
        calls[f"real:{name}"] = lambda n=name: run_case(real, n)
        calls[f"ours:{name}"] = lambda n=name: run_case(ours, n)
    return parallel(calls, workers=12)


@pytest.fixture(scope="module")
def results(real: RealSlurm, ours: OurSlurm) -> Dict[str, object]:
    """Every case's result; :data:`PLACEMENT_CASES` on idle nodes, then the rest."""
    for side in (real, ours):
        side.wait_idle("debug", IDLE_WAIT_S)
    first = run_cases(real, ours, PLACEMENT_CASES)
    return {**first, **run_cases(real, ours, [n for n in CASES if n not in PLACEMENT_CASES])}


@pytest.mark.parametrize("name", list(CASES))
def test_sbatch(name: str, results: Dict[str, object], real: RealSlurm,
                ours: OurSlurm) -> None:
    real_result, our_result = value(results[f"real:{name}"]), value(results[f"ours:{name}"])
    problems: List[str] = diff_result(name, "sbatch",
                                      normalised(real, real_result, our_result),
                                      normalised(ours, our_result, real_result),
                                      ("stdout", "stderr", "exit code"))
    report(problems)
