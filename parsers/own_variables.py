"""sbatch-k8s's own environment variables, in one table: name, who sets it, what it says.

Every name starts with :data:`PREFIX`, ``SBATCHK8S_``. Slurm's commands read their input from
``SBATCH_*``, ``SRUN_*`` and ``SALLOC_*`` variables, and tools that drive Slurm strip those
(with every ``SLURM_*`` but the job's identity) before they call ``sbatch`` or ``srun``: a
job-step executor does it before ``srun`` inside a job, a submission helper before ``sbatch``.
A variable of ours under one of those prefixes would be lost on the way, so none is: the
former prefix :data:`FORMER_PREFIX` (``SBATCH_K8S_``) is still read for the settings a user
sets (:data:`LOGIN`, :func:`adopt_former_names`), never written.

Roles: ``login`` — a setting of the user's shell, read by the commands (and carried into local
jobs so that commands there use the same cluster); ``node`` — what the local backend or a pod
spec tells the runtime of a node; ``job`` — what the runtime tells the job's own processes
(the commands inside the job find it without them too: ``sbatch_k8s.runtime.agent.node_file``);
``test`` — knobs of the test suite.
"""

from __future__ import annotations

from typing import Dict, List, MutableMapping, NamedTuple

PREFIX = "SBATCHK8S_"
#: The prefix before the rename: still read for :data:`LOGIN` settings, never written.
FORMER_PREFIX = "SBATCH_K8S_"

LOGIN = "login"
NODE = "node"
JOB = "job"
TEST = "test"


class OwnVariable(NamedTuple):
    """One variable of ours."""

    name: str
    role: str
    what: str


def _rows(role: str, rows: Dict[str, str]) -> List[OwnVariable]:
    return [OwnVariable(PREFIX + short, role, what) for short, what in rows.items()]


#: Every variable of ours, by name.
VARIABLES: Dict[str, OwnVariable] = {v.name: v for v in (
    _rows(LOGIN, {
        "CONFIG": "the configuration file",
        "BACKEND": "local or kubernetes, over the configuration",
        "STATE_DIR": "the local backend's state directory (job database, job files)",
        "CONTEXT": "the kubeconfig context",
        "SERVER": "0: no per-user command server",
        "DEBUG": "non-empty and not 0: tracebacks for unexpected errors",
        "REQUEUE_DELAY": "seconds before a requeued job may run again (Slurm's 121)",
        "API_RETRY_S": "how long failed API connections are retried",
        "CACHE_WAIT_S": "how long the command server waits for its watch cache",
        "CACHE_RELIST_S": "the longest a watch-cache mirror goes without a fresh LIST",
        "KILL_WAIT": "local jobs: Slurm's KillWait in seconds",
        "NODE_WAIT": "how long a node waits for the job's other nodes",
        "SECONDS_PER_MINUTE": "local jobs: how long a minute of --time lasts (tests)",
        "RUNTIME_PYZ": "local jobs: run this runtime zipapp instead of the package",
        "RUNTIME_PYTHON": "local jobs: the interpreter of RUNTIME_PYZ",
        "RUNTIME_CACHE": "the runtime's bytecode cache root (0: none)",
        "TOKEN": "platform mode: the secret that authenticates step launches",
    })
    + _rows(NODE, {
        "JOB_DIR": "the job directory (job.json)",
        "TOKEN_FILE": "the job's token (the private description beside it)",
        "SPOOL": "the node's spool directory",
        "RUNTIME_PORT": "the port of the nodes' agents",
        "CONTRACT": "the node's contract (local, indexed-job, jobset, …)",
        "MASTER_PORT": "local jobs: the run's MASTER_PORT default, free of other jobs'",
        "JOB_ID": "pods: the job id",
        "NAMESPACE": "pods: the namespace (downward API)",
        "POD_NAME": "pods: the pod's name (downward API)",
        "POD_IP": "pods: the pod's IP (downward API)",
        "NODE_INDEX": "pods: the node index where the target hides the completion index",
        "JOB_API": "pods: 1 when node 0 may use the API (a ServiceAccount of the partition)",
        "RESTARTED": "pods: restarts made inside the workload (downward API)",
        "REQUEUED": "pods: how often our own requeues ran the job again (the workload's copy)",
        "REQUESTS_FILE": "pods: where node 0 reads cancel requests",
        "MPIJOB_HOSTS": "MPIJob launcher: the workers' hosts",
        "MPIJOB_KEY": "MPIJob launcher: the key of its ssh launch",
        "MPIJOB_GPUS": "MPIJob launcher: GPUs per worker",
        "SCHEDULER_LOCK_FD": "the local scheduler's lock, inherited by its restart",
    })
    + _rows(JOB, {
        "NODE_ADDRS": "the job's node names and addresses (name=address;…)",
        "JOB_START": "when the job started (epoch seconds)",
        "STEP_SERVER": "node 0's step server socket",
    })
    + _rows(TEST, {
        "TEST_API_SCHEME": "tests: http to the emulated API server",
        "REAL_SLURM": "tests: where the real Slurm's tools are",
        "REAL_NODE_IMAGE": "tests: the image of the real nodes' pods",
        "REAL_NODE_CPUS": "tests: the real nodes' CPUs",
        "TEST_CA": "tests: the real API server's CA (signs the test users' certificates)",
    }))}


def variable(name: str) -> OwnVariable:
    """The row of ``name`` (a KeyError names an unknown one)."""
    return VARIABLES[name]


def names_of(role: str) -> List[str]:
    """The names of one role, in table order."""
    return [v.name for v in VARIABLES.values() if v.role == role]


def former_name(name: str) -> str:
    """``SBATCHK8S_CONFIG`` → ``SBATCH_K8S_CONFIG``."""
    return FORMER_PREFIX + name[len(PREFIX):]


def adopt_former_names(environ: MutableMapping[str, str]) -> List[str]:
    """Copy each :data:`LOGIN` setting still set under its former name to its name (unless
    that is set too); the names copied."""
    adopted = []
    for name in names_of(LOGIN):
        former = former_name(name)
        if former in environ and name not in environ:
            environ[name] = environ[former]
            adopted.append(name)
    return adopted
