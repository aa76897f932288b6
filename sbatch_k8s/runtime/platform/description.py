"""The job description of a platform run, from the script's ``#SBATCH`` header and the
platform's facts.

No translator wrote a ``job.json`` for a job another platform started, so the runtime builds
one as ``sbatch`` would: the script's directives, then the ``SBATCH_*`` variables, then what
the platform decided as if given on the command line (``--nodes=<its node count>``, and
``--gpus-per-node=<its GPUs>`` when the script asks for a different count), which wins as the
command line wins in Slurm; a warning says so. The fields are those of
:func:`translators.job_description.describe_job` (the pod side cannot import translators;
``tests/platform/test_description.py`` keeps the two in step).
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from parsers.allocation import Allocation, NodeShape, allocate, gres_gpus
from parsers.jobspec import JobSpec
from parsers.sbatch import build_job, load_script, split_command_line

DESCRIPTION_VERSION = 1
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


def _gpu_text(counts: Tuple[Any, ...]) -> Optional[str]:
    if not counts:
        return None
    return ",".join(f"{c.type}:{c.count}" if c.type else str(c.count) for c in counts)


def _given_raw(job: JobSpec, name: str) -> Optional[str]:
    for record in reversed(job.given):
        if record.name == name:
            return record.raw
    return None


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
    """The description's fields (as :func:`translators.job_description.describe_job`)."""
    workdir = os.path.normpath(os.path.join(facts.cwd, job.chdir)) if job.chdir else facts.cwd
    signal = None
    if job.signal is not None:
        signal = {"number": job.signal.signal_number, "name": job.signal.signal_name,
                  "seconds_before_end": job.signal.seconds_before_end,
                  "batch_only": job.signal.batch_only}
    output = job.output or PLATFORM_OUTPUT
    return {
        "version": DESCRIPTION_VERSION, "job_id": facts.job_id, "job_name": job.job_name,
        "job_name_exported": True, "array_job_id": None, "array_task_id": None,
        "array": None, "array_indices": None, "user": facts.user, "uid": facts.uid,
        "gid": facts.gid, "group": facts.group, "submit_dir": facts.cwd,
        "submit_host": facts.host, "cluster_name": facts.cluster_name,
        "partition": job.partition, "account": job.account, "qos": job.qos,
        "node_count": allocation.node_count,
        "tasks_per_node": list(allocation.tasks_per_node),
        "cpus_per_node": list(allocation.cpus_per_node), "ntasks": allocation.ntasks,
        "ntasks_per_node": job.ntasks_per_node, "cpus_per_task": job.cpus_per_task,
        "gpus_per_node_count": allocation.gpus_per_node,
        "gpus_on_nodes": list(allocation.gpus_on_nodes),
        "gpus_requested": bool(job.gpus or job.gpus_per_node or job.gpus_per_task
                               or gres_gpus(job)),
        "gpus": _gpu_text(job.gpus), "gpus_per_node": _given_raw(job, "gpus-per-node"),
        "gpus_per_task": _gpu_text(job.gpus_per_task), "cpus_per_gpu": job.cpus_per_gpu,
        "mem_per_node_mb": job.mem_per_node_mb, "mem_per_cpu_mb": job.mem_per_cpu_mb,
        "mem_per_gpu_mb": job.mem_per_gpu_mb, "time_limit_min": job.time_limit_min,
        "signal": signal, "output": output, "error": job.error, "input": job.input,
        "open_mode": job.open_mode or _append_to_own_stdout(output), "workdir": workdir,
        "export": _given_raw(job, "export"), "environment": dict(environ),
        "script_name": job.script.display_name, "script_args": list(job.script.args),
        "dependency": None, "distribution": job.distribution.format()
        if job.distribution else None, "exclusive": job.exclusive,
        "overcommit": job.overcommit, "requeue": job.requeue,
        "container_image": job.container_image,
        "container_mounts": [list(m) for m in job.container_mounts],
        "container_workdir": job.container_workdir, "wait_all_nodes": job.wait_all_nodes,
    }


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
