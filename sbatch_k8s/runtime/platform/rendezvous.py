"""Rank agreement where the platform gives no rank (AIStation): a rendezvous at the master.

The master container (node 0) listens on its own address, port :data:`PORT_OFFSET` above the
runtime's agent port; every other container connects (retrying until the master listens),
bound to its own address, and sends one JSON line: the job's rendezvous id, the node count it
was told, its hostname and address. When the count is complete the master numbers the workers
by hostname (1 … N-1) and answers each with its index and every node's name and address. All
of it happens within one deadline: a count that never completes, a container of another job
(another ``RDZV_ID``), a count that disagrees, one container too many or a hostname seen twice
end with one line on every container involved — never a hang.
"""

from __future__ import annotations

import json
import socket
import time
from typing import Dict, List, Optional, Tuple

from sbatch_k8s.runtime.contract import ANY_ADDRESS, ContractError, pod_bind_host
from sbatch_k8s.runtime.platform.facts import Container, PlatformFacts

#: The rendezvous listens on the agent port + 1 (the agent starts only afterwards).
PORT_OFFSET = 1
RETRY_S = 0.2
LINE_LIMIT = 65536


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


def _refusal(hello: Dict[str, object], count: int, rdzv: str,
             seen: Dict[str, object]) -> Optional[str]:
    """Why a worker's hello cannot join, or None."""
    if hello.get("rdzv") != rdzv:
        return (f"rendezvous id {hello.get('rdzv')!r} differs from the master's {rdzv!r}: "
                "two jobs share one master address")
    if hello.get("nnodes") != count:
        return f"NNODES={hello.get('nnodes')} differs from the master's NNODES={count}"
    if hello.get("hostname") in seen:
        return f"two containers are named {hello.get('hostname')}"
    if len(seen) >= count - 1:
        return f"more containers than NNODES={count} joined the rendezvous"
    return None


def run_master(facts: PlatformFacts, hostname: str, address: str, port: int,
               deadline: float, rdzv: str) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """Node 0's side: wait for the workers; every node's names and addresses."""
    count = int(facts.count or 1)
    joined: Dict[str, Tuple[socket.socket, str]] = {}
    if count > 1:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind((address, port))
            listener.listen(max(count, 16))
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
                refusal = _refusal(hello, count, rdzv, {h: 1 for h in joined})
                if refusal:
                    _send(conn, {"error": refusal})
                    conn.close()
                    continue
                reported = str(hello.get("address") or "")
                joined[str(hello["hostname"])] = (conn, reported or peer[0])
        except OSError as e:
            raise ContractError(f"cannot listen for the rendezvous on {address}:{port}: "
                                f"{e.strerror or e}") from e
        finally:
            listener.close()
        if len(joined) < count - 1:
            message = (f"rendezvous at {facts.master_addr}:{port}: {len(joined) + 1} of "
                       f"{count} nodes (NNODES) arrived in time")
            for conn, _ in joined.values():
                _send(conn, {"error": message})
                conn.close()
            raise ContractError(message)
    workers = sorted(joined)
    names = (hostname,) + tuple(workers)
    addresses = (address,) + tuple(joined[w][1] for w in workers)
    for index, worker in enumerate(workers, 1):
        conn = joined[worker][0]
        _send(conn, {"index": index, "names": list(names), "addresses": list(addresses)})
        conn.close()
    return names, addresses


def run_worker(facts: PlatformFacts, hostname: str, address: str, port: int,
               deadline: float, rdzv: str) -> Tuple[int, List[str], List[str]]:
    """A worker's side: join the master's rendezvous; its index, names, addresses."""
    master = str(facts.master_addr)
    hello = {"rdzv": rdzv, "nnodes": facts.count, "hostname": hostname, "address": address}
    last = "it did not listen"
    while time.monotonic() < deadline:
        conn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            if address:
                conn.bind((address, 0))
            conn.settimeout(max(min(deadline - time.monotonic(), 5.0), 0.1))
            conn.connect((master, port))
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
    """``facts`` completed by the rendezvous: this container's index and every node's name
    and address (ContractError within ``wait_s`` when the containers cannot agree)."""
    bound = pod_bind_host(container.hostname, container.resolve)
    address = "" if bound == ANY_ADDRESS else bound
    port = agent_port + PORT_OFFSET
    deadline = time.monotonic() + wait_s
    hostname = container.hostname.split(".")[0]
    if master:
        if not address:
            address = container.resolve(str(facts.master_addr))
        names, addresses = run_master(facts, hostname, address, port, deadline, facts.job_key)
        index = 0
    else:
        index, listed_names, listed_addresses = run_worker(facts, hostname, address, port,
                                                           deadline, facts.job_key)
        names, addresses = tuple(listed_names), tuple(listed_addresses)
    return facts._replace(index=index, peers=lambda n: (names, addresses))
