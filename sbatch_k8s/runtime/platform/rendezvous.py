"""Ranks and peers where the platform does not give them: a rendezvous at the master.

AIStation gives no rank at all; the task-training platform's PyTorch mode gives a node rank
but no peer names. The master container (node 0) listens on its own address, port
:data:`PORT_OFFSET` above the runtime's agent port; every other container connects (retrying
until the master listens), bound to its own address, and sends one JSON line: the job's
rendezvous id, the node count it was told, its hostname, address and rank (if it has one).
When the count is complete the master orders the workers (by rank, else by hostname: 1 … N-1)
and answers each with its index and every node's name and address. All
of it happens within one deadline: a count that never completes, a container of another job
(another ``RDZV_ID``), a count that disagrees, one container too many, a hostname seen twice
or a rank claimed twice end with one line on every container involved — never a hang.
"""

from __future__ import annotations

import json
import socket
import time
from typing import Callable, Dict, List, NamedTuple, Optional, Tuple

from parsers.platforms.contract_facts import NNODES, WORLD_SIZE_NODES
from sbatch_k8s.runtime.contract import ANY_ADDRESS, ContractError, pod_bind_host
from sbatch_k8s.runtime.platform.facts import Container, PlatformFacts

#: The rendezvous listens on the agent port + 1 (the agent starts only afterwards).
PORT_OFFSET = 1
RETRY_S = 0.2
LINE_LIMIT = 65536
#: The variable each contract's node count comes from (for the messages).
COUNT_VARIABLES = {"aistation": NNODES.name, "task-training": WORLD_SIZE_NODES.name,
                   "modelarts": "server_count"}


def _send(conn: socket.socket, message: Dict[str, object]) -> None:
    try:
        conn.sendall((json.dumps(message) + "\n").encode())
    except OSError:
        pass


def _read_line(conn: socket.socket, deadline: float) -> Optional[Dict[str, object]]:
    data = b""
    while b"\n" not in data and len(data) < LINE_LIMIT:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        conn.settimeout(left)
        try:
            chunk = conn.recv(4096)
        except (OSError, socket.timeout):
            return None
        if not chunk:
            return None
        data += chunk
    try:
        message = json.loads(data.split(b"\n", 1)[0].decode())
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


class _Member(NamedTuple):
    """A worker that joined: its open connection, name, address and claimed rank."""

    conn: socket.socket
    hostname: str
    address: str
    rank: Optional[int]


def _refusal(hello: Dict[str, object], count: int, rdzv: str, count_name: str,
             joined: List[_Member]) -> Optional[str]:
    """Why a worker's hello cannot join, or None."""
    if hello.get("rdzv") != rdzv:
        return (f"rendezvous id {hello.get('rdzv')!r} differs from the master's {rdzv!r}: "
                "two jobs share one master address")
    if hello.get("nnodes") != count:
        return (f"{count_name}={hello.get('nnodes')} differs from the master's "
                f"{count_name}={count}")
    if any(m.hostname == hello.get("hostname") for m in joined):
        return f"two containers are named {hello.get('hostname')}"
    rank = hello.get("rank")
    if rank is not None:
        if not isinstance(rank, int) or not 0 < rank < count:
            return f"rank {rank} is outside 1..{count - 1} ({count_name}={count})"
        holder = [m.hostname for m in joined if m.rank == rank]
        if holder:
            return f"two containers claim rank {rank} ({holder[0]} and {hello.get('hostname')})"
    if len(joined) >= count - 1:
        return f"more containers than {count_name}={count} joined the rendezvous"
    return None


def _gather(listener: socket.socket, count: int, rdzv: str, count_name: str,
            deadline: float) -> List[_Member]:
    joined: List[_Member] = []
    while len(joined) < count - 1:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        listener.settimeout(left)
        try:
            conn, peer = listener.accept()
        except (OSError, socket.timeout):
            continue
        hello = _read_line(conn, min(deadline, time.monotonic() + 10))
        if hello is None:
            conn.close()
            continue
        refusal = _refusal(hello, count, rdzv, count_name, joined)
        if refusal:
            _send(conn, {"error": refusal})
            conn.close()
            continue
        rank = hello.get("rank")
        joined.append(_Member(conn, str(hello["hostname"]),
                              str(hello.get("address") or "") or peer[0],
                              rank if isinstance(rank, int) else None))
    return joined


