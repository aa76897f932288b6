"""Shared helpers of the pod-side option/allocation/step tests: a job submitted as sbatch
would (no I/O), its allocation on the emulated cluster's nodes, its description and the
environment srun sees inside it.

The cluster is the one the observations in ../slurm-observations were recorded on: nodes
``n1..n4`` with 4 CPUs, 4 GPUs and 4000 MB each (reference: slurm-observations/SUMMARY.md).
"""

from __future__ import annotations

import shlex
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from parsers.allocation import Allocation, NodeShape, allocate
from parsers.jobspec import JobSpec, SubmitContext, SubmitOptions
from parsers.sbatch_input import build_job, load_script, split_command_line

#: The emulated nodes of the observations (CPUs=4, RealMemory=4000, gpu:4).
SHAPE = NodeShape(cpus=4, gpus=4, memory_mb=4000)
SCRIPT = "#!/bin/bash\nsrun hostname\n"
CONTEXT = SubmitContext(cwd="/tmp/obs", host="vm", user="root", uid=0, gid=0, group="root")


def words(args: Union[str, Sequence[str]]) -> List[str]:
    """Shell words of ``args`` (a string is split like a shell would)."""
    return shlex.split(args) if isinstance(args, str) else list(args)


def submit(
    text: Optional[str] = SCRIPT,
    args: Union[str, Sequence[str]] = "job.sh",
    env: Optional[Mapping[str, str]] = None,
) -> Tuple[JobSpec, SubmitOptions]:
    """``sbatch <args>`` with ``text`` as the script file's content (read from stdin when
    ``args`` names no script), in the environment ``env``."""
    command_line = split_command_line(words(args))
    script = load_script(command_line, text, command_line.script_path)
    return build_job(command_line, dict(env or {}), script)


def job_for(args: Union[str, Sequence[str]]) -> JobSpec:
    """The job of ``sbatch <args> job.sh`` (plain script, empty environment)."""
    return submit(SCRIPT, words(args) + ["job.sh"])[0]


def allocation_for(args: Union[str, Sequence[str]], shape: NodeShape = SHAPE) -> Allocation:
    """What ``sbatch <args> job.sh`` is allocated on nodes of ``shape``."""
    return allocate(job_for(args), shape)


def node_names(count: int) -> List[str]:
    """The emulated cluster's node names, in allocation order."""
    return [f"n{i + 1}" for i in range(count)]


def describe(
    args: Union[str, Sequence[str]],
    job_id: int = 29,
    shape: NodeShape = SHAPE,
    text: str = SCRIPT,
    env: Optional[Mapping[str, str]] = None,
    **extra: Any,
) -> Dict[str, Any]:
    """The job description (``job.json``) of ``sbatch <args> job.sh``: what the pods read.
    ``extra`` goes to ``describe_job`` (array ids)."""
    from parsers.job_description import describe_job

    job, _ = submit(text, words(args) + ["job.sh"], env)
    allocation = allocate(job, shape)
    return describe_job(job, allocation, CONTEXT, job_id, "realslurm", CONTEXT.cwd, {},
                        **extra)
