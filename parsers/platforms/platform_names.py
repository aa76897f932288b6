"""Variables by who sets them: Slurm (and the runtime's Slurm view), the shell, and each
platform — with the Slurm variable a script should use instead of a platform's
(``reference/platforms.md``). Read by the pitfall rules (:mod:`parsers.pitfalls`)."""

from __future__ import annotations

import re
from typing import Dict, FrozenSet, Tuple

#: ``sbatch --k8s-export=NAME``: the form-based platforms a job can be exported to.
EXPORT_DLC = "dlc"
EXPORT_AISTATION = "aistation"
EXPORT_TASK_TRAINING = "task-training"
EXPORT_PLATFORMS = (EXPORT_DLC, EXPORT_AISTATION, EXPORT_TASK_TRAINING)

#: Names set in every job: Slurm's, and what the runtime adds as Slurm sites do (the
#: rendezvous defaults, the GPU device lists).
SLURM_SET = re.compile(r"^(SLURM_\w+|SLURMD_\w+|SBATCH_\w+|MASTER_ADDR|MASTER_PORT|"
                       r"CUDA_VISIBLE_DEVICES|ROCR_VISIBLE_DEVICES|GPU_DEVICE_ORDINAL|"
                       r"ZE_AFFINITY_MASK)$")

#: What bash and a login set, and bash's own special variables.
SHELL_VARIABLES: FrozenSet[str] = frozenset((
    "HOME", "USER", "LOGNAME", "PATH", "PWD", "OLDPWD", "SHELL", "HOSTNAME", "LANG", "TERM",
    "TMPDIR", "UID", "EUID", "PPID", "RANDOM", "LINENO", "SECONDS", "IFS", "OPTARG",
    "OPTIND", "PIPESTATUS", "FUNCNAME", "HOSTTYPE", "MACHTYPE", "OSTYPE", "REPLY", "GROUPS",
    "BASH", "BASHPID", "BASH_SOURCE", "BASH_LINENO", "BASH_VERSION", "BASH_REMATCH",
    "SHLVL", "EPOCHSECONDS", "EPOCHREALTIME", "DIRSTACK", "PS1", "PS4", "LC_ALL", "MAIL",
))

#: A platform's variable → (whose it is, the Slurm way to get it).
PLATFORM_VARIABLES: Dict[str, Tuple[str, str]] = {
    "RANK": ("Kubeflow, AI Hub and task-training: the node's index",
             "$SLURM_NODEID for the node, $SLURM_PROCID inside srun for the process"),
    "NODE_RANK": ("the node's index", "$SLURM_NODEID"),
    "PET_NODE_RANK": ("Kubeflow: the node's index", "$SLURM_NODEID"),
    "WORLD_SIZE": ("Kubeflow and task-training: nodes or processes",
                   "$SLURM_NNODES for nodes, $SLURM_NTASKS for processes"),
    "NNODES": ("AIStation: set by the user in the form", "$SLURM_NNODES"),
    "PET_NNODES": ("Kubeflow: the node count", "$SLURM_NNODES"),
    "NPROC_PER_NODE": ("AIStation: set by the user in the form", "$SLURM_GPUS_ON_NODE"),
    "PET_NPROC_PER_NODE": ("Kubeflow: processes per node", "$SLURM_GPUS_ON_NODE"),
    "SLOTS": ("task-training: GPUs per node", "$SLURM_GPUS_ON_NODE"),
    "RDZV_ID": ("AIStation: set by the user in the form", "$SLURM_JOB_ID"),
    "MIN_NNODES": ("AIStation's elastic jobs", "#SBATCH --nodes=min-max; Slurm's choice is "
                   "$SLURM_NNODES"),
    "MAX_NNODES": ("AIStation's elastic jobs", "#SBATCH --nodes=min-max; Slurm's choice is "
                   "$SLURM_NNODES"),
    "LOCAL_RANK": ("torchrun: set in each process it starts, not in the batch script",
                   "$SLURM_LOCALID inside srun"),
    "OMPI_MCA_orte_default_hostfile": ("AI Hub MpiJob and task-training Horovod: the "
                                       "hostfile", "scontrol show hostnames "
                                       "\"$SLURM_JOB_NODELIST\" > hostfile"),
    "VC_TASK_INDEX": ("Volcano: the pod's index in its task", "$SLURM_NODEID"),
    "JOB_COMPLETION_INDEX": ("Indexed Job: the pod's index", "$SLURM_NODEID"),
    "ASCEND_DEVICE_ID": ("ModelArts: the card of this instance", "$SLURM_LOCALID inside srun"),
    "RANK_ID": ("ModelArts: the card's index in the job", "$SLURM_PROCID inside srun"),
    "RANK_SIZE": ("ModelArts: cards in the job", "$SLURM_NTASKS"),
    "RANK_TABLE_FILE": ("ModelArts: the Ascend rank table", "scontrol show hostnames "
                        "\"$SLURM_JOB_NODELIST\""),
}
