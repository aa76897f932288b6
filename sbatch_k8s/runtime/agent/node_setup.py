"""A node's settings, its job's description, and the environment of the job's processes.

The settings say where the node finds its job (job directory, token, spool, port) and how it
behaves (KillWait, how long it waits for the other nodes); pods use the defaults, the local
backend sets the variables. The description is ``job.json`` completed by its private part;
the environment of the batch script and of srun is the platform's (in pods), the exported
one, and the runtime's internal variables.
"""

from __future__ import annotations

from parsers.job_description import JobDescription, read_description
from parsers.vocabulary import DESCRIPTION_KEY, ENVIRONMENT_KEY
import json
import os
from typing import Any, Dict, Mapping, Optional

from parsers.own_variables import PREFIX
from sbatch_k8s.runtime.agent.service import KILL_WAIT_S
from sbatch_k8s.runtime.contract import NodeIdentity, node_address_map

DEFAULT_JOB_DIR = "/etc/sbatch-k8s/job"
DEFAULT_TOKEN_FILE = "/etc/sbatch-k8s/token/token"
DEFAULT_PORT = 6818
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
INTERNAL_PREFIX = PREFIX



class NodeSettings:
    """Where this node finds its job and how it behaves (from argv and the environment)."""

    def __init__(self, contract: str, job_dir: str, token_file: str, port: int,
                 spool: str, index: Optional[int], wait_s: float, kill_wait_s: float,
                 seconds_per_minute: float = 60.0) -> None:
        self.contract = contract
        self.job_dir = job_dir
        self.token_file = token_file
        self.port = port
        self.spool = spool
        self.index = index
        self.wait_s = wait_s
        self.kill_wait_s = kill_wait_s
        #: How long a minute of a time limit lasts (shorter only in tests).
        self.seconds_per_minute = seconds_per_minute
        #: Platform mode: the other nodes exit with the job's code too (platforms judge a
        #: job by its containers); our own pods leave that to node 0.
        self.workers_exit_as_job = False


def settings_from(contract: str, environ: Mapping[str, str],
                  index: Optional[int] = None) -> NodeSettings:
    """Settings with the defaults pods use; the local backend sets the variables."""
    local = contract == "local"
    return NodeSettings(
        contract=contract,
        job_dir=environ.get("SBATCHK8S_JOB_DIR", DEFAULT_JOB_DIR),
        token_file=environ.get("SBATCHK8S_TOKEN_FILE", DEFAULT_TOKEN_FILE),
        port=int(environ.get("SBATCHK8S_RUNTIME_PORT", DEFAULT_PORT)),
        spool=environ.get("SBATCHK8S_SPOOL", "/tmp/sbatch-k8s"),
        index=index,
        wait_s=float(environ.get("SBATCHK8S_NODE_WAIT", 30 if local else 600)),
        kill_wait_s=float(environ.get("SBATCHK8S_KILL_WAIT", KILL_WAIT_S)),
        seconds_per_minute=float(environ.get("SBATCHK8S_SECONDS_PER_MINUTE", 60)))


#: The description's private part, beside the token file: the environment ``--export``
#: carries and the ``--export`` text (secrets, so never in ``job.json``, which is a
#: ConfigMap in pods). A key of the job's Secret in pods; a mode-0600 file locally.
ENVIRONMENT_FILE = ENVIRONMENT_KEY


def load_description(job_dir: str, token_file: Optional[str] = None) -> JobDescription:
    """The job description: ``job.json`` of the job directory, completed by its private part
    (:data:`ENVIRONMENT_FILE` beside ``token_file``; by default this process's
    ``SBATCHK8S_TOKEN_FILE``, else the pods' path). Without that file (a platform run, an
    older submission) the description is ``job.json`` alone."""
    with open(os.path.join(job_dir, DESCRIPTION_KEY)) as f:
        public: Dict[str, Any] = json.load(f)
    if token_file is None:
        token_file = os.environ.get("SBATCHK8S_TOKEN_FILE", DEFAULT_TOKEN_FILE)
    private: Dict[str, Any] = {}
    try:
        with open(os.path.join(os.path.dirname(token_file), ENVIRONMENT_FILE)) as f:
            private = json.load(f)
    except FileNotFoundError:
        pass
    return read_description(public, private)


