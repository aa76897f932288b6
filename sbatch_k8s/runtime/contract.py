"""Contract adapters: who am I, how many are we, how do I reach the others.

Each workload kind tells its pods their place differently; an adapter turns that into a
:class:`NodeIdentity`. Node *names* are what Slurm's variables show (the pods' hostnames,
e.g. ``llm-1234-0``); node *addresses* are what agents connect to (names that resolve from
inside a pod, e.g. ``llm-1234-0.llm-1234`` through the headless Service). A pod's agent
listens on its own pod IP (what the pod's hostname resolves to), not on every address, so that
pods sharing one network stack (the test kubelet runs them all on one machine) do not collide
on the agent port.

| contract     | node index                                  | names                              |
|--------------|---------------------------------------------|------------------------------------|
| local        | ``--index``                                 | ``127.0.0.<i+2>`` (also addresses) |
| indexed-job  | ``JOB_COMPLETION_INDEX``                    | ``<job>-<i>``                      |
| jobset       | ``SBATCHK8S_NODE_INDEX`` / completion index| ``<js>-node-0-<i>``                |
| pytorchjob   | ``RANK`` (Master 0, Worker i → i+1)         | ``<job>-master-0``,                |
|              |                                             | ``<job>-worker-<i>``               |
| mpijob       | launcher 0, worker i → i+1                  | ``<job>-launcher``,                |
|              |                                             | ``<job>-worker-<i>``               |
"""

from __future__ import annotations

import socket
from typing import Callable, Dict, List, Mapping, NamedTuple, Optional, Tuple

from parsers.platforms.contract_facts import PET_NODE_RANK, RANK
from parsers.platforms.target_names import NODE_CONTRACTS

#: The contracts a node can be identified by (one adapter each, see :data:`_ADAPTERS`).
CONTRACTS = NODE_CONTRACTS
ANY_ADDRESS = "0.0.0.0"
# What a hostname resolves to on a machine whose /etc/hosts no kubelet wrote (127.0.1.1 is
# Debian's alias for the host's own name): peers could not reach an agent bound there.
HOST_LOOPBACK_ALIASES = ("127.0.0.1", "127.0.1.1")


class ContractError(Exception):
    """The pod's environment does not say what the contract needs."""


class NodeIdentity(NamedTuple):
    """This node's place in the job."""

    index: int
    count: int
    names: Tuple[str, ...]
    addresses: Tuple[str, ...]
    bind_host: str

    @property
    def name(self) -> str:
        """This node's name (``SLURMD_NODENAME``)."""
        return self.names[self.index]


def local_address(index: int) -> str:
    """Loopback address of local node ``index``: ``127.0.0.<index+2>``."""
    if index > 252:
        raise ContractError("the local backend runs at most 253 nodes")
    return f"127.0.0.{index + 2}"


def pod_bind_host(hostname: str,
                  resolve: Callable[[str], str] = socket.gethostbyname) -> str:
    """The address a pod's agent listens on: what the pod's own hostname resolves to.

    A kubelet writes ``<podIP> <hostname>`` into every pod's /etc/hosts, so this is the pod IP
    (under the test kubelet, the pod's 127.10.x.y address). ANY_ADDRESS when the name does not
    resolve, or resolves only to the host's own loopback alias, where peers could not reach it.
    """
    try:
        address = resolve(hostname)
    except (OSError, UnicodeError):
        return ANY_ADDRESS
    return ANY_ADDRESS if address in HOST_LOOPBACK_ALIASES else address


def _check_index(index: int, count: int) -> None:
    """ContractError unless ``index`` names one of ``count`` nodes."""
    if not 0 <= index < count:
        raise ContractError(f"node index {index} is outside 0..{count - 1}")


def _int(environ: Mapping[str, str], name: str) -> int:
    value = environ.get(name)
    if value is None or not (value.strip().isascii() and value.strip().isdigit()):
        raise ContractError(f"{name} is not set to a node index in this pod")
    return int(value)


def _prefix(hostname: str, suffix_parts: int) -> str:
    """``llm-1234-node-0-3`` minus its last ``suffix_parts`` dash-separated parts."""
    parts = hostname.split("-")
    if len(parts) <= suffix_parts:
        raise ContractError(f"hostname {hostname!r} does not follow the workload's naming")
    return "-".join(parts[:-suffix_parts])


