"""What a node knows about its job, found from the job id alone.

Slurm's ``srun``, ``scontrol``, ``squeue``, ``scancel`` and ``sacct`` inside a job need only
``SLURM_JOB_ID`` (or ``SLURM_JOBID``): slurmd and slurmctld know the rest. Tools that drive
Slurm rely on that and strip the rest of the environment before they call ``srun`` (a
job-step executor keeps the job's identity and drops every other ``SLURM_*``). Our commands
find their job through our own variables (``SBATCHK8S_JOB_DIR``…), so every node also writes
them, with its node name and the settings naming the cluster, into its *node file*
``<node dir>/job-<job id>.json``; a command started without them reads the file of the
``SLURM_JOB_ID`` it has (:func:`with_node_file`) and goes on as if they had been inherited.

The node dir is a fixed path private to the node: a pod's spool (its own ``emptyDir``), a
local node's spool bound there in the node's own mount namespace
(:mod:`sbatch_k8s.runtime.agent.node_namespace`). The file holds paths and settings, never the
token; it is written whole (rename) and readable by its owner only.
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Dict, Mapping, MutableMapping, Optional

from parsers.own_variables import LOGIN, PREFIX, names_of

#: The node dir (see the module docstring); the same path on both backends: a pod's spool
#: (``translators.storage.SPOOL_DIR``).
NODE_DIR = "/tmp/sbatch-k8s"
#: Where a job's processes have the job's directory: present, nothing is missing.
JOB_DIR_VARIABLE = PREFIX + "JOB_DIR"
#: Slurm's job id variables, in the order srun reads them.
JOB_ID_VARIABLES = ("SLURM_JOB_ID", "SLURM_JOBID")
#: The node's own name, as slurmd tells its processes.
NODE_NAME_VARIABLE = "SLURMD_NODENAME"


def file_name(job_id: int) -> str:
    """``job-<id>.json``."""
    return f"job-{int(job_id)}.json"


#: What a pod's own environment says about reaching the API server (the kubelet sets it;
#: the full commands' in-cluster configuration reads it).
API_SERVER_PREFIX = "KUBERNETES_SERVICE_"


def node_variables(environ: Mapping[str, str], node_name: str,
                   job_environment: Mapping[str, Any],
                   node_environ: Mapping[str, str]) -> Dict[str, str]:
    """What the node file keeps: our variables of ``environ`` (the environment the node
    gives its job's processes), the node's name, the :data:`~parsers.own_variables.LOGIN`
    settings the job's exported environment carries (the local backend's state directory and
    configuration: which cluster the commands inside talk to), and where a pod's API server
    is (``node_environ``, the node's own environment)."""
    kept = {k: str(v) for k, v in job_environment.items() if k in names_of(LOGIN)}
    kept.update({k: v for k, v in node_environ.items() if k.startswith(API_SERVER_PREFIX)})
    kept.update({k: v for k, v in environ.items() if k.startswith(PREFIX)})
    kept[NODE_NAME_VARIABLE] = node_name
    return kept


def write_node_file(spool: str, job_id: int, variables: Mapping[str, str]) -> str:
    """Write the node file of job ``job_id`` into ``spool`` (which is, or is bound at,
    :data:`NODE_DIR`); its path."""
    path = os.path.join(spool, file_name(job_id))
    partial = f"{path}.{os.getpid()}.tmp"
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump({"job_id": int(job_id), "variables": dict(variables)}, f)
    os.replace(partial, path)
    return path


def record_node(spool: str, desc: Mapping[str, Any], node_name: str, env: Mapping[str, str],
                node_environ: Mapping[str, str], log: Callable[[str], None]) -> None:
    """Leave what the job's commands need in the node file (:func:`node_variables` of the
    job's process environment ``env``); a node that cannot write it still serves (its
    commands then need our variables), with a line in its log."""
    variables = node_variables(env, node_name, desc.get("environment") or {}, node_environ)
    try:
        write_node_file(spool, int(desc["job_id"]), variables)
    except OSError as e:
        log(f"warning: cannot write the node file in {spool}: {e.strerror}")


def job_id_of(environ: Mapping[str, str]) -> Optional[int]:
    """The job id Slurm's commands would use (``SLURM_JOB_ID``, else ``SLURM_JOBID``)."""
    for name in JOB_ID_VARIABLES:
        text = environ.get(name, "").strip()
        if text.isdigit():
            return int(text)
    return None


def read_node_file(job_id: int, node_dir: str = NODE_DIR) -> Optional[Dict[str, str]]:
    """The variables of job ``job_id``'s node file here; None without one."""
    try:
        with open(os.path.join(node_dir, file_name(job_id))) as f:
            loaded = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(loaded, dict) or loaded.get("job_id") != job_id:
        return None
    variables = loaded.get("variables")
    return {str(k): str(v) for k, v in variables.items()} if isinstance(variables, dict) \
        else None


def with_node_file(environ: Mapping[str, str],
                   node_dir: str = NODE_DIR) -> Mapping[str, str]:
    """``environ`` completed by the node file of its ``SLURM_JOB_ID`` when our variables
    are missing (variables it has win); ``environ`` itself when nothing is missing or there
    is no such file (outside a job, or on a node without a node dir of its own)."""
    if JOB_DIR_VARIABLE in environ:
        return environ
    job_id = job_id_of(environ)
    if job_id is None:
        return environ
    found = read_node_file(job_id, node_dir)
    if not found:
        return environ
    completed = dict(found)
    completed.update(environ)
    return completed


def complete_environment(environ: MutableMapping[str, str], node_dir: str = NODE_DIR) -> None:
    """:func:`with_node_file` in place (a process's own ``os.environ``, which its children
    and node 0's step server get)."""
    completed = with_node_file(environ, node_dir)
    if completed is not environ:
        environ.update(completed)
