"""Contract profiles: the variables and files a platform would give a node, made from
Slurm's facts.

A job whose partition sets ``contract = "<profile>"`` (or that is submitted with
``--k8s-contract=<profile>``) gets, on every node and beside ``SLURM_*``, what that platform
gives its containers (``reference/platforms.md``), so a script written for the platform runs
as one of our jobs. One row per profile (:data:`PROFILES`): its variables (rows of
:mod:`parsers.platforms.contract_facts`, most carrying one Slurm fact both ways), the files the
platform writes (hostfiles, a rank table), the per-task variables
(:mod:`parsers.platforms.contract_variables`) and the platform-mode contract that reads it all back
(:mod:`sbatch_k8s.runtime.platform.contracts`). The file formats and fixed paths are defined
here once and the platform-mode adapters import them; ``tests/platform/test_profiles.py``
reads every profile back through its adapter and gets the Slurm view it was made from.

The runtime computes a node's profile environment where it computes its ``SLURM_*`` ones
(:func:`parsers.slurm_env.profile_variables`) and writes the files into the job's scratch
directory on every node (:mod:`sbatch_k8s.runtime.agent.profile_files`). Pod-side: standard
library only.
"""

from __future__ import annotations

import json
import os
from typing import Dict, NamedTuple, Optional, Tuple

from parsers.platforms.contract_facts import ASCEND_DEVICE_ID, MASTER_ADDR, MASTER_PORT, NNODES, \
    NPROC_PER_NODE, PET_MASTER_ADDR, PET_MASTER_PORT, PET_NNODES, PET_NODE_RANK, \
    PET_NPROC_PER_NODE, RANK, RANK_ID, RANK_SIZE, RDZV_ID, SLOTS, TF_CONFIG, VC_TASK_INDEX, \
    VC_WORKER_HOSTS, VC_WORKER_NUM, WORLD_SIZE_NODES, WORLD_SIZE_PROCESSES, SlurmFacts, \
    Value, Variable
from parsers.platforms.target_names import CONTRACT_PROFILES, DEFAULT_CONTRACT_PROFILE

__all__ = [
    "DEEPSPEED", "DEEPSPEED_HOSTFILE", "FILES_DIRECTORY", "MPICH", "MPICH_HOSTFILE",
    "MPI_HOSTFILE", "OPENMPI", "PROFILES", "PROFILE_NAMES", "Profile", "ProfileFile",
    "RANK_TABLE", "RANK_TABLE_COMPLETED", "RANK_TABLE_NAME", "TF_TYPES", "profile_entry",
    "profile_environment", "profile_files", "profile_variable_names"]

#: Where the runtime writes a job's profile files, under its spool (``SBATCHK8S_SPOOL``).
FILES_DIRECTORY = "contract"
#: The task-training platform's DeepSpeed hostfile (no variable names it).
DEEPSPEED_HOSTFILE = "/job/hostfile"
#: The task-training platform's Horovod hostfiles (OpenMPI's and MPICH's).
MPI_HOSTFILE = "/etc/mpi/hostfile"
MPICH_HOSTFILE = "/etc/mpi/mpich_hostfile"
#: The Ascend rank table's file name (``RANK_TABLE_FILE`` names its directory).
RANK_TABLE_NAME = "jobstart_hccl.json"
RANK_TABLE_COMPLETED = "completed"
#: TF_CONFIG's replica types in node order.
TF_TYPES = ("chief", "master", "worker", "ps", "evaluator")




class ProfileFile(NamedTuple):
    """A file a platform writes into its containers."""

    name: str
    content: Value
    #: Where the platform keeps it, when scripts may name that path literally.
    fixed_path: Optional[str] = None
    #: The profile's variable naming the file ("" when scripts know only the fixed path).
    named_by: str = ""


class Profile(NamedTuple):
    """One platform's view of a node, made from Slurm's facts."""

    name: str
    #: The platform-mode contract that reads these variables and files back.
    reads_as: str
    #: In the order a node's environment lists them.
    variables: Tuple[Variable, ...]
    files: Tuple[ProfileFile, ...] = ()
    #: The row of :data:`parsers.platforms.contract_variables.TASK_VARIABLES` each task gets.
    task_variables: Optional[str] = None
    summary: str = ""


def _hostfile(f: SlurmFacts) -> str:
    """OpenMPI's (and DeepSpeed's) ``host slots=N`` lines, one per node."""
    return "".join(f"{name} slots={f.procs_per_node}\n" for name in f.node_names)


def _mpich_hostfile(f: SlurmFacts) -> str:
    """MPICH's ``host:N`` lines, one per node."""
    return "".join(f"{name}:{f.procs_per_node}\n" for name in f.node_names)


def _tf_config(f: SlurmFacts) -> str:
    """Every node a worker (no parameter server: AllReduce), this one's index."""
    workers = [f"{name}:{f.master_port}" for name in f.node_names]
    return json.dumps({"cluster": {"worker": workers},
                       "task": {"type": "worker", "index": f.node_index},
                       "environment": "cloud"}, separators=(",", ":"))


def _rank_table(f: SlurmFacts) -> str:
    """ModelArts' ``jobstart_hccl.json`` (template 2), already ``completed``: one server per
    node, its GPUs as its cards (in the numbering its tasks' ``ASCEND_DEVICE_ID`` use).
    There is no NPU network: ``device_ip`` is the node's
    address."""
    cards = f.procs_per_node
    servers = [{"devices": [{"device_id": str(d), "device_ip": address}
                            for d in f.gpu_ids(i)],
                "pod_name": name, "server_id": address}
               for i, (name, address) in enumerate(zip(f.node_names, f.addresses))]
    return json.dumps({"group_count": "1", "group_list": [{
        "device_count": str(cards * f.node_count), "group_name": f"job-{f.job_id}",
        "instance_count": str(f.node_count), "instance_list": servers}],
        "status": RANK_TABLE_COMPLETED}, indent=1) + "\n"


