"""The job description: the one document the runtime reads to become a Slurm job.

It holds plain Slurm facts — ids, names, the allocation, the options the runtime acts on, and
the job's environment after ``--export`` — so the pod side needs nothing but the description,
the script, and its contract adapter.

It is stored in two parts (:func:`split_description`). The environment users export carries
their secrets (``HF_TOKEN``, ``AWS_SECRET_ACCESS_KEY``, ``WANDB_API_KEY``), and so does the
``--export`` text (``--export=ALL,HF_TOKEN=…``): these :data:`PRIVATE_FIELDS` go into the job's
Secret (key ``environment.json``, mounted beside the token at ``/etc/sbatch-k8s/token``; the
local backend writes a mode-0600 file beside the token). Everything else is ``job.json``
(ConfigMap key, mounted at ``/etc/sbatch-k8s/job``). The runtime merges the two back.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, TypedDict

from parsers.allocation import Allocation, gres_gpus
from parsers.jobspec import SCRIPT_FROM_STDIN, JobSpec, SubmitContext

DESCRIPTION_VERSION = 1
#: Description fields that may hold secrets: never in ``job.json`` (a ConfigMap), always in
#: the private part (the job's Secret).
PRIVATE_FIELDS = ("environment", "export")

#: Login-side variables not carried into pods by ``--export=ALL`` on Kubernetes: they describe
#: the login machine, not the container (a ``*`` suffix matches a prefix).
LOGIN_ONLY_VARIABLES = (
    "PATH", "LD_LIBRARY_PATH", "HOME", "HOSTNAME", "PWD", "OLDPWD", "SHELL", "TERM", "TMPDIR",
    "DISPLAY", "KUBECONFIG", "MAIL", "SHLVL", "_", "LS_COLORS", "SSH_*", "XDG_*", "DBUS_*",
    "SBATCHK8S_*", "SBATCH_K8S_*", "VIRTUAL_ENV", "PYTHONHOME", "CONDA_*",
)


class JobDescription(TypedDict):
    """The description's fields (:func:`describe_job` writes every one; ``version`` guards
    them). The runtime reads only these and :class:`DescriptionExtras`'; a test holds both
    sides to this list."""

    version: int
    job_id: int
    job_name: str
    job_name_exported: bool
    array_job_id: Optional[int]
    array_task_id: Optional[int]
    array: Optional[Dict[str, Any]]
    array_indices: Optional[List[int]]
    user: str
    uid: int
    gid: int
    group: str
    submit_dir: str
    submit_host: str
    cluster_name: str
    partition: Optional[str]
    account: Optional[str]
    qos: Optional[str]
    node_count: int
    tasks_per_node: List[int]
    cpus_per_node: List[int]
    ntasks: int
    ntasks_per_node: Optional[int]
    cpus_per_task: Optional[int]
    gpus_per_node_count: int
    gpus_on_nodes: List[int]
    gpus_requested: bool
    gpus: Optional[str]
    gpus_per_node: Optional[str]
    gpus_per_task: Optional[str]
    cpus_per_gpu: Optional[int]
    mem_per_node_mb: Optional[int]
    mem_per_cpu_mb: Optional[int]
    mem_per_gpu_mb: Optional[int]
    time_limit_min: Optional[int]
    signal: Optional[Dict[str, Any]]
    output: Optional[str]
    error: Optional[str]
    input: Optional[str]
    open_mode: Optional[str]
    acctg_freq: Optional[str]
    workdir: str
    export: Optional[str]
    environment: Dict[str, str]
    script_name: str
    script_args: List[str]
    dependency: Optional[str]
    distribution: Optional[str]
    exclusive: Optional[str]
    overcommit: bool
    requeue: Optional[bool]
    container_image: Optional[str]
    container_mounts: List[List[str]]
    container_workdir: Optional[str]
    wait_all_nodes: Optional[bool]


class DescriptionExtras(TypedDict, total=False):
    """Fields only some descriptions have."""

    #: The job's contract profile when not ``slurm`` (:func:`parsers.platforms.
    #: contract_profiles.profile_entry`).
    contract_profile: str
    #: Node 0 copies the job's output to the pod log (the working directory is not shared).
    stream_output: bool
    #: Platform mode: the variables the platform's contract gives each task.
    contract_variables: Dict[str, str]
    #: The local backend's GPUs per node for this run (its supervisor writes them).
    gpu_ids: List[List[int]]
    #: The local backend's ``MASTER_PORT`` for this run (chosen so no other job has it).
    master_port: int
    #: How often the job was requeued (``SLURM_RESTART_COUNT``); a requeue's next run sets it.
    restart_count: int


def description_fields() -> Tuple[str, ...]:
    """Every field a description may have: :class:`JobDescription`'s, then the extras'."""
    return tuple(JobDescription.__annotations__) + tuple(DescriptionExtras.__annotations__)


def read_description(public: Mapping[str, Any], private: Mapping[str, Any]) -> JobDescription:
    """The description again from its two stored parts (the inverse of
    :func:`split_description`): ``job.json``, completed by ``environment.json``."""
    merged: Dict[str, Any] = dict(public)
    merged.update(private)
    return merged  # type: ignore[return-value]


def _matches(name: str, patterns: Iterable[str]) -> bool:
    for pattern in patterns:
        if pattern.endswith("*") and name.startswith(pattern[:-1]):
            return True
        if name == pattern:
            return True
    return False


def job_environment(
    job: JobSpec, submit_env: Mapping[str, str], drop: Sequence[str] = ()
) -> Dict[str, str]:
    """The environment the batch script starts with: ``--export`` applied to the submission
    environment, minus the ``drop`` patterns (login-only variables for pods)."""
    from parsers.values.export import apply_export, parse_export

    spec = job.export if job.export is not None else parse_export("ALL")
    exported = apply_export(spec, submit_env)
    return {k: v for k, v in sorted(exported.items()) if not _matches(k, drop)}


def _gpu_text(counts: Tuple[Any, ...]) -> Optional[str]:
    if not counts:
        return None
    return ",".join(f"{c.type}:{c.count}" if c.type else str(c.count) for c in counts)


def _given_raw(job: JobSpec, name: str) -> Optional[str]:
    """The raw text of the last occurrence of ``--name`` (as Slurm exports it)."""
    for record in reversed(job.given):
        if record.name == name:
            return record.raw
    return None


def job_name_exported(job: JobSpec) -> bool:
    """Whether the job's environment has ``SLURM_JOB_NAME``: sbatch exports the name it
    knows (``-J``, the script's file name, ``wrap``), not the controller's default
    ``sbatch`` for a script read from stdin."""
    return job.script.origin != SCRIPT_FROM_STDIN or _given_raw(job, "job-name") is not None


def gpus_requested(job: JobSpec) -> bool:
    """Whether the job asked for GPUs (``--gpus*``, ``--gres=gpu``). An ``--exclusive`` job
    holds its nodes' GPUs without asking, and its steps get them only on request."""
    return bool(job.gpus or job.gpus_per_node or job.gpus_per_task or gres_gpus(job))


def describe_job(
    job: JobSpec,
    allocation: Allocation,
    context: SubmitContext,
    job_id: int,
    cluster_name: str,
    workdir: str,
    environment: Mapping[str, str],
    array_job_id: Optional[int] = None,
    array_task_id: Optional[int] = None,
) -> JobDescription:
    """The job description as a JSON-ready dict (keys are stable; ``version`` guards them).

    Arrays: ``array_indices`` lists the task ids in order. One array task per workload has
    ``array_task_id`` set and its own ``job_id``; an array run as one Indexed Job has
    ``job_id`` = ``array_job_id`` and no ``array_task_id``: completion index *i* runs task
    ``array_indices[i]`` as job ``array_job_id + i``.
    """
    array = None
    array_indices = None
    if job.array is not None:
        array = {"count": job.array.count(), "min": job.array.min_index,
                 "max": job.array.max_index, "step": job.array.step_value(),
                 "text": job.array.format()}
        array_indices = list(job.array.indices())
    signal = None
    if job.signal is not None:
        signal = {"number": job.signal.signal_number, "name": job.signal.signal_name,
                  "seconds_before_end": job.signal.seconds_before_end,
                  "batch_only": job.signal.batch_only}
    return {
        "version": DESCRIPTION_VERSION,
        "job_id": job_id,
        "job_name": job.job_name,
        "job_name_exported": job_name_exported(job),
        "array_job_id": array_job_id,
        "array_task_id": array_task_id,
        "array": array,
        "array_indices": array_indices,
        "user": context.user,
        "uid": context.uid,
        "gid": context.gid,
        "group": context.group,
        "submit_dir": context.cwd,
        "submit_host": context.host,
        "cluster_name": cluster_name,
        "partition": job.partition,
        "account": job.account,
        "qos": job.qos,
        "node_count": allocation.node_count,
        "tasks_per_node": list(allocation.tasks_per_node),
        "cpus_per_node": list(allocation.cpus_per_node),
        "ntasks": allocation.ntasks,
        "ntasks_per_node": job.ntasks_per_node,
        "cpus_per_task": job.cpus_per_task,
        "gpus_per_node_count": allocation.gpus_per_node,
        "gpus_on_nodes": list(allocation.gpus_on_nodes),
        "gpus_requested": gpus_requested(job),
        "gpus": _gpu_text(job.gpus),
        "gpus_per_node": _given_raw(job, "gpus-per-node"),
        "gpus_per_task": _gpu_text(job.gpus_per_task),
        "cpus_per_gpu": job.cpus_per_gpu,
        "mem_per_node_mb": job.mem_per_node_mb,
        "mem_per_cpu_mb": job.mem_per_cpu_mb,
        "mem_per_gpu_mb": job.mem_per_gpu_mb,
        "time_limit_min": job.time_limit_min,
        "signal": signal,
        "output": job.output,
        "error": job.error,
        "input": job.input,
        "open_mode": job.open_mode,
        "acctg_freq": job.acctg_freq,
        "workdir": workdir,
        "export": _given_raw(job, "export"),
        "environment": dict(environment),
        "script_name": job.script.display_name,
        "script_args": list(job.script.args),
        "dependency": _given_raw(job, "dependency"),
        "distribution": job.distribution.format() if job.distribution else None,
        "exclusive": job.exclusive,
        "overcommit": job.overcommit,
        "requeue": job.requeue,
        "container_image": job.container_image,
        "container_mounts": [list(m) for m in job.container_mounts],
        "container_workdir": job.container_workdir,
        "wait_all_nodes": job.wait_all_nodes,
    }


def split_description(
    description: Mapping[str, Any]
) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """``(public, private)``: ``description`` without the :data:`PRIVATE_FIELDS` (for
    ``job.json``), and those fields alone (for ``environment.json``)."""
    public = {k: v for k, v in description.items() if k not in PRIVATE_FIELDS}
    private = {k: description[k] for k in PRIVATE_FIELDS if k in description}
    return public, private


def description_to_json(part: Mapping[str, Any]) -> str:
    """One part of the description as the text stored for the runtime (stable bytes)."""
    return json.dumps(dict(part), sort_keys=True, indent=1)
