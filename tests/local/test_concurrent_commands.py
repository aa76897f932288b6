"""Any number of commands at once on a new state directory all answer (issue 18, item 6).

A workflow manager starts by asking ``sinfo`` twice in parallel, then polls ``squeue`` and
``sacct`` while it submits: on a fresh state directory the first commands all find no job
database and create it at the same moment. Each trial here starts 20 mixed commands at once
on a new directory (the command server starting beside them, as it does for users); every
one must exit 0 with its usual output, in every one of 50 trials.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import List, Sequence, Tuple

import pytest

from tests.local.harness import LocalSlurm

pytestmark = pytest.mark.slow

TRIALS = 50
AT_ONCE = 20
#: What the workflow manager runs, in turn; each with what its first line must be.
COMMANDS: Sequence[Tuple[Sequence[str], str]] = (
    (["sinfo"], "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST"),
    (["squeue"], "             JOBID PARTITION     NAME     USER ST       TIME  NODES "
                 "NODELIST(REASON)"),
    (["sacct", "-X", "--parsable2", "--noheader", "-o", "JobIdRaw,State"], ""),
    (["sbatch", "--hold", "--parsable", "--wrap=true"], "<id>"),
    (["scontrol", "show", "partition"], "PartitionName=debug"),
    (["sinfo", "-h", "-o", "%P %a"], "debug* up"),
    (["squeue", "-h", "-o", "%i %T"], ""),
)


def first_line_matches(expected: str, stdout: str) -> bool:
    first = stdout.splitlines()[0] if stdout else ""
    if expected == "<id>":
        return first.isdigit()
    return first == expected if expected else True


def trial(root: Path) -> List[str]:
    """One trial; the failures (command, exit code, stderr), none when all answered."""
    slurm = LocalSlurm(root)
    try:
        started = []
        for i in range(AT_ONCE):
            argv, expected = COMMANDS[i % len(COMMANDS)]
            started.append((argv, expected, slurm.start(argv[0], *argv[1:])))
        failures = []
        for argv, expected, process in started:
            try:
                out, err = process.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                process.kill()
                out, err = process.communicate()
            if process.returncode != 0 or not first_line_matches(expected, out):
                failures.append(f"{' '.join(argv)}: exit {process.returncode}: "
                                f"{err.strip() or out[:200]}")
        return failures
    finally:
        slurm.cleanup()


def test_twenty_commands_at_once_on_a_new_state_directory(tmp_path: Path) -> None:
    failures = []
    for number in range(TRIALS):
        failures += [f"trial {number}: {f}" for f in trial(tmp_path / f"trial-{number}")]
    assert failures == [], "\n".join(failures)