#: How often the run restarted inside its workload, which the description's restart count
#: (raised by our own requeues) does not know: a JobSet's gang restarts, the Job controller's
#: replacements of an array element's disrupted pods (``translators.pod.restarts_field``).
RESTARTED_VARIABLE = "SBATCHK8S_RESTARTED"
#: How often our own requeues ran the job again: a requeue's copy of the workload carries it
#: (the job's ConfigMap, holding the description, is immutable).
REQUEUED_VARIABLE = "SBATCHK8S_REQUEUED"


def with_restarts(desc: Dict[str, Any], environ: Mapping[str, str]) -> Dict[str, Any]:
    """``desc`` with the restarts of :data:`RESTARTED_VARIABLE` and
    :data:`REQUEUED_VARIABLE` added to ``restart_count`` (``SLURM_RESTART_COUNT``, ``%r``);
    unchanged when there are none."""
    restarted = 0
    for name in (RESTARTED_VARIABLE, REQUEUED_VARIABLE):
        text = environ.get(name, "").strip()
        restarted += int(text) if text.isdigit() else 0
    if not restarted:
        return desc
    return dict(desc, restart_count=int(desc.get("restart_count") or 0) + restarted)


#: The MASTER_PORT default the local backend chose for this run (:func:`with_master_port`).
MASTER_PORT_VARIABLE = "SBATCHK8S_MASTER_PORT"


def with_master_port(desc: Dict[str, Any], environ: Mapping[str, str]) -> Dict[str, Any]:
    """``desc`` with the run's ``master_port`` (:func:`parsers.slurm_env.master_port`) when
    :data:`MASTER_PORT_VARIABLE` gives one; unchanged otherwise."""
    text = environ.get(MASTER_PORT_VARIABLE, "").strip()
    return dict(desc, master_port=int(text)) if text.isdigit() else desc


def platform_environment(environ: Mapping[str, str]) -> Dict[str, str]:
    """The environment the platform gave this process, minus our internal variables."""
    return {k: v for k, v in environ.items() if not k.startswith(INTERNAL_PREFIX)}


def _search_domains(identity: NodeIdentity, environ: Mapping[str, str]) -> Optional[str]:
    """``LOCALDOMAIN`` making short pod hostnames (``llm-1234-1``) resolve through the
    headless Service's subdomain, which Kubernetes leaves out of ``resolv.conf``."""
    first = identity.addresses[0]
    if "." not in first:
        return None
    subdomain = first.split(".", 1)[1]
    try:
        with open("/etc/resolv.conf") as f:
            searches = [line.split()[1:] for line in f if line.startswith("search")]
    except OSError:
        return None
    domains = searches[-1] if searches else []
    if not domains:
        return None
    return " ".join([f"{subdomain}.{domains[0]}"] + domains)


def job_process_environment(desc: Mapping[str, Any], identity: NodeIdentity,
                            settings: NodeSettings, shim_dir: str,
                            environ: Mapping[str, str]) -> Dict[str, str]:
    """Everything but the SLURM_* variables: platform env, exported env (the description's
    private part, see :func:`load_description`), internals, PATH."""
    env = platform_environment(environ) if settings.contract != "local" else {}
    env.update({k: str(v) for k, v in (desc.get("environment") or {}).items()})
    env.setdefault("PATH", DEFAULT_PATH)
    env["PATH"] = f"{shim_dir}{os.pathsep}{env['PATH']}"
    domains = _search_domains(identity, environ)
    if domains and "LOCALDOMAIN" not in env:
        env["LOCALDOMAIN"] = domains
    env.update(internal_environment(settings, identity))
    return env


def internal_environment(settings: NodeSettings, identity: NodeIdentity) -> Dict[str, str]:
    """The runtime's variables for the job's processes: where the job and the agents are."""
    return {
        "SBATCHK8S_JOB_DIR": settings.job_dir,
        "SBATCHK8S_TOKEN_FILE": settings.token_file,
        "SBATCHK8S_RUNTIME_PORT": str(settings.port),
        "SBATCHK8S_CONTRACT": settings.contract,
        "SBATCHK8S_SPOOL": settings.spool,
        "SBATCHK8S_KILL_WAIT": str(settings.kill_wait_s),
        "SBATCHK8S_SECONDS_PER_MINUTE": str(settings.seconds_per_minute),
        "SBATCHK8S_NODE_ADDRS": ";".join(f"{n}={a}" for n, a in node_address_map(identity)),
    }