def run_master(facts: PlatformFacts, hostname: str, address: str, port: int,
               deadline: float) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """Node 0's side: wait for the workers; every node's names and addresses (the workers
    in rank order when they know their ranks, else by hostname)."""
    count = int(facts.count or 1)
    count_name = COUNT_VARIABLES.get(facts.contract, "the node count")
    joined: List[_Member] = []
    if count > 1:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind((address, port))
            listener.listen(max(count, 16))
            joined = _gather(listener, count, facts.job_key, count_name, deadline)
        except OSError as e:
            raise ContractError(f"cannot listen for the rendezvous on {address}:{port}: "
                                f"{e.strerror or e}") from e
        finally:
            listener.close()
        if len(joined) < count - 1:
            message = (f"rendezvous at {facts.master_addr}:{port}: {len(joined) + 1} of "
                       f"{count} nodes ({count_name}) arrived in time")
            for member in joined:
                _send(member.conn, {"error": message})
                member.conn.close()
            raise ContractError(message)
    joined.sort(key=lambda m: (m.rank or 0, m.hostname))
    names = (hostname,) + tuple(m.hostname for m in joined)
    addresses = (address,) + tuple(m.address for m in joined)
    for index, member in enumerate(joined, 1):
        _send(member.conn, {"index": index, "names": list(names), "addresses": list(addresses)})
        member.conn.close()
    return names, addresses


def run_worker(facts: PlatformFacts, hostname: str, address: str, port: int,
               deadline: float, resolve: Callable[[str], str] = socket.gethostbyname
               ) -> Tuple[int, List[str], List[str]]:
    """A worker's side: join the master's rendezvous (its name resolved by ``resolve``,
    again on every attempt: a Service's name may appear late); its index, names,
    addresses."""
    master = str(facts.master_addr)
    hello = {"rdzv": facts.job_key, "nnodes": facts.count, "hostname": hostname,
             "address": address, "rank": facts.index}
    last = "it did not listen"
    while time.monotonic() < deadline:
        conn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            if address:
                conn.bind((address, 0))
            conn.settimeout(max(min(deadline - time.monotonic(), 5.0), 0.1))
            conn.connect((resolve(master), port))
        except OSError as e:
            conn.close()
            last = e.strerror or str(e)
            time.sleep(RETRY_S)
            continue
        _send(conn, hello)
        answer = _read_line(conn, deadline + 5.0)
        conn.close()
        if answer is None:
            raise ContractError(f"the rendezvous at {master}:{port} gave no ranks in time "
                                f"(NNODES={facts.count})")
        if "error" in answer:
            raise ContractError(str(answer["error"]))
        return int(answer["index"]), list(answer["names"]), list(answer["addresses"])  # type: ignore[call-overload, arg-type]
    raise ContractError(f"cannot reach the rendezvous at {master}:{port} in time: {last}")


def agree_on_ranks(facts: PlatformFacts, container: Container, agent_port: int,
                   wait_s: float, master: bool) -> PlatformFacts:
    """``facts`` completed by the rendezvous: this container's index (unless the platform
    gave it) and every node's name and address (ContractError within ``wait_s`` when the
    containers cannot agree)."""
    bound = pod_bind_host(container.hostname, container.resolve)
    address = "" if bound == ANY_ADDRESS else bound
    port = agent_port + PORT_OFFSET
    deadline = time.monotonic() + wait_s
    hostname = container.hostname.split(".")[0]
    if master:
        if not address:
            address = container.resolve(str(facts.master_addr))
        names, addresses = run_master(facts, hostname, address, port, deadline)
        index = 0
    else:
        index, listed_names, listed_addresses = run_worker(facts, hostname, address, port,
                                                           deadline, container.resolve)
        names, addresses = tuple(listed_names), tuple(listed_addresses)
    return facts._replace(index=index, peers=lambda n: (names, addresses))
