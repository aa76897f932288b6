"""The names of the targets and contracts, in one place every layer can import.

A *target* is the Kubernetes workload kind a job becomes (``--k8s-target``, a partition's
``target``); what each one implies is :data:`translators.targets.TARGETS`. A *node contract*
is how a node of the job learns its place (index, count, peers) from what its pod was given:
one per target, plus ``local`` for the processes of the local backend
(:mod:`sbatch_k8s.runtime.contract`). A *contract profile* is a different thing: which
platform's variables the pods also get (a partition's ``contract``: ``WORLD_SIZE``/``RANK``
for PyTorchJob scripts, AIStation's, …).

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

#: Every contract profile a partition can name, the default first.
CONTRACT_PROFILES = ("slurm", PYTORCHJOB, "aistation", "task-training", MPIJOB)
DEFAULT_CONTRACT_PROFILE = "slurm"


def targets_in_words() -> str:
    """``indexed-job (default), jobset, pytorchjob or mpijob`` (help texts)."""
    return f"{DEFAULT_TARGET} (default), {', '.join(TARGET_NAMES[1:-1])} or {TARGET_NAMES[-1]}"
