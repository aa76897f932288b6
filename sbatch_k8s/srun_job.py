"""The job an ``srun`` outside an allocation creates, whatever the backend runs it.

As Slurm's srun does, it first obtains an allocation with its own options, then runs the step
in it. Here the allocation is a batch job: srun's options that sbatch knows too (size,
placement, time, partition…), the command's name as job name, and a batch script that is the
step itself, ``exec srun <the same arguments>``, so the step gets the runtime's fan-out,
``--label``, output and exit rules. Each backend adds where the job's stdio goes.
"""

from __future__ import annotations

import os
import shlex
from typing import List, Mapping, Sequence, Tuple

from parsers.input_errors import fatal
from parsers.getopt import parse_args
from parsers.jobspec import BatchScript, JobSpec
from parsers.options import SBATCH, SRUN

#: srun options sbatch also knows that concern the step only (kept for the inner srun).
STEP_ONLY = ("output", "error", "input", "label", "wait")


def allocation_options(argv: Sequence[str]) -> Tuple[str, List[str]]:
    """The job name (the command's base name) and the sbatch arguments of the allocation
    for ``srun argv`` (``No command given to execute.`` when there is no command)."""
    parsed = parse_args(SRUN, argv)
    if not parsed.operands:
        raise fatal("No command given to execute.")
    words: List[str] = []
    for given in parsed.options:
        option = given.option
        if option.level(SBATCH) is None or option.long in STEP_ONLY:
            continue
        words.append(f"--{option.long}" if given.raw is None else f"--{option.long}={given.raw}")
    return os.path.basename(parsed.operands[0]), words


def step_command(argv: Sequence[str]) -> str:
    """The batch script's one line: ``exec srun <argv>``, quoted for the shell."""
    return "exec srun " + " ".join(shlex.quote(a) for a in argv)


def build_step_job(argv: Sequence[str], stdio: Sequence[str],
                   environ: Mapping[str, str]) -> JobSpec:
    """The checked job for ``srun argv`` outside an allocation; ``stdio``: the sbatch
    options saying where the batch script's stdin, stdout and stderr go."""
    from parsers.sbatch_input import build_job, split_command_line

    name, words = allocation_options(argv)
    wrap = step_command(argv)
    command_line = split_command_line(["--job-name", name, *words, *stdio, "--wrap", wrap])
    script = BatchScript(f"#!/bin/sh\n# created by srun outside an allocation\n{wrap}\n", None,
                         (), "wrap")
    job, _ = build_job(command_line, environ, script)
    return job
