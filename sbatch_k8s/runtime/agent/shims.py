"""Slurm's commands inside the allocation: small scripts put first on the job's PATH.

``srun``, ``scontrol``, ``squeue``, ``scancel`` and ``sbatch`` each exec the runtime (the
zipapp in pods, the installed package on the local backend) with the command's name, so a
script calling them works whatever the image holds: the runtime answers what it can and hands
the rest to the full commands when the image has them, else says in one line what is missing
(:mod:`sbatch_k8s.runtime.job_commands`).
"""

from __future__ import annotations

import os
import shlex
import sys
from typing import List

SHIMMED = ("srun", "scontrol", "squeue", "scancel", "sbatch")


def runtime_invocation() -> List[str]:
    """The command line that starts this runtime again: the zipapp in pods; in package mode
    a ``-c`` line that finds the package without touching the tasks' ``PYTHONPATH``."""
    entry = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if entry.endswith(".pyz") and os.path.isfile(entry):
        return [sys.executable, entry]
    import sbatch_k8s

    root = os.path.dirname(os.path.dirname(os.path.abspath(sbatch_k8s.__file__)))
    code = (f"import sys; sys.path.insert(0, {root!r}); "
            "from sbatch_k8s.runtime.main import main; main()")
    return [sys.executable, "-c", code]


def install_shims(spool: str, invocation: List[str]) -> str:
    """Write the shims into ``<spool>/bin``; returns that directory."""
    directory = os.path.join(spool, "bin")
    os.makedirs(directory, exist_ok=True)
    command = " ".join(shlex.quote(word) for word in invocation)
    for name in SHIMMED:
        path = os.path.join(directory, name)
        with open(path, "w") as f:
            f.write(f'#!/bin/sh\nexec {command} {name} "$@"\n')
        os.chmod(path, 0o755)
    return directory
