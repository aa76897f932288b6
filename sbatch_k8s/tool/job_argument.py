"""The ``JOB[.STEP]`` argument of ``sbatch-k8s logs|events|yaml``, and their error lines.

A job is written as the Slurm commands take it (``12``, ``12_3`` for an array element); a
step as ``12.0``, ``12.batch`` or ``12.extern``. What is malformed or unknown is Slurm's
``Invalid job id specified``. Errors are one ``sbatch-k8s <command>: error: …`` line and
exit status 1 (:class:`CommandError`, printed by :func:`fail_with`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

import click

from sbatch_k8s.user_messages import print_error

if TYPE_CHECKING:
    from parsers.job_records import JobRecord
    from sbatch_k8s.backends.base import Backend

INVALID_JOB_ID = "Invalid job id specified"
JOB_ARGUMENT = re.compile(r"^(\d+(?:_\d+)?)(?:\.(\d+|batch|extern))?$")


class CommandError(Exception):
    """What stops a command: the words after ``error:``."""


@dataclass(frozen=True)
class JobArgument:
    """``JOB[.STEP]`` read: the job's text (``12``, ``12_3``) and the step, if any."""

    job: str
    step: Optional[str] = None


def parse_job_argument(text: str, steps: bool = True) -> JobArgument:
    """``JOB[.STEP]`` (``steps`` false: ``JOB`` only); :class:`CommandError` otherwise."""
    found = JOB_ARGUMENT.match(text.strip())
    if found is None or int(found.group(1).split("_")[0]) <= 0 or (
            found.group(2) is not None and not steps):
        raise CommandError(INVALID_JOB_ID)
    return JobArgument(found.group(1), found.group(2))


def find_record(backend: "Backend", job: str) -> "JobRecord":
    """The job's record with its steps and earlier runs; :class:`CommandError` when the
    backend does not know it."""
    from sbatch_k8s.inspection.job_lookup import find_job, with_history

    record = find_job(backend, job)
    if record is None:
        raise CommandError(INVALID_JOB_ID)
    return with_history(backend, record)


def fail_with(command: str, error: CommandError) -> "click.exceptions.Exit":
    """Print ``sbatch-k8s <command>: error: <error>``; the exit to raise (status 1)."""
    print_error(f"sbatch-k8s {command}", str(error))
    return click.exceptions.Exit(1)
