"""The platform contracts ``run --contract`` knows, and how one is recognised.

One row per contract: its adapter, and the signs that recognise it when ``--contract`` is
omitted — variables that must all be set, variables that must not be, and a check of the
hostname or files. Rows are tried in order, the most specific first (a Trainer v2 node also
has ``PET_NODE_RANK``, a PyTorchJob's; AIStation's ``MASTER_ADDR`` is everyone's).
"""

from __future__ import annotations

import re
from typing import Callable, List, NamedTuple, Optional, Tuple

from parsers.platforms.contract_facts import ASCEND_DEVICE_ID, MASTER_ADDR, NNODES, PET_NNODES, \
    PET_NODE_RANK, RANK, SLOTS, TF_CONFIG, VC_TASK_INDEX, VOLCANO_HOSTS_SUFFIX, VOLCANO_PREFIX, \
    WORLD_SIZE_NODES
from parsers.platforms.contract_profiles import MPICH, OPENMPI, RANK_TABLE
from sbatch_k8s.runtime.contract import ContractError
from sbatch_k8s.runtime.platform import aistation, kube, kubeflow, modelarts, mpi, \
    mpijob_launch, task_training
from sbatch_k8s.runtime.platform import mpijob_hostfile as mpijob
from sbatch_k8s.runtime.platform.facts import Container, PlatformFacts, subdomain_of

Adapter = Callable[[Container], PlatformFacts]
#: A contract whose command runs on one container only, which starts the nodes itself: the
#: facts, this container, the ``run`` arguments to pass on, the wait bound, the job's token;
#: the exit code.
Launch = Callable[[PlatformFacts, Container, List[str], float, bytes], int]
_JOBSET_TAIL = re.compile(r".+-\d+-\d+$")


class PlatformContract(NamedTuple):
    """A platform contract and how to recognise it."""

    name: str
    adapter: Adapter
    needs: Tuple[str, ...]
    absent: Tuple[str, ...] = ()
    check: Optional[Callable[[Container], bool]] = None
    summary: str = ""
    #: Set where this container becomes no node but starts them (an MpiJob's launcher).
    launch: Optional[Launch] = None

    def matches(self, container: Container) -> bool:
        """Whether this container shows every sign of the contract."""
        if not container.has(*self.needs):
            return False
        if any(name in container.environ for name in self.absent):
            return False
        return self.check is None or self.check(container)


def _has_volcano_hosts(container: Container) -> bool:
    return any(k.startswith(VOLCANO_PREFIX) and k.endswith(VOLCANO_HOSTS_SUFFIX)
               for k in container.environ)


def _jobset_hostname(container: Container) -> bool:
    """``<jobset>-<job>-<j>-<i>``; with a subdomain (the JobSet's name), the hostname must
    start with it (an Indexed Job ``llm-9`` has pods ``llm-9-0`` too)."""
    subdomain = subdomain_of(container, "")
    if subdomain and not container.hostname.startswith(subdomain + "-"):
        return False
    rest = container.hostname[len(subdomain) + 1:] if subdomain else container.hostname
    return bool(_JOBSET_TAIL.match(rest))


def _task_training(container: Container) -> PlatformFacts:
    """The task-training platform in any of its modes but TensorFlow's."""
    if mpi.hostfile_variable(container) and RANK.name not in container.environ:
        return mpi.horovod(container)
    return task_training.task_training(container)


CONTRACTS: Tuple[PlatformContract, ...] = (
    PlatformContract("modelarts", modelarts.modelarts,
                     (RANK_TABLE.named_by, ASCEND_DEVICE_ID.name),
                     summary="ModelArts / Ascend rank table (one instance per card)"),
    PlatformContract("tf-config", task_training.tf_config, (TF_CONFIG,),
                     summary="TF_CONFIG (task-training TensorFlow mode, Kubeflow TFJob)"),
    PlatformContract("task-training", _task_training, (SLOTS.name, RANK.name),
                     summary="task-training platform, PyTorch or DeepSpeed mode"),
    PlatformContract("task-training", _task_training, (OPENMPI.named_by,),
                     check=mpi.started_by_mpirun,
                     summary="task-training platform, Horovod mode (OpenMPI, one run per slot)"),
    PlatformContract("task-training", _task_training, (MPICH.named_by,),
                     summary="task-training platform, Horovod mode (MPICH)"),
    PlatformContract("mpijob-worker", mpijob.mpijob_worker, (mpijob.HOSTS_VARIABLE,),
                     summary="a host of an MpiJob, started by its launcher"),
    PlatformContract("mpijob", mpijob.mpijob_launcher, (OPENMPI.named_by,),
                     summary="AI Hub / Kubeflow MpiJob launcher (starts the hostfile's hosts "
                     "through the rsh agent)", launch=mpijob_launch.launch),
    PlatformContract("volcano", kube.volcano, (VC_TASK_INDEX.name,), check=_has_volcano_hosts,
                     summary="Volcano Job (svc and env plugins)"),
    PlatformContract("trainjob", kubeflow.trainjob, (PET_NODE_RANK.name, PET_NNODES.name),
                     absent=(RANK.name, MASTER_ADDR.name), summary="Kubeflow Trainer v2 TrainJob"),
    PlatformContract("pytorchjob", kubeflow.pytorchjob, (PET_NODE_RANK.name,),
                     summary="Kubeflow PyTorchJob (training-operator v1.7+)"),
    PlatformContract("pytorchjob", kubeflow.pytorchjob,
                     (RANK.name, WORLD_SIZE_NODES.name, MASTER_ADDR.name),
                     summary="Kubeflow PyTorchJob (training-operator up to v1.6)"),
    PlatformContract("aihub", lambda c: kubeflow.pytorchjob(c, "aihub"), (),
                     check=lambda c: False, summary="AI Hub PyTorchJob"),
    PlatformContract("dlc", lambda c: kubeflow.pytorchjob(c, "dlc"), (),
                     check=lambda c: False, summary="PAI-DLC PyTorchJob"),
    PlatformContract("aistation", aistation.aistation, (MASTER_ADDR.name, NNODES.name),
                     absent=(RANK.name, PET_NODE_RANK.name),
                     summary="AIStation Master/Worker (ranks by rendezvous at MASTER_ADDR)"),
    PlatformContract("jobset", kube.jobset, (kube.COMPLETION_INDEX,), check=_jobset_hostname,
                     summary="JobSet (hostname <jobset>-<job>-<j>-<i>)"),
    PlatformContract("indexed-job", kube.indexed_job, (kube.COMPLETION_INDEX,),
                     summary="Indexed Job with a headless Service"),
)

#: Every name ``--contract`` accepts, in table order.
CONTRACT_NAMES: Tuple[str, ...] = tuple(dict.fromkeys(c.name for c in CONTRACTS))


def contract_named(name: str) -> PlatformContract:
    """The row of ``name``; ContractError naming the known ones otherwise."""
    for row in CONTRACTS:
        if row.name == name:
            return row
    raise ContractError(f"unknown contract {name!r} (one of {', '.join(CONTRACT_NAMES)})")


def detect(container: Container) -> Optional[PlatformContract]:
    """The first contract whose signs this container shows, or None."""
    for row in CONTRACTS:
        if row.matches(container):
            return row
    return None


def signs_looked_for() -> List[str]:
    """The variables detection looks at (for the error when nothing matches)."""
    return list(dict.fromkeys(name for row in CONTRACTS for name in row.needs))
