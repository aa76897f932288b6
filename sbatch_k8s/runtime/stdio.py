"""Where the batch script reads and writes: Slurm's file-name patterns made into paths.

``--output`` defaults to ``slurm-%j.out`` (arrays ``slurm-%A_%a.out``); ``--error`` defaults to
the output file; relative names are relative to the job's working directory; missing parent
directories are created (Slurm >= 23.02). A missing working directory sends the script to
``/tmp`` with slurmstepd's message.
"""

from __future__ import annotations

import os
from typing import Any, Mapping, NamedTuple, Optional

from parsers.values.filename import FilenameContext, parse_filename_pattern


class BatchPaths(NamedTuple):
    """Resolved paths of the batch step."""

    cwd: str
    chdir_error: Optional[str]
    stdin: str
    stdout: str
    stderr: str
    append: bool


def filename_context(desc: Mapping[str, Any], node_name: str, step_id: Optional[int] = None,
                     node_index: int = 0, task_id: int = 0) -> FilenameContext:
    """The pattern context of this job (and step/node/task)."""
    return FilenameContext(
        job_id=int(desc["job_id"]), step_id=step_id,
        array_job_id=desc.get("array_job_id"), array_task_id=desc.get("array_task_id"),
        user=str(desc["user"]), job_name=str(desc["job_name"]), node_name=node_name,
        node_index=node_index, task_id=task_id,
        restart_count=int(desc.get("restart_count") or 0))


def expand_path(pattern: str, ctx: FilenameContext, workdir: str) -> str:
    """A pattern rendered for ``ctx`` and made absolute against ``workdir``."""
    name = parse_filename_pattern(pattern).render(ctx)
    return name if os.path.isabs(name) else os.path.join(workdir, name)


def batch_paths(desc: Mapping[str, Any], node_name: str) -> BatchPaths:
    """The batch script's working directory and stdio files (parent directories created)."""
    workdir = str(desc["workdir"])
    ctx = filename_context(desc, node_name)
    default = "slurm-%A_%a.out" if desc.get("array_task_id") is not None else "slurm-%j.out"
    stdout = expand_path(desc.get("output") or default, ctx, workdir)
    stderr = expand_path(desc["error"], ctx, workdir) if desc.get("error") else stdout
    stdin = expand_path(desc["input"], ctx, workdir) if desc.get("input") else os.devnull
    for path in {stdout, stderr}:
        parent = os.path.dirname(path)
        if parent:
            try:
                os.makedirs(parent, exist_ok=True)
            except OSError:
                pass
    cwd, error = workdir, None
    if not os.path.isdir(workdir):
        cwd = "/tmp"
        error = (f"slurmstepd: error: couldn't chdir to `{workdir}': No such file or "
                 "directory: going to /tmp instead")
    return BatchPaths(cwd, error, stdin, stdout, stderr, desc.get("open_mode") == "append")
