"""Where the batch script reads and writes: Slurm's file-name patterns made into paths.

``--output`` defaults to ``slurm-%j.out`` (arrays ``slurm-%A_%a.out``); ``--error`` defaults to
the output file; relative names are relative to the job's working directory. A working
directory missing on node 0 sends the script to ``/tmp`` with slurmstepd's message, and
relative names then resolve in ``/tmp`` (see :mod:`sbatch_k8s.runtime.stepd.task_files`: the missing
directory is never created).
"""

from __future__ import annotations

import os
from typing import Any, Mapping, NamedTuple, Optional, Tuple

from parsers.values.filename import FilenameContext, parse_filename_pattern
from sbatch_k8s.runtime.stepd.task_files import resolve, working_directory


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


def render_name(pattern: str, ctx: FilenameContext) -> str:
    """A pattern rendered for ``ctx`` (relative names stay relative: a node resolves them
    against the directory its tasks run in)."""
    return parse_filename_pattern(pattern).render(ctx)


def batch_paths(desc: Mapping[str, Any], node_name: str) -> BatchPaths:
    """The batch script's working directory and stdio files. Nothing is created here (the
    login side of the local backend asks too); a working directory missing on this node
    gives ``/tmp``, slurmstepd's message, and relative names resolved in ``/tmp``."""
    workdir = str(desc["workdir"])
    cwd, error = working_directory(workdir)
    stdout, stderr = _output_paths(desc, node_name, cwd)
    ctx = filename_context(desc, node_name)
    stdin = resolve(render_name(desc["input"], ctx), cwd) if desc.get("input") else os.devnull
    return BatchPaths(cwd, error, stdin, stdout, stderr, desc.get("open_mode") == "append")


def submit_side_paths(desc: Mapping[str, Any], node_name: str) -> Tuple[str, str]:
    """The batch stdout and stderr files as the job's working directory names them (where a
    client rebuilds them from node 0's log; :mod:`sbatch_k8s.runtime.log_stream.tee`), even when
    node 0 runs in ``/tmp`` because it lacks that directory."""
    return _output_paths(desc, node_name, str(desc["workdir"]))


def _output_paths(desc: Mapping[str, Any], node_name: str, cwd: str) -> Tuple[str, str]:
    """``--output`` (default ``slurm-%j.out``, arrays ``slurm-%A_%a.out``) and ``--error``
    (default: the output file) rendered and resolved against ``cwd``."""
    ctx = filename_context(desc, node_name)
    default = "slurm-%A_%a.out" if desc.get("array_task_id") is not None else "slurm-%j.out"
    stdout = resolve(render_name(desc.get("output") or default, ctx), cwd)
    stderr = resolve(render_name(desc["error"], ctx), cwd) if desc.get("error") else stdout
    return stdout, stderr
