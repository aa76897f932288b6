"""The job description of a platform run, from the script's ``#SBATCH`` header and the
platform's facts.

No translator wrote a ``job.json`` for a job another platform started, so the runtime builds
one as ``sbatch`` would: the script's directives, then the ``SBATCH_*`` variables, then what
the platform decided as if given on the command line (``--nodes=<its node count>``, and
``--gpus-per-node=<its GPUs>`` when the script asks for a different count), which wins as the
command line wins in Slurm; a warning says so. The description is
:func:`parsers.job_description.describe_job`'s, with what a platform run does differently:
output to the container's own standard output, no array, no dependency.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from parsers.allocation import Allocation, NodeShape, allocate
from parsers.job_description import describe_job
from parsers.jobspec import JobSpec, SubmitContext
from parsers.sbatch_input import build_job, load_script, split_command_line

#: Default batch output in platform mode: the node's own standard output (the platform's log).
PLATFORM_OUTPUT = "/dev/stdout"
#: Options that make no sense for a job the platform already started: ignored with a warning.
IGNORED_IN_PLATFORM_MODE = (
    ("array", "the platform runs one job"),
    ("dependency", "the platform started the job"),
    ("begin", "the platform started the job"),
    ("hold", "the platform started the job"),
)


class PlatformJob(NamedTuple):
    """The description and what to warn about."""

    description: Dict[str, Any]
    warnings: Tuple[str, ...]


class Facts(NamedTuple):
    """What the description needs from the platform and this container."""

    job_id: int
    cluster_name: str
    node_count: Optional[int]
    gpus_per_node: Optional[int]
    cpus_per_node: Optional[int]
    cwd: str
    host: str
    user: str
    uid: int
    gid: int
    group: str


def parse_script(script_path: str, text: str, script_args: Sequence[str],
                 environ: Mapping[str, str], overrides: Sequence[str] = ()) -> JobSpec:
    """The job ``sbatch <overrides> <script_path> <script_args>`` would submit (raises
    SlurmInputError as sbatch would)."""
    command_line = split_command_line(list(overrides) + [script_path] + list(script_args))
    script = load_script(command_line, text, script_path)
    return build_job(command_line, environ, script)[0]


def platform_job(script_path: str, text: str, script_args: Sequence[str],
                 environ: Mapping[str, str], facts: Facts) -> PlatformJob:
    """The description of this platform run (SlurmInputError for a bad script)."""
    warnings: List[str] = []
    shape = NodeShape(cpus=facts.cpus_per_node, gpus=None, memory_mb=None)
    overrides: List[str] = []
    job = parse_script(script_path, text, script_args, environ)
    if facts.node_count is not None:
        asked = allocate(job, shape).node_count
        if job.nodes is not None and asked != facts.node_count:
            warnings.append(f"the script asks for {asked} node(s); the platform started "
                            f"{facts.node_count}: the job runs on {facts.node_count}")
        overrides.append(f"--nodes={facts.node_count}")
        job = parse_script(script_path, text, script_args, environ, overrides)
    allocation = allocate(job, shape)
    if facts.gpus_per_node is not None and allocation.gpus_per_node != facts.gpus_per_node:
        if allocation.gpus_per_node:
            warnings.append(f"the script asks for {allocation.gpus_per_node} GPU(s) per node; "
                            f"the platform gives {facts.gpus_per_node}")
        overrides.append(f"--gpus-per-node={facts.gpus_per_node}")
        job = parse_script(script_path, text, script_args, environ, overrides)
        allocation = allocate(job, shape)
    for field, why in IGNORED_IN_PLATFORM_MODE:
        if getattr(job, field):
            warnings.append(f"--{field} has no effect in platform mode: {why}")
    warnings += [w.message for w in job.warnings] + list(allocation.warnings)
    return PlatformJob(describe(job, allocation, facts, environ), tuple(warnings))


def describe(job: JobSpec, allocation: Allocation, facts: Facts,
             environ: Mapping[str, str]) -> Dict[str, Any]:
    """The description :func:`parsers.job_description.describe_job` gives, for a job the
    platform started: batch output to this container's own standard output unless the
    script names a file, the job name always exported, no dependency."""
    workdir = os.path.normpath(os.path.join(facts.cwd, job.chdir)) if job.chdir else facts.cwd
    context = SubmitContext(cwd=facts.cwd, host=facts.host, user=facts.user, uid=facts.uid,
                            gid=facts.gid, group=facts.group)
    description = describe_job(job, allocation, context, facts.job_id, facts.cluster_name,
                               workdir, environ)
    output = job.output or PLATFORM_OUTPUT
    description.update(job_name_exported=True, output=output, dependency=None,
                       open_mode=job.open_mode or _append_to_own_stdout(output),
                       array=None, array_indices=None)
    return description


def _append_to_own_stdout(output: str) -> Optional[str]:
    """``append`` when the batch output is this process's standard output and that is a
    file: the batch step opens its output truncating, which would erase the lines already
    in the file (a pipe, a platform's log collector, is not truncated)."""
    if output != PLATFORM_OUTPUT:
        return None
    try:
        import stat

        return "append" if stat.S_ISREG(os.fstat(1).st_mode) else None
    except OSError:
        return None
