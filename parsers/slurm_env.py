"""The ``SLURM_*`` environment of a batch script and of each task, with Slurm's formats.

Names and value formats follow Slurm (``env.c``: ``env_array_for_batch_job``,
``env_array_for_step``, ``setup_env``) as observed on a real Slurm 22.05: run-length lists
(``2(x3),1``), compressed hostlists, per-task ranks. The inputs are the job description
(``job.json``: see :mod:`parsers.job_description`), the node names, and for tasks the
step's layout — so the runtime computes them without any controller.

GPUs follow slurmd's GPU plugin (``gres_common_gpu_set_env``): the batch step gets the job's
GPUs on its node (``SLURM_JOB_GPUS``), each task its step's (``SLURM_STEP_GPUS``), both with
the device lists of :data:`DEVICE_VARIABLES`. A step that has no GPUs (a step of an
``--exclusive`` job that asked for none) has none of :data:`STEP_GPU_VARIABLES`, even though
srun's own environment, the batch step's, has them: :func:`inherited_environment` drops them.

A job with a contract profile (``contract_profile``: a partition's ``contract``,
``--k8s-contract``) also gets its platform's variables, node by node
(:func:`profile_variables`, :mod:`parsers.platforms.contract_profiles`).
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from parsers.platforms.contract_profiles import PROFILES, profile_environment
from parsers.platforms.contract_facts import node_facts
from parsers.platforms.contract_variables import TaskView, contract_task_variables
from parsers.step_layout import StepLayout
from parsers.steps import StepRequest
from parsers.values.hostlist import compress_hostlist

Description = Mapping[str, Any]
#: MASTER_PORT from the job id where nothing chose one: 15000 + its last four digits, the
#: port a training framework's Slurm detection derives when MASTER_PORT is unset (so both
#: ways agree), distinct for the jobs running at once (10,000 ids apart at least) even where
#: pods share one network stack, which a fixed port is not: torch's store binds every
#: address of its host.
PORT_FROM_JOB_ID = (15000, 10000)
DEFAULT_QOS = "normal"
#: The device lists the GPU plugin sets to the same ids (gres.conf's default flags: nvidia,
#: amd_rsmi, opencl, oneapi).
DEVICE_VARIABLES = ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
                    "ZE_AFFINITY_MASK")
#: What the GPU plugin sets for each step, or clears when the step has no GPUs.
STEP_GPU_VARIABLES = ("SLURM_STEP_GPUS", "SLURM_GPUS_ON_NODE") + DEVICE_VARIABLES


def run_length(counts: Sequence[int]) -> str:
    """Slurm's compressed count list: ``[2, 2, 2, 1]`` → ``2(x3),1``."""
    parts: List[str] = []
    i = 0
    while i < len(counts):
        j = i
        while j + 1 < len(counts) and counts[j + 1] == counts[i]:
            j += 1
        reps = j - i + 1
        parts.append(f"{counts[i]}(x{reps})" if reps > 1 else str(counts[i]))
        i = j + 1
    return ",".join(parts)


def node_gpu_ids(desc: Description, node_index: int) -> List[int]:
    """GPU indices the job has on node ``node_index`` (pods see 0..n-1; the local backend
    assigns): the node's share (``gpus_on_nodes``) of what its pod holds."""
    ids = desc.get("gpu_ids")
    held = list(ids[node_index]) if ids else list(
        range(int(desc.get("gpus_per_node_count") or 0)))
    shares = desc.get("gpus_on_nodes")
    return held[:shares[node_index]] if shares else held


def _ids(values: Sequence[int]) -> str:
    return ",".join(str(v) for v in values)


def _set_if(env: Dict[str, str], name: str, value: Optional[Any]) -> None:
    if value is not None and value != "":
        env[name] = str(value)


