"""The names of the targets and contracts, in one place every layer can import.

A *target* is the Kubernetes workload kind a job becomes (``--k8s-target``, a partition's
``target``); what each one implies is :data:`translators.targets.TARGETS`. A *node contract*
is how a node of the job learns its place (index, count, peers) from what its pod was given:
one per target, plus ``local`` for the processes of the local backend
(:mod:`sbatch_k8s.runtime.contract`). A *contract profile* is a different thing: which
platform's variables the nodes also get (a partition's ``contract``, ``--k8s-contract``:
``WORLD_SIZE``/``RANK`` for PyTorchJob scripts, AIStation's, …); what each one sets is
:data:`parsers.platforms.contract_profiles.PROFILES`.

Only names live here: the option reader, the configuration schema, the translators and the
pod-side runtime (which may import nothing but ``parsers``) all take them from this module.
"""

from __future__ import annotations

INDEXED_JOB = "indexed-job"
JOBSET = "jobset"
PYTORCHJOB = "pytorchjob"
MPIJOB = "mpijob"

#: Every target, the default first.
TARGET_NAMES = (INDEXED_JOB, JOBSET, PYTORCHJOB, MPIJOB)
DEFAULT_TARGET = INDEXED_JOB

#: The node contract of the local backend's processes (addresses 127.0.0.<i+2>).
LOCAL_CONTRACT = "local"
#: Every node contract the runtime can identify a node by.
NODE_CONTRACTS = (LOCAL_CONTRACT,) + TARGET_NAMES

#: The contract profile that adds nothing to Slurm's variables (the default).
DEFAULT_CONTRACT_PROFILE = "slurm"
#: Every contract profile a partition or ``--k8s-contract`` can name, the default first.
#: AI Hub's MpiJob is none: its command runs on the launcher only and reaches the workers
#: over ssh, which no Slurm script does (``aihub`` is AI Hub's PyTorchJob).
CONTRACT_PROFILES = (DEFAULT_CONTRACT_PROFILE, PYTORCHJOB, "aihub", "aistation",
                     "task-training", "task-training-deepspeed", "task-training-horovod",
                     "task-training-tensorflow", "volcano", "modelarts")


def profiles_in_words() -> str:
    """``slurm (default), pytorchjob, …, volcano or modelarts`` (help texts, errors)."""
    return (f"{DEFAULT_CONTRACT_PROFILE} (default), {', '.join(CONTRACT_PROFILES[1:-1])} or "
            f"{CONTRACT_PROFILES[-1]}")


def targets_in_words() -> str:
    """``indexed-job (default), jobset, pytorchjob or mpijob`` (help texts)."""
    return f"{DEFAULT_TARGET} (default), {', '.join(TARGET_NAMES[1:-1])} or {TARGET_NAMES[-1]}"
