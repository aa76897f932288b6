"""The one place Slurm's message lines are worded: ``<command>: error: …``,
``<command>: warning: …``, the same about one job (``… job 12: …``) and srun's plain
``<command>: …`` notes, on stderr.

Commands print through here, and so do backends for what they meet while a command waits
on them (a warning while submitting, a file sattach wrote, output lost while following a
job): a backend names the command it works for (``sbatch``, ``sattach``, or ``srun``
creating a job for a step) and never imports a command, nor spells a message line itself.
Each line is flushed at once: job output may follow on the same descriptors, unbuffered.
"""

from __future__ import annotations

import sys
from typing import Optional


def print_error(command: str, message: str) -> None:
    """One ``<command>: error: <message>`` line on stderr."""
    _flushed(f"{command}: error: {message}\n")


def print_warning(command: str, message: str, location: Optional[str] = None) -> None:
    """One ``<command>: warning: [<location>: ]<message>`` line on stderr."""
    where = f"{location}: " if location else ""
    sys.stderr.write(f"{command}: warning: {where}{message}\n")


def print_job_error(command: str, job_id: int, message: str) -> None:
    """One ``<command>: error: job <id>: <message>`` line on stderr (why a job never ran)."""
    _flushed(f"{command}: error: job {job_id}: {message}\n")


def print_job_warning(command: str, job_id: int, message: str) -> None:
    """One ``<command>: warning: job <id>: <message>`` line on stderr (its output not whole,
    a file not written)."""
    _flushed(f"{command}: warning: job {job_id}: {message}\n")


def print_note(command: str, message: str) -> None:
    """One ``<command>: <message>`` line on stderr: srun's progress notes (``forcing job
    termination``), sattach's ``wrote <path>``."""
    _flushed(f"{command}: {message}\n")


def _flushed(line: str) -> None:
    sys.stderr.write(line)
    sys.stderr.flush()