def job_environment(desc: Description, names: Sequence[str]) -> Dict[str, str]:
    """Variables that describe the job; identical on every node, in batch and tasks."""
    nodelist = compress_hostlist(names)
    env: Dict[str, str] = {
        "SLURM_CLUSTER_NAME": str(desc["cluster_name"]),
        "SLURM_JOB_ID": str(desc["job_id"]),
        "SLURM_JOBID": str(desc["job_id"]),
        "SLURM_JOB_NUM_NODES": str(len(names)),
        "SLURM_NNODES": str(len(names)),
        "SLURM_JOB_NODELIST": nodelist,
        "SLURM_NODELIST": nodelist,
        "SLURM_JOB_PARTITION": str(desc.get("partition") or "debug"),
        "SLURM_JOB_CPUS_PER_NODE": run_length(desc["cpus_per_node"]),
        "SLURM_TASKS_PER_NODE": run_length(desc["tasks_per_node"]),
        "SLURM_JOB_ACCOUNT": str(desc.get("account") or desc["user"]),
        "SLURM_JOB_QOS": str(desc.get("qos") or DEFAULT_QOS),
        "SLURM_JOB_UID": str(desc["uid"]),
        "SLURM_JOB_USER": str(desc["user"]),
        "SLURM_JOB_GID": str(desc["gid"]),
        "SLURM_SUBMIT_DIR": str(desc["submit_dir"]),
        "SLURM_SUBMIT_HOST": str(desc["submit_host"]),
        "SLURM_PRIO_PROCESS": "0",
    }
    if desc.get("job_name_exported", True):
        env["SLURM_JOB_NAME"] = str(desc["job_name"])
    if desc.get("ntasks") is not None:
        env["SLURM_NTASKS"] = env["SLURM_NPROCS"] = str(desc["ntasks"])
    _set_if(env, "SLURM_NTASKS_PER_NODE", desc.get("ntasks_per_node"))
    _set_if(env, "SLURM_CPUS_PER_TASK", desc.get("cpus_per_task"))
    _set_if(env, "SLURM_MEM_PER_NODE", desc.get("mem_per_node_mb"))
    _set_if(env, "SLURM_MEM_PER_CPU", desc.get("mem_per_cpu_mb"))
    _set_if(env, "SLURM_MEM_PER_GPU", desc.get("mem_per_gpu_mb"))
    _set_if(env, "SLURM_GPUS", desc.get("gpus"))
    _set_if(env, "SLURM_GPUS_PER_NODE", desc.get("gpus_per_node"))
    _set_if(env, "SLURM_GPUS_PER_TASK", desc.get("gpus_per_task"))
    _set_if(env, "SLURM_CPUS_PER_GPU", desc.get("cpus_per_gpu"))
    _set_if(env, "SLURM_JOB_DEPENDENCY", desc.get("dependency"))
    _set_if(env, "SLURM_DISTRIBUTION", desc.get("distribution"))
    _set_if(env, "SLURM_EXPORT_ENV", desc.get("export") if desc.get("export") not in (
        None, "ALL") else None)
    _set_if(env, "SLURM_RESTART_COUNT", desc.get("restart_count") or None)
    if desc.get("open_mode"):
        env["SLURM_OPEN_MODE"] = "a" if desc["open_mode"] == "append" else "t"
    if desc.get("array_task_id") is not None:
        array = desc.get("array") or {}
        env["SLURM_ARRAY_JOB_ID"] = str(desc["array_job_id"])
        env["SLURM_ARRAY_TASK_ID"] = str(desc["array_task_id"])
        env["SLURM_ARRAY_TASK_COUNT"] = str(array.get("count", 1))
        env["SLURM_ARRAY_TASK_MIN"] = str(array.get("min", desc["array_task_id"]))
        env["SLURM_ARRAY_TASK_MAX"] = str(array.get("max", desc["array_task_id"]))
        env["SLURM_ARRAY_TASK_STEP"] = str(array.get("step", 1))
    return env


def _gpu_vars(env: Dict[str, str], list_name: str, listed: Sequence[int], on_node: int,
              visible: Sequence[int]) -> None:
    """The GPU plugin's variables: ``list_name`` (``SLURM_JOB_GPUS`` or ``SLURM_STEP_GPUS``),
    the count on the node, and the device lists."""
    if not on_node:
        return
    env[list_name] = _ids(listed)
    env["SLURM_GPUS_ON_NODE"] = str(on_node)
    for name in DEVICE_VARIABLES:
        env[name] = _ids(visible)


