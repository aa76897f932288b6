"""Where the local backend keeps a job's files."""

from __future__ import annotations

import os
from typing import Mapping

from sbatch_k8s.paths import state_dir


def job_dir_of(environ: Mapping[str, str], job_id: int) -> str:
    """``<state>/jobs/<job_id>``."""
    return os.path.join(state_dir(environ), "jobs", str(job_id))


def write_private(path: str, data: bytes) -> None:
    """Write ``data`` to a new file readable by the owner only."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
