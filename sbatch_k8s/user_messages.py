"""The one place Slurm's message lines are worded: ``<command>: error: …`` and
``<command>: warning: …`` on stderr.

Commands and backends both print through here (a backend names the command it works for:
``sbatch``, or ``srun`` creating a job for a step), so a backend never imports a command.
"""

from __future__ import annotations

import sys
from typing import Optional


def print_error(command: str, message: str) -> None:
    """One ``<command>: error: <message>`` line on stderr."""
    sys.stderr.write(f"{command}: error: {message}\n")


def print_warning(command: str, message: str, location: Optional[str] = None) -> None:
    """One ``<command>: warning: [<location>: ]<message>`` line on stderr."""
    where = f"{location}: " if location else ""
    sys.stderr.write(f"{command}: warning: {where}{message}\n")