def master_port(desc: Description) -> str:
    """The job's ``MASTER_PORT`` default: the description's ``master_port`` (the local
    backend's, chosen per run so that no other job on its shared node addresses has it),
    else the port of its job id (:data:`PORT_FROM_JOB_ID`)."""
    if desc.get("master_port"):
        return str(desc["master_port"])
    base, span = PORT_FROM_JOB_ID
    return str(base + int(desc["job_id"]) % span)


def rendezvous_defaults(base: Mapping[str, str], names: Sequence[str],
                        port: str) -> Dict[str, str]:
    """``MASTER_ADDR`` (node 0) and ``MASTER_PORT`` (``port``: :func:`master_port`) for
    torch-style rendezvous, unless set."""
    env: Dict[str, str] = {}
    if "MASTER_ADDR" not in base:
        env["MASTER_ADDR"] = names[0]
    if "MASTER_PORT" not in base:
        env["MASTER_PORT"] = port
    return env


def profile_variables(desc: Description, names: Sequence[str], addresses: Sequence[str],
                      node_index: int, environ: Mapping[str, str], files_dir: str
                      ) -> Dict[str, str]:
    """What the job's contract profile gives node ``node_index`` (nothing without one): its
    platform's variables made from Slurm's facts, with ``MASTER_ADDR``/``MASTER_PORT`` as
    ``environ`` has them and the profile's files in ``files_dir``."""
    profile = desc.get("contract_profile")
    if profile not in PROFILES:
        return {}
    port = environ.get("MASTER_PORT", "").strip()
    facts = node_facts(node_index, names, len(node_gpu_ids(desc, node_index)),
                       int(port) if port.isascii() and port.isdigit() else
                       int(master_port(desc)), int(desc["job_id"]), addresses,
                       environ.get("MASTER_ADDR", ""), files_dir,
                       [node_gpu_ids(desc, i) for i in range(len(names))])
    return profile_environment(str(profile), facts)


def batch_environment(desc: Description, names: Sequence[str], node_index: int = 0) -> Dict[
        str, str]:
    """Slurm's variables for the batch script, on node ``node_index`` (node 0 in practice)."""
    env = job_environment(desc, names)
    node = names[node_index]
    env.update({
        "SLURM_NODEID": str(node_index),
        "SLURM_PROCID": "0",
        "SLURM_LOCALID": "0",
        "SLURM_GTIDS": "0",
        "SLURMD_NODENAME": node,
        "SLURM_TOPOLOGY_ADDR": node,
        "SLURM_TOPOLOGY_ADDR_PATTERN": "node",
        "SLURM_CPUS_ON_NODE": str(desc["cpus_per_node"][node_index]),
        "ENVIRONMENT": "BATCH",
        "HOSTNAME": node,
    })
    gpus = node_gpu_ids(desc, node_index)
    _gpu_vars(env, "SLURM_JOB_GPUS", gpus, len(gpus), gpus)
    return env


def step_environment(desc: Description, names: Sequence[str], layout: StepLayout,
                     request: StepRequest, step_id: int, launch_host: str,
                     launch_port: int, umask: str) -> Dict[str, str]:
    """Variables shared by every task of a step (srun overwrites the job's counts with the
    step's, unless ``--preserve-env``)."""
    step_names = [names[i] for i in layout.node_indices]
    counts = [len(r) for r in layout.ranks]
    env = {
        "SLURM_STEP_ID": str(step_id),
        "SLURM_STEPID": str(step_id),
        "SLURM_STEP_NODELIST": compress_hostlist(step_names),
        "SLURM_STEP_NUM_NODES": str(len(step_names)),
        "SLURM_STEP_NUM_TASKS": str(layout.ntasks),
        "SLURM_STEP_TASKS_PER_NODE": run_length(counts),
        "SLURM_STEP_LAUNCHER_PORT": str(launch_port),
        "SLURM_SRUN_COMM_HOST": launch_host,
        "SLURM_SRUN_COMM_PORT": str(launch_port),
        "SLURM_LAUNCH_NODE_IPADDR": launch_host,
        "SLURM_DISTRIBUTION": layout.distribution,
        "SLURM_UMASK": umask,
    }
    if not request.preserve_env:
        env.update({
            "SLURM_NTASKS": str(layout.ntasks),
            "SLURM_NPROCS": str(layout.ntasks),
            "SLURM_NNODES": str(len(step_names)),
            "SLURM_TASKS_PER_NODE": run_length(counts),
        })
    if request.label:
        env["SLURM_LABELIO"] = "1"
    if request.cpus_per_task:
        env["SLURM_CPUS_PER_TASK"] = str(request.cpus_per_task)
    return env


