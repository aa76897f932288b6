"""Where a job's node agents listen, without depending on when the cluster DNS learns it.

A pod's name (``llm-1234-0.llm-1234``) resolves through the cluster DNS only once the
kubelet has reported the pod's IP, the endpoints controller has published it and the DNS
server has seen that: a process that starts with its container can look its own or a peer's
name up before then and get NXDOMAIN or "temporary failure" (EAI_AGAIN). Two things make
step launches independent of that timing:

* node 0 learns every agent's IP when it opens its control connections (the peer address of
  each connection; its own is the address its agent listens on) and writes them into its
  spool (:data:`ADDRESS_FILE`), where every ``srun`` on node 0 finds them;
* any other lookup (an ``srun`` started on another node, a connection before that file
  exists) is retried while the answer is "not yet" (:data:`RETRY_ERRORS`), up to a
  deadline, then fails with the resolver's own message.
"""

from __future__ import annotations

import json
import os
import socket
import time
from typing import Callable, Dict, Mapping, Optional, Sequence

#: In node 0's spool: ``{name: IP}`` of every node's agent.
ADDRESS_FILE = "agent-addresses.json"
#: Answers that may change once the DNS has caught up.
RETRY_ERRORS = frozenset(code for code in (
    getattr(socket, "EAI_AGAIN", None), getattr(socket, "EAI_NONAME", None),
    getattr(socket, "EAI_NODATA", None), getattr(socket, "EAI_FAIL", None))
    if code is not None)
#: How long a lookup keeps trying by default (seconds).
RESOLVE_WAIT_S = 60.0
RETRY_FIRST_S = 0.05
RETRY_MAX_S = 1.0


def write_known(spool: str, known: Mapping[str, str]) -> None:
    """Record ``known`` (name → IP) for the sruns of this node (atomically)."""
    path = os.path.join(spool, ADDRESS_FILE)
    partial = path + ".partial"
    with open(partial, "w") as f:
        json.dump(dict(known), f)
    os.replace(partial, path)


def read_known(spool: str) -> Dict[str, str]:
    """What :func:`write_known` left in ``spool`` (empty when nothing, or unreadable)."""
    try:
        with open(os.path.join(spool, ADDRESS_FILE)) as f:
            loaded = json.load(f)
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in loaded.items()} if isinstance(loaded, dict) else {}


def is_ip(address: str) -> bool:
    """Whether ``address`` is a literal IPv4 or IPv6 address."""
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, address)
            return True
        except (OSError, ValueError):
            continue
    return False


def resolve_patiently(address: str, wait_s: float = RESOLVE_WAIT_S,
                      lookup: Callable[[str], str] = socket.gethostbyname,
                      sleep: Callable[[float], None] = time.sleep) -> str:
    """``address`` as an IP: looked up again while the DNS answers "not yet", until
    ``wait_s`` has passed; the last ``socket.gaierror`` then (any other error at once)."""
    if is_ip(address):
        return address
    deadline = time.monotonic() + wait_s
    pause = RETRY_FIRST_S
    while True:
        try:
            return lookup(address)
        except socket.gaierror as e:
            if e.errno not in RETRY_ERRORS or time.monotonic() + pause > deadline:
                raise
        sleep(pause)
        pause = min(pause * 2, RETRY_MAX_S)


def agent_ips(names: Sequence[str], addresses: Sequence[str],
              environ: Mapping[str, str]) -> Dict[str, str]:
    """Node name → what to connect to: node 0's recorded IPs where this process can see
    them (its spool), else the address as it is (looked up when connecting)."""
    spool = environ.get("SBATCHK8S_SPOOL")
    known = read_known(spool) if spool else {}
    return {name: known.get(name, address) for name, address in zip(names, addresses)}


def wait_budget(environ: Mapping[str, str]) -> float:
    """How long a lookup may wait for the DNS here (the nodes' own wait, when set)."""
    try:
        return float(environ.get("SBATCHK8S_NODE_WAIT", RESOLVE_WAIT_S))
    except ValueError:
        return RESOLVE_WAIT_S


def peer_ip(writer: object) -> Optional[str]:
    """The remote IP of an asyncio stream writer's socket, if it has one."""
    get = getattr(writer, "get_extra_info", None)
    peer = get("peername") if get is not None else None
    return str(peer[0]) if isinstance(peer, (tuple, list)) and peer else None
