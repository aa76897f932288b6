"""AI Hub's MpiJob (seed 000), and any Kubeflow MPIJob: the command runs on the launcher only.

The platform starts the command on the launcher, whose hostfile
(``OMPI_MCA_orte_default_hostfile``, ``/etc/mpi/hostfile``, ``host slots=N`` lines) names the
workers; the workers run only sshd, and ``mpirun`` reaches them through
``$OMPI_MCA_plm_rsh_agent`` (ssh). ``runtime run`` on the launcher does what mpirun does:

- **The job's nodes are the hostfile's hosts**, in order; their slots are GPUs per node. The
  launcher is not a node (an MPIJob's launcher has no GPUs and is not in the hostfile, unless
  ``runLauncherAsWorker`` lists it there, when it is a node like the others).
- **Node 0 is the first host, and it runs the batch script**, as Slurm's batch host is the
  allocation's first node: ``SLURM_JOB_NODELIST`` is the hosts, ``hostname`` in the script is
  node 0's, a script without ``srun`` runs where the GPUs are, and ``srun`` fans out from
  there exactly as in the other contracts. The launcher only relays (:mod:`.mpijob_launch`):
  it starts ``python3 <runtime> run --contract mpijob-worker …`` on every host through the
  rsh agent, in the launcher's working directory (as mpirun does), with the launcher's
  environment (as mpirun's ``-x`` would: an ssh session does not see the pod's variables);
  the remote runs' output is the launcher's (the agent forwards it), so the batch output
  lands in the launcher's log, and the launcher exits with node 0's exit code.
- **Assumed:** the runtime's path on the launcher is valid on the workers (the platform mounts
  the same volume on every pod, or the image has the runtime), and so is the script's.

The workers learn what the hostfile says from the command line the launcher gives them
(:data:`HOSTS_VARIABLE` and friends), read here by :func:`mpijob_worker`.
"""

from __future__ import annotations

from typing import Dict, Mapping, Optional, Tuple

from parsers.platforms.contract_profiles import MPICH, OPENMPI
from sbatch_k8s.runtime.contract import ContractError
from sbatch_k8s.runtime.platform.facts import Container, PeerNaming, Peers, PlatformFacts, \
    parse_number
from sbatch_k8s.runtime.platform.mpi import named_hostfile

#: The launcher's hostfile variables, OpenMPI's first (the operator's Intel and MPICH names).
HOSTFILE_VARIABLES = (OPENMPI.named_by, "I_MPI_HYDRA_HOST_FILE", MPICH.named_by)
#: Slots per host when the hostfile gives none (the operator's ``slotsPerWorker``).
DEFAULT_SLOTS_VARIABLE = "OMPI_MCA_orte_set_default_slots"
#: What the launcher tells every worker's run: the hosts (comma list, hostfile order), the
#: job's identity, and GPUs per node (absent when the hostfile does not say).
HOSTS_VARIABLE = "SBATCHK8S_MPIJOB_HOSTS"
KEY_VARIABLE = "SBATCHK8S_MPIJOB_KEY"
GPUS_VARIABLE = "SBATCHK8S_MPIJOB_GPUS"
#: The contract of the runs the launcher starts.
WORKER_CONTRACT = "mpijob-worker"

#: Launcher variables that describe the launcher container or its session, not the job:
#: not forwarded to the workers (each keeps its own).
_LAUNCHER_ONLY = frozenset((
    "HOSTNAME", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "MAIL", "PWD", "OLDPWD", "SHLVL",
    "_", "K_MPI_JOB_ROLE", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES",
    "CUDA_VISIBLE_DEVICES"))
_LAUNCHER_ONLY_PREFIXES = ("OMPI_", "PMIX_", "I_MPI_", "HYDRA_", "SSH_", "SBATCHK8S_MPIJOB_")