def inherited_environment(environ: Mapping[str, str], desc: Description) -> Dict[str, str]:
    """srun's environment as its tasks inherit it: in a job with GPUs, without the variables
    the GPU plugin sets for each step itself (:data:`STEP_GPU_VARIABLES`), so a step without
    GPUs has none of them. ``SLURM_JOB_GPUS`` stays: tasks see the batch node's list."""
    if not int(desc.get("gpus_per_node_count") or 0):
        return dict(environ)
    return {k: v for k, v in environ.items() if k not in STEP_GPU_VARIABLES}


def _step_gpus(desc: Description, node_index: int, request: StepRequest) -> List[int]:
    """The step's GPUs on a node: the first ``--gres=gpu:n``/``--gpus-per-node`` of the
    job's there; all of them when the step or the job asked for GPUs otherwise; none in a
    job that holds GPUs it did not ask for (``--exclusive``) unless the step asks."""
    gpus = node_gpu_ids(desc, node_index)
    per_node = sum(g.count for g in request.gres if getattr(g, "name", "") == "gpu") or \
        sum(getattr(g, "count", 0) for g in request.gpus_per_node)
    if per_node:
        return gpus[:per_node]
    if request.gpus or request.gpus_per_task or desc.get("gpus_requested", True):
        return gpus
    return []


def task_environment(desc: Description, names: Sequence[str], layout: StepLayout,
                     request: StepRequest, rank: int,
                     node_variables: Optional[Mapping[int, Mapping[str, str]]] = None
                     ) -> Dict[str, str]:
    """Variables that differ per task: ranks, node, GPUs, and ``node_variables`` of its node
    (by job node index: the contract profile's, :func:`profile_variables`). The runtime
    lays them over :func:`inherited_environment` and :func:`step_environment`."""
    position = layout.node_of(rank)
    node_index = layout.node_indices[position]
    ranks = layout.ranks[position]
    local = ranks.index(rank)
    node = names[node_index]
    env = {
        "SLURM_PROCID": str(rank),
        "SLURM_LOCALID": str(local),
        "SLURM_NODEID": str(position),
        "SLURM_GTIDS": _ids(ranks),
        "SLURMD_NODENAME": node,
        "SLURM_TOPOLOGY_ADDR": node,
        "SLURM_TOPOLOGY_ADDR_PATTERN": "node",
        "SLURM_CPUS_ON_NODE": str(desc["cpus_per_node"][node_index]),
    }
    step_gpus = list(layout.gpu_ids[position]) if layout.gpu_ids else \
        _step_gpus(desc, node_index, request)
    per_task = sum(getattr(g, "count", 0) for g in request.gpus_per_task)
    if not per_task and not request.gpus_per_task and desc.get("gpus_per_task"):
        per_task = int(str(desc["gpus_per_task"]).split(":")[-1])
    mine = step_gpus
    if per_task and step_gpus:
        mine = [step_gpus[(local * per_task + k) % len(step_gpus)] for k in range(per_task)]
    _gpu_vars(env, "SLURM_STEP_GPUS", mine, len(step_gpus), mine)
    env.update((node_variables or {}).get(node_index, {}))
    profile = PROFILES.get(str(desc.get("contract_profile")))
    contract = desc.get("contract_variables") or (profile.task_variables if profile else None)
    env.update(contract_task_variables(contract,
                                       TaskView(rank, layout.ntasks, local, position, mine)))
    return env
