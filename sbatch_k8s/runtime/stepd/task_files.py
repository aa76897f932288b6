"""The files and the working directory a node gives a step's tasks (and node 0 the batch
script), as slurmstepd sets them up before it starts any task.

* Output files are opened once per distinct file on the node: every task whose ``-o``/``-e``
  resolves to the same file (``-o out-%n`` with several tasks per node, ``-o x -e x``) shares
  that one open file description, so each task's lines land in it. It is truncated once
  (``--open-mode=truncate``, the default) or not at all (``append``), and written in
  ``O_APPEND`` mode, so no writer overwrites another (slurmstepd's ``io_get_file_flags``).
* A working directory missing on this node sends the tasks to ``/tmp`` with slurmstepd's
  message; relative file names are then resolved in ``/tmp``, where the tasks run. The missing
  directory is never created (nor anything under it): on Kubernetes, without a shared volume,
  an empty copy of the submit directory would only hide that the job's files stay in the pod.
* Missing parent directories of output files are created (Slurm >= 23.02).
"""

from __future__ import annotations

import errno
import os
from typing import Dict, Optional, Tuple

#: Where slurmstepd sends a task whose working directory it cannot enter.
FALLBACK_DIR = "/tmp"
CHDIR_FAILED = ("slurmstepd: error: couldn't chdir to `{path}': {reason}: going to /tmp "
                "instead")


def chdir_errno(path: str) -> int:
    """The errno ``chdir(path)`` would fail with (0 when it would succeed), checked without
    changing this process's own directory."""
    try:
        if not os.path.isdir(path):
            os.stat(os.path.join(path, "."))
    except OSError as e:
        return e.errno or errno.ENOENT
    if not os.access(path, os.X_OK):
        return errno.EACCES
    return 0


def working_directory(requested: str) -> Tuple[str, Optional[str]]:
    """Where to run: ``(requested, None)``, or ``/tmp`` and slurmstepd's message (without a
    newline) when ``requested`` cannot be entered on this node."""
    code = chdir_errno(requested)
    if code == 0:
        return requested, None
    return FALLBACK_DIR, CHDIR_FAILED.format(path=requested, reason=os.strerror(code))


def resolve(name: str, cwd: str) -> str:
    """A file name made absolute against the directory the tasks run in (not normalised:
    Slurm shows names as the user wrote them)."""
    return name if os.path.isabs(name) else os.path.join(cwd, name)


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def make_parents(path: str, missing_workdir: Optional[str] = None) -> None:
    """Create the missing parent directories of output file ``path`` — but never the missing
    working directory ``missing_workdir`` or one below it (the open then fails instead)."""
    parent = os.path.dirname(path)
    if not parent or os.path.isdir(parent):
        return
    if missing_workdir and _inside(os.path.normpath(parent), os.path.normpath(missing_workdir)):
        return
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError:
        pass  # the open reports it


def output_flags(append: bool) -> int:
    """slurmstepd's open flags for output files."""
    return os.O_WRONLY | os.O_CREAT | os.O_APPEND | (0 if append else os.O_TRUNC)


class OutputFiles:
    """The output files of one step on one node: each distinct file opened once, shared by
    every task (and stream) that writes to it. Close after the tasks have started."""

    def __init__(self, append: bool, missing_workdir: Optional[str] = None) -> None:
        self.flags = output_flags(append)
        self.missing_workdir = missing_workdir
        self.fds: Dict[str, int] = {}

    def open(self, path: str) -> int:
        """The descriptor of ``path`` (absolute), opened on first use; OSError if it cannot
        be opened."""
        key = os.path.normpath(path)
        fd = self.fds.get(key)
        if fd is None:
            make_parents(key, self.missing_workdir)
            fd = self.fds[key] = os.open(key, self.flags, 0o644)
        return fd

    def close(self) -> None:
        """Close every descriptor (the started tasks keep their own copies)."""
        for fd in self.fds.values():
            os.close(fd)
        self.fds.clear()
