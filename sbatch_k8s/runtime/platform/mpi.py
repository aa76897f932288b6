"""Contracts that hand the nodes to MPI: a hostfile, and ``mpirun`` starting the command.

- The task-training platform's Horovod mode (seed 001): ``OMPI_MCA_orte_default_hostfile``
  (``/etc/mpi/hostfile``, ``server1 slots=4`` lines) or, with MPICH, ``HYDRA_HOST_FILE``
  (``/etc/mpi/mpich_hostfile``, ``server1:4``); a command without ``mpirun`` is run by
  ``mpirun -np <procs> -map-by slot …``, so it starts once per MPI slot of every host. The
  hosts, in hostfile order, are the nodes; this container is the one its hostname names; the
  instance whose MPI local rank (``OMPI_COMM_WORLD_LOCAL_RANK``, MPICH's ``MPI_LOCALRANKID``)
  is 0 acts for it (:mod:`.instances`), the others wait. A node's slots are its GPUs.
- AI Hub's MpiJob (seed 000), where the command runs on the launcher only and the launcher
  starts the hosts itself, is :mod:`.mpijob_hostfile`'s.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from parsers.platforms.contract_profiles import MPICH, OPENMPI
from sbatch_k8s.runtime.contract import ContractError
from sbatch_k8s.runtime.platform.facts import Container, Peers, PlatformFacts, number
from sbatch_k8s.runtime.platform.task_training import read_hostfile

#: The hostfile variables, OpenMPI's first.
HOSTFILE_VARIABLES = (OPENMPI.named_by, MPICH.named_by)
#: Per-process variables mpirun sets: the process's rank among those of its host.
LOCAL_RANK_VARIABLES = ("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID")


def hostfile_variable(container: Container,
                      variables: Sequence[str] = HOSTFILE_VARIABLES) -> Optional[str]:
    """The first of ``variables`` this container has set, if any."""
    for name in variables:
        if container.environ.get(name, "").strip():
            return name
    return None


def named_hostfile(container: Container, variables: Sequence[str], unset: str,
                   where: str = "") -> Tuple[str, str, List[Tuple[str, Optional[int]]]]:
    """The hostfile the first set of ``variables`` names: that variable, the path and its
    ``(host, slots)`` lines. ContractError ``unset`` when none is set, or naming the missing
    file (``where`` says where it should be)."""
    variable = hostfile_variable(container, variables)
    if variable is None:
        raise ContractError(unset)
    path = container.environ[variable].strip()
    text = container.read_file(path)
    if text is None:
        raise ContractError(f"the hostfile {path} ({variable}) does not exist in this "
                            f"container{where}")
    return variable, path, read_hostfile(text, path)


def local_rank(container: Container) -> Optional[Tuple[str, int]]:
    """This process's MPI local rank and the variable giving it (None outside mpirun)."""
    for name in LOCAL_RANK_VARIABLES:
        if name in container.environ:
            return name, number(container, name, "an MPI local rank")
    return None


def started_by_mpirun(container: Container) -> bool:
    """Whether mpirun started this process (its per-process variables are set)."""
    return local_rank(container) is not None


def horovod(container: Container) -> PlatformFacts:
    """One MPI slot's run of the task-training platform's Horovod mode."""
    variable, path, hosts = named_hostfile(
        container, HOSTFILE_VARIABLES,
        f"neither {' nor '.join(HOSTFILE_VARIABLES)} is set (the Horovod mode's hostfile)")
    names = tuple(host.split(".")[0] for host, _ in hosts)
    addresses = tuple(host for host, _ in hosts)
    short = container.hostname.split(".")[0]
    if short not in names:
        raise ContractError(f"this container ({short}) is not in the hostfile {path} "
                            f"({', '.join(names)})")
    if len(set(names)) != len(names):
        raise ContractError(f"the hostfile {path} names a host twice")
    slots = sorted({s for _, s in hosts if s is not None})
    gpus = slots[0] if len(slots) == 1 and all(s is not None for _, s in hosts) else None
    instance = local_rank(container)
    evidence = (variable,) + ((instance[0],) if instance else ())

    def listed(n: int) -> Peers:
        return names, addresses

    return PlatformFacts("task-training", names.index(short), len(hosts), listed, gpus,
                         addresses[0], None, f"task-training-mpi/{','.join(addresses)}",
                         evidence, instance=instance)