def _local(environ: Mapping[str, str], count: int, hostname: str,
           index: Optional[int]) -> NodeIdentity:
    if index is None:
        index = _int(environ, "SBATCHK8S_NODE_INDEX")
    _check_index(index, count)
    names = tuple(local_address(i) for i in range(count))
    return NodeIdentity(index, count, names, names, names[index])


def _indexed_job(environ: Mapping[str, str], count: int, hostname: str,
                 index: Optional[int]) -> NodeIdentity:
    index = _int(environ, "JOB_COMPLETION_INDEX") if index is None else index
    job = _prefix(hostname, 1)
    names = tuple(f"{job}-{i}" for i in range(count))
    return NodeIdentity(index, count, names, tuple(f"{n}.{job}" for n in names), ANY_ADDRESS)


def _jobset(environ: Mapping[str, str], count: int, hostname: str,
            index: Optional[int]) -> NodeIdentity:
    if index is None:
        key = "SBATCHK8S_NODE_INDEX" if "SBATCHK8S_NODE_INDEX" in environ else \
            "JOB_COMPLETION_INDEX"
        index = _int(environ, key)
    jobset = _prefix(hostname, 3)
    names = tuple(f"{jobset}-node-0-{i}" for i in range(count))
    return NodeIdentity(index, count, names, tuple(f"{n}.{jobset}" for n in names),
                        ANY_ADDRESS)


def _pytorchjob(environ: Mapping[str, str], count: int, hostname: str,
                index: Optional[int]) -> NodeIdentity:
    if index is None:
        key = PET_NODE_RANK.name if PET_NODE_RANK.name in environ else RANK.name
        index = _int(environ, key)
    job = _prefix(hostname, 2)
    names = (f"{job}-master-0",) + tuple(f"{job}-worker-{i}" for i in range(count - 1))
    return NodeIdentity(index, count, names, names, ANY_ADDRESS)


def _mpijob(environ: Mapping[str, str], count: int, hostname: str,
            index: Optional[int]) -> NodeIdentity:
    if index is None:
        if hostname.endswith("-launcher"):
            index = 0
        else:
            tail = hostname.rsplit("-", 1)[-1]
            if not (tail.isascii() and tail.isdigit()):
                raise ContractError(f"hostname {hostname!r} is neither launcher nor worker")
            index = int(tail) + 1
    job = hostname[:-len("-launcher")] if hostname.endswith("-launcher") else _prefix(hostname, 2)
    names = (f"{job}-launcher",) + tuple(f"{job}-worker-{i}" for i in range(count - 1))
    return NodeIdentity(index, count, names, tuple(f"{n}.{job}" for n in names), ANY_ADDRESS)


_ADAPTERS: Dict[str, Callable[[Mapping[str, str], int, str, Optional[int]], NodeIdentity]] = {
    "local": _local, "indexed-job": _indexed_job, "jobset": _jobset,
    "pytorchjob": _pytorchjob, "mpijob": _mpijob,
}


def identify(contract: str, environ: Mapping[str, str], node_count: int,
             index: Optional[int] = None, hostname: Optional[str] = None,
             resolve: Callable[[str], str] = socket.gethostbyname) -> NodeIdentity:
    """This node's identity under ``contract``; ContractError when the pod cannot tell.

    Pod contracts bind the agent to :func:`pod_bind_host` of the hostname (``resolve`` looks
    it up); the local contract binds each node to its own loopback address, as before."""
    if contract not in _ADAPTERS:
        raise ContractError(f"unknown contract {contract!r} (one of {', '.join(CONTRACTS)})")
    hostname = hostname or socket.gethostname()
    identity = _ADAPTERS[contract](environ, node_count, hostname, index)
    _check_index(identity.index, identity.count)
    if contract != "local":
        identity = identity._replace(bind_host=pod_bind_host(hostname, resolve))
    return identity


def node_address_map(identity: NodeIdentity) -> List[Tuple[str, str]]:
    """``(name, address)`` pairs, for the environment of the batch script and srun."""
    return list(zip(identity.names, identity.addresses))
