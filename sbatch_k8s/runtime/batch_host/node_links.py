"""The batch host's control connections to the other nodes of the job.

Before the batch script starts, node 0 opens one to every other node's agent (retrying until
a deadline; an agent answering as another node is refused and asked again later). Over it go
signals for every task, the job's end for every step, and ``shutdown``; when it drops, the
node is gone.
"""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List, Optional, Sequence

from sbatch_k8s.runtime.agent.service import log
from sbatch_k8s.runtime.protocol import (
    ProtocolError,
    authenticate,
    decode_json,
    encode_json,
    read_frame,
)

#: Between two attempts to reach a node.
RETRY_S = 0.05


class NodeLink:
    """The batch host's control connection to one other node."""

    def __init__(self, index: int, name: str, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.index = index
        self.name = name
        self.reader = reader
        self.writer = writer

    async def send(self, message: Dict[str, Any]) -> None:
        try:
            self.writer.write(encode_json(message))
            await self.writer.drain()
        except (ConnectionError, RuntimeError):
            pass

    async def wait_closed(self) -> Optional[str]:
        """Return when the node's connection drops (the node is gone): why it said it left
        (its ``leaving`` message, :meth:`Agent.say_leaving`), None when it said nothing."""
        why: Optional[str] = None
        try:
            while True:
                frame = await read_frame(self.reader)
                if frame is None:
                    break
                try:
                    message = decode_json(frame[2])
                except ProtocolError:
                    continue
                if message.get("type") == "leaving":
                    why = str(message.get("why") or "")
        except (ProtocolError, ConnectionError):
            pass
        return why


async def connect_node(index: int, name: str, address: str, port: int, token: bytes,
                       deadline: float) -> NodeLink:
    """Open the control connection to node ``index``, retrying until ``deadline``. The agent
    must answer ``ready`` with this node's name: one that names another node (a stale
    address, a mixed-up peer list) is refused, logged once, and asked again later; at the
    deadline the TimeoutError says who answered instead."""
    loop = asyncio.get_event_loop()
    impostor: Optional[str] = None
    while True:
        try:
            reader, writer = await asyncio.open_connection(address, port)
            await authenticate(reader, writer, token)
            writer.write(encode_json({"type": "control", "node": name}))
            await writer.drain()
            frame = await read_frame(reader)
            reply = decode_json(frame[2]) if frame is not None else {}
            answered = str(reply.get("node"))
            if reply.get("type") == "ready" and answered == name:
                return NodeLink(index, name, reader, writer)
            writer.close()
            if reply.get("type") in ("ready", "not_me") and answered != impostor:
                impostor = answered
                log(f"refused node {index}'s agent at {address}:{port}: it answered as "
                    f"{answered!r}, expected {name!r}")
        except (OSError, ProtocolError, asyncio.TimeoutError):
            pass
        if loop.time() >= deadline:
            raise TimeoutError(name if impostor is None else
                               f"{name} (the agent at {address} is {impostor})")
        await asyncio.sleep(RETRY_S)


async def connect_all(names: Sequence[str], addresses: Sequence[str], port: int, token: bytes,
                      wait_s: float) -> List[NodeLink]:
    """Control connections to nodes 1..N-1; RuntimeError naming every node that never
    answered within ``wait_s``."""
    deadline = asyncio.get_event_loop().time() + wait_s
    attempts = [asyncio.ensure_future(connect_node(i, names[i], addresses[i], port, token,
                                                   deadline))
                for i in range(1, len(names))]
    results = await asyncio.gather(*attempts, return_exceptions=True)
    missing = [str(r) or names[i + 1] for i, r in enumerate(results)
               if isinstance(r, BaseException)]
    if missing:
        for r in results:
            if isinstance(r, NodeLink):
                r.writer.close()
        raise RuntimeError(f"nodes did not answer within {int(wait_s)} s: {', '.join(missing)}")
    return [r for r in results if isinstance(r, NodeLink)]