def _listed(names: Tuple[str, ...], addresses: Tuple[str, ...]) -> PeerNaming:
    """The peers, whatever the count asked (the hostfile fixes it)."""
    def listed(count: int) -> Peers:
        return names, addresses
    return listed


def _split_hosts(hosts: Tuple[str, ...], where: str) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """Node names (short hostnames) and addresses (as listed); ContractError on a repeat."""
    names = tuple(host.split(".")[0] for host in hosts)
    if len(set(names)) != len(names):
        raise ContractError(f"{where} names a host twice")
    return names, hosts


def mpijob_launcher(container: Container) -> PlatformFacts:
    """The launcher's view: the hostfile's hosts are the nodes (this container is none of
    them unless listed); ``index`` is None, as the launcher becomes no node."""
    variable, path, hosts = named_hostfile(
        container, HOSTFILE_VARIABLES,
        f"no hostfile variable is set ({', '.join(HOSTFILE_VARIABLES)}): an MpiJob's "
        "launcher has one", " (an MpiJob's hostfile is on its launcher only)")
    names, addresses = _split_hosts(tuple(host for host, _ in hosts), f"the hostfile {path}")
    slots = {s for _, s in hosts}
    gpus: Optional[int] = None
    if len(slots) == 1 and None not in slots:
        gpus = slots.pop()
    elif slots == {None} and container.environ.get(DEFAULT_SLOTS_VARIABLE, "").strip():
        gpus = parse_number(DEFAULT_SLOTS_VARIABLE, container.environ[DEFAULT_SLOTS_VARIABLE],
                            "a slot count", 1)
    key = f"mpijob/{container.hostname}/{','.join(addresses)}"
    return PlatformFacts("mpijob", None, len(hosts), _listed(names, addresses), gpus,
                         addresses[0], None, key, (variable,))


def mpijob_worker(container: Container) -> PlatformFacts:
    """One host's run, started by the launcher: what the launcher read from its hostfile."""
    hosts_text = container.environ.get(HOSTS_VARIABLE, "").strip()
    key = container.environ.get(KEY_VARIABLE, "").strip()
    if not hosts_text or not key:
        raise ContractError(f"{HOSTS_VARIABLE} and {KEY_VARIABLE} are not set: contract "
                            f"{WORKER_CONTRACT} is the runs an MpiJob's launcher starts "
                            "(run it with --contract mpijob on the launcher)")
    names, addresses = _split_hosts(tuple(h for h in hosts_text.split(",") if h),
                                    HOSTS_VARIABLE)
    short = container.hostname.split(".")[0]
    if short not in names:
        raise ContractError(f"this container ({short}) is not one of the launcher's hosts "
                            f"({', '.join(names)}): the rsh agent reached another container")
    gpus_text = container.environ.get(GPUS_VARIABLE, "").strip()
    gpus = parse_number(GPUS_VARIABLE, gpus_text, "a GPU count", 1) if gpus_text else None
    return PlatformFacts("mpijob", names.index(short), len(names), _listed(names, addresses),
                         gpus, addresses[0], None, key, (HOSTS_VARIABLE, KEY_VARIABLE))


def forwarded_environment(environ: Mapping[str, str]) -> Dict[str, str]:
    """The launcher's variables a worker's run gets (see :data:`_LAUNCHER_ONLY`)."""
    return {k: v for k, v in environ.items()
            if k.isidentifier() and k not in _LAUNCHER_ONLY
            and not k.startswith(_LAUNCHER_ONLY_PREFIXES)}


def worker_variables(facts: PlatformFacts) -> Dict[str, str]:
    """What the launcher tells every worker's run (read back by :func:`mpijob_worker`)."""
    count = int(facts.count or 0)
    _, addresses = facts.peers(count)
    variables = {HOSTS_VARIABLE: ",".join(addresses), KEY_VARIABLE: facts.job_key}
    if facts.gpus_per_node is not None:
        variables[GPUS_VARIABLE] = str(facts.gpus_per_node)
    return variables