DEEPSPEED = ProfileFile("hostfile", _hostfile, DEEPSPEED_HOSTFILE)
OPENMPI = ProfileFile("hostfile", _hostfile, MPI_HOSTFILE, "OMPI_MCA_orte_default_hostfile")
MPICH = ProfileFile("mpich_hostfile", _mpich_hostfile, MPICH_HOSTFILE, "HYDRA_HOST_FILE")
RANK_TABLE = ProfileFile(RANK_TABLE_NAME, _rank_table, named_by="RANK_TABLE_FILE")

#: The rendezvous variables every torch-style profile carries.
_MASTER = (MASTER_ADDR, MASTER_PORT)
#: Kubeflow's ``PET_*`` (torchrun's own variables, as the training operator sets them).
_PET = (PET_MASTER_ADDR, PET_MASTER_PORT, PET_NNODES, PET_NODE_RANK, PET_NPROC_PER_NODE)
#: The task-training platform's PyTorch mode: WORLD_SIZE counts nodes, SLOTS GPUs.
_TASK_TRAINING = _MASTER + (WORLD_SIZE_NODES, RANK, SLOTS)

_ROWS: Tuple[Profile, ...] = (
    Profile("pytorchjob", "pytorchjob", _MASTER + (WORLD_SIZE_PROCESSES, RANK) + _PET,
            summary="Kubeflow PyTorchJob (v1.7+): RANK the pod's index, WORLD_SIZE pods × "
                    "processes, PET_*"),
    Profile("aihub", "aihub", _MASTER + (WORLD_SIZE_PROCESSES, RANK) + _PET,
            summary="AI Hub PyTorchJob: RANK the node's index, WORLD_SIZE the job's GPUs, "
                    "PET_*"),
    Profile("aistation", "aistation", _MASTER + (NNODES, NPROC_PER_NODE, RDZV_ID),
            summary="AIStation Master/Worker: MASTER_*, and the form's NNODES, "
                    "NPROC_PER_NODE, RDZV_ID (the job id: unique per job)"),
    Profile("task-training", "task-training", _TASK_TRAINING,
            summary="task-training platform, PyTorch mode: WORLD_SIZE (nodes), RANK, SLOTS"),
    Profile("task-training-deepspeed", "task-training", _TASK_TRAINING, (DEEPSPEED,),
            summary="task-training platform, DeepSpeed mode: the PyTorch mode's variables "
                    "and /job/hostfile"),
    Profile("task-training-horovod", "task-training", (
        Variable(OPENMPI.named_by, lambda f: f.path_of(OPENMPI)),
        Variable(MPICH.named_by, lambda f: f.path_of(MPICH)),
    ), (OPENMPI, MPICH), summary="task-training platform, Horovod mode: the OpenMPI and "
                                 "MPICH hostfiles"),
    Profile("task-training-tensorflow", "tf-config", (Variable(TF_CONFIG, _tf_config),),
            summary="task-training platform, TensorFlow mode: TF_CONFIG, every node a "
                    "worker"),
    Profile("volcano", "volcano", (VC_WORKER_HOSTS, VC_WORKER_NUM, VC_TASK_INDEX),
            summary="Volcano Job (svc and env plugins), every node in one task named worker"),
    Profile("modelarts", "modelarts", (
        Variable(RANK_TABLE.named_by, lambda f: os.path.dirname(f.path_of(RANK_TABLE))),
        ASCEND_DEVICE_ID, RANK_ID, RANK_SIZE,
    ), (RANK_TABLE,), task_variables="modelarts",
        summary="ModelArts (Ascend): RANK_TABLE_FILE (jobstart_hccl.json, completed), and "
                "ASCEND_DEVICE_ID, RANK_ID, RANK_SIZE (per task in srun)"),
)

#: Every profile with variables, by name (``slurm``, the default, adds none).
PROFILES: Dict[str, Profile] = {row.name: row for row in _ROWS}
#: Their names, in :data:`parsers.platforms.target_names.CONTRACT_PROFILES` order (a test checks
#: that the two agree).
PROFILE_NAMES: Tuple[str, ...] = tuple(CONTRACT_PROFILES[1:])


def profile_entry(profile: str) -> Dict[str, str]:
    """The job description's field naming the job's profile: none for ``slurm`` (so the
    descriptions of ordinary jobs do not change)."""
    return {} if profile == DEFAULT_CONTRACT_PROFILE else {"contract_profile": profile}


def profile_environment(profile: str, facts: SlurmFacts) -> Dict[str, str]:
    """The variables ``profile``'s platform would give the node of ``facts`` (none for
    ``slurm``); KeyError for a profile this table does not know."""
    if profile == DEFAULT_CONTRACT_PROFILE:
        return {}
    return {variable.name: variable.make(facts) for variable in PROFILES[profile].variables}


def profile_variable_names(profile: str) -> Tuple[str, ...]:
    """The variables ``profile`` sets on every node (none for ``slurm``; for the lint)."""
    row = PROFILES.get(profile)
    return tuple(variable.name for variable in row.variables) if row else ()


def profile_files(profile: str, facts: SlurmFacts) -> Dict[ProfileFile, str]:
    """The files ``profile``'s platform would write, with their text (the same on every
    node)."""
    if profile == DEFAULT_CONTRACT_PROFILE:
        return {}
    return {file: file.content(facts) for file in PROFILES[profile].files}
