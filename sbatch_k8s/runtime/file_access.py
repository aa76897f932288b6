"""What the runtime must be able to read and write, and the one line when it cannot.

A pod may run as any uid (a partition may run tasks as the submitting user), its job files
come from read-only ConfigMap and Secret volumes, and its root file system may be read-only
(``--container-readonly``). The runtime reads the job's token and files and writes only
under its spool directory (``SBATCHK8S_SPOOL``, default ``/tmp/sbatch-k8s``). When any of
that is impossible the pod ends with one line naming the path and the uid it runs as —
never with a traceback.
"""

from __future__ import annotations

import contextlib
import os
from typing import Iterator


class AccessError(Exception):
    """The runtime cannot use a file or directory it needs; ``str()`` is the line to print."""


def running_as() -> str:
    """``uid 1000, gid 1000``: who the runtime runs as (what a mode or owner must allow)."""
    return f"uid {os.getuid()}, gid {os.getgid()}"


def access_error(action: str, path: str, error: OSError) -> AccessError:
    """The error for ``error`` met while trying to ``action`` (``read the job token``)
    ``path``; the path the system names wins (a directory on the way, say)."""
    where = error.filename if isinstance(error.filename, str) else path
    reason = os.strerror(error.errno) if error.errno else str(error)
    return AccessError(f"cannot {action} {where} (running as {running_as()}): {reason}")


@contextlib.contextmanager
def needed(action: str, path: str) -> Iterator[None]:
    """Turn an OSError inside the block into the :class:`AccessError` naming ``path``."""
    try:
        yield
    except OSError as e:
        raise access_error(action, path, e) from e


def prepare_spool(spool: str) -> None:
    """Create the spool directory and check that the runtime can write there."""
    with needed("create the spool directory", spool):
        os.makedirs(spool, exist_ok=True)
    probe = os.path.join(spool, f".probe-{os.getpid()}")
    with needed("write in the spool directory (SBATCHK8S_SPOOL)", spool):
        with open(probe, "w"):
            pass
        os.unlink(probe)
