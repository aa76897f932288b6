"""What a platform tells one of its containers, in Slurm's terms.

A platform adapter (:mod:`.contracts` lists them) reads the container's environment variables, files
and hostname (a :class:`Container`) and returns :class:`PlatformFacts`: this node's index, the node
count, how the peers are named and reached, GPUs per node, the master address, and the platform's
identity of the job (from which ``SLURM_JOB_ID`` is derived). Facts a platform does not give stay
``None``: the node count of an Indexed Job comes from the script's ``--nodes``; an AIStation
container learns its index from a rendezvous (:mod:`.rendezvous`).
"""

from __future__ import annotations

import hashlib
import socket
from typing import Callable, Mapping, NamedTuple, Optional, Tuple

from parsers.platforms.contract_facts import read_number
from sbatch_k8s.runtime.contract import ContractError, NodeIdentity, pod_bind_host

#: Names and addresses of ``count`` nodes (names are what Slurm shows, addresses what agents
#: connect to).
Peers = Tuple[Tuple[str, ...], Tuple[str, ...]]
PeerNaming = Callable[[int], Peers]
#: The range of derived job ids (Slurm's default MaxJobId is 67043328).
JOB_ID_BASE = 1_000_000
JOB_ID_SPAN = 9_000_000


class NotReady(ContractError):
    """The platform has not finished writing its contract yet (a rank table still
    initializing): the adapter is asked again until the bound."""


class Container(NamedTuple):
    """What one container can see of its platform."""

    environ: Mapping[str, str]
    hostname: str
    fqdn: str
    resolve: Callable[[str], str]
    read_file: Callable[[str], Optional[str]]

    def has(self, *names: str) -> bool:
        """Whether every variable of ``names`` is set (even to an empty value)."""
        return all(name in self.environ for name in names)


def read_text(path: str) -> Optional[str]:
    """The text of ``path``, or None when it cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def this_container(environ: Mapping[str, str]) -> Container:
    """The running container: its environment, hostname and files."""
    hostname = socket.gethostname()
    return Container(environ, hostname, socket.getfqdn(hostname), socket.gethostbyname,
                     read_text)


class PlatformFacts(NamedTuple):
    """One container's place in a platform job."""

    contract: str
    index: Optional[int]
    count: Optional[int]
    peers: PeerNaming
    gpus_per_node: Optional[int]
    master_addr: Optional[str]
    master_port: Optional[int]
    job_key: str
    evidence: Tuple[str, ...]
    #: Peers (and the index, when None) come from a rendezvous at the master address.
    rendezvous: bool = False
    #: Where the platform starts the command several times per container: the variable
    #: numbering the instances and this one's number (instance 0 acts; :mod:`.instances`).
    instance: Optional[Tuple[str, int]] = None
    #: The platform's per-task variables the tasks get in Slurm's layout
    #: (:mod:`parsers.platforms.contract_variables`), if any.
    task_variables: Optional[str] = None

    def identity(self, count: int, index: int, hostname: str,
                 resolve: Callable[[str], str]) -> NodeIdentity:
        """The node identity for ``count`` nodes, this one being ``index``; ContractError
        when the index is outside the count."""
        if not 0 <= index < count:
            raise ContractError(f"node index {index} is outside 0..{count - 1} "
                                f"({count} nodes)")
        names, addresses = self.peers(count)
        short = hostname.split(".")[0]
        if names[index] != short:
            where = f"node {names.index(short)}" if short in names else "no node of the job"
            raise ContractError(f"the platform makes this container node {index} "
                                f"({names[index]}), but its hostname {short} is {where}")
        return NodeIdentity(index, count, names, addresses, pod_bind_host(hostname, resolve))


def job_id_of(job_key: str) -> int:
    """``SLURM_JOB_ID`` for the platform job ``job_key``: the same number on every container
    (a hash, so two jobs of one platform get different ids with high probability)."""
    digest = hashlib.sha256(job_key.encode("utf-8", "surrogateescape")).hexdigest()
    return JOB_ID_BASE + int(digest[:15], 16) % JOB_ID_SPAN


def parse_number(name: str, value: str, what: str = "a number", low: int = 0) -> int:
    """``value`` of variable (or field) ``name`` as an integer of at least ``low``;
    ContractError naming it otherwise."""
    try:
        return read_number(value, low)
    except ValueError:
        raise ContractError(f"{name}={value!r} is not {what}") from None


def number(container: Container, name: str, what: str = "a number", low: int = 0) -> int:
    """The integer value of variable ``name``; ContractError naming it otherwise."""
    value = container.environ.get(name)
    if value is None:
        raise ContractError(f"{name} is not set")
    return parse_number(name, value, what, low)


def split_address(endpoint: str) -> Tuple[str, Optional[int]]:
    """``host:port`` (or a bare host) split; the port None when absent."""
    host, sep, port = endpoint.rpartition(":")
    if sep and port.isdigit() and host:
        return host, int(port)
    return endpoint, None


def name_prefix(hostname: str, suffix_parts: int, pattern: str) -> str:
    """``hostname`` minus its last ``suffix_parts`` dash-separated parts; ContractError
    (naming the expected ``pattern``) when it has too few."""
    parts = hostname.split("-")
    if len(parts) <= suffix_parts:
        raise ContractError(f"hostname {hostname!r} does not follow the platform's naming "
                            f"{pattern}")
    return "-".join(parts[:-suffix_parts])


def subdomain_of(container: Container, default: str) -> str:
    """The headless Service the pod's FQDN names (``<host>.<subdomain>.<ns>.svc…``), or
    ``default`` when the FQDN says none."""
    labels = container.fqdn.split(".")
    if len(labels) > 1 and labels[0] == container.hostname.split(".")[0]:
        return labels[1]
    return default
