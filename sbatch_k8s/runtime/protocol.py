"""The wire protocol between srun / the batch host and node agents.

One TCP connection per (client, node). Frames are ``kind (1 byte) | task (u32) | length
(u32) | payload``: ``J`` a JSON control message, ``O``/``E`` a chunk of a task's
stdout/stderr, ``I`` stdin for a task, ``C`` stdin closed.

Authentication, before anything else: the agent sends a random nonce; the client answers
``HMAC-SHA256(token, "sbatch-k8s-launch\\0" + nonce)``; the agent compares in constant time,
then says ``welcome`` — or closes the connection on a mismatch. The token itself never
crosses the wire and never appears in any message, log or environment (tasks see the path of
the token file only).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import struct
from typing import Any, Callable, Dict, Optional, Tuple

from sbatch_k8s.runtime.file_access import needed

HEADER = struct.Struct("!cII")
KIND_JSON = b"J"
KIND_STDOUT = b"O"
KIND_STDERR = b"E"
KIND_STDIN = b"I"
KIND_STDIN_CLOSE = b"C"
MAX_FRAME = 16 * 1024 * 1024
READ_BYTES = 4 << 20
_AUTH_CONTEXT = b"sbatch-k8s-launch\0"
NONCE_BYTES = 32
AUTH_TIMEOUT_S = 10.0


class ProtocolError(Exception):
    """The peer broke the protocol (bad frame, failed authentication)."""


def fresh_loop() -> asyncio.AbstractEventLoop:
    """A new event loop, made current: what a command's entry point runs on (Python 3.14
    no longer creates one implicitly, and a forked server child must not reuse its parent's)."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    return loop


def encode_frame(kind: bytes, task: int, payload: bytes) -> bytes:
    """One frame's bytes."""
    return HEADER.pack(kind, task, len(payload)) + payload


def write_frame(writer: asyncio.StreamWriter, kind: bytes, task: int, payload: bytes) -> None:
    """Queue one frame without copying its payload (two writes, no await between them)."""
    writer.write(HEADER.pack(kind, task, len(payload)))
    writer.write(payload)


def encode_json(message: Dict[str, Any], task: int = 0) -> bytes:
    """A ``J`` frame carrying ``message``."""
    return encode_frame(KIND_JSON, task, json.dumps(message, separators=(",", ":")).encode())


async def read_frame(reader: asyncio.StreamReader) -> Optional[Tuple[bytes, int, bytes]]:
    """The next ``(kind, task, payload)``, or None at a clean end of stream."""
    try:
        header = await reader.readexactly(HEADER.size)
    except asyncio.IncompleteReadError as e:
        if e.partial:
            raise ProtocolError("connection closed inside a frame header") from e
        return None
    kind, task, length = HEADER.unpack(header)
    if length > MAX_FRAME:
        raise ProtocolError(f"frame of {length} bytes is too large")
    try:
        payload = await reader.readexactly(length)
    except asyncio.IncompleteReadError as e:
        raise ProtocolError("connection closed inside a frame") from e
    return kind, task, payload


class FrameReceiver(asyncio.Protocol):
    """Frames from a connection, handed to ``on_frame`` as they are parsed from large reads.

    Used once a stream is authenticated and output starts to flow (srun's connections to the
    agents): no stream buffer copies, ``closed`` resolves when the connection ends.
    """

    def __init__(self, on_frame: "Callable[[bytes, int, bytes], None]",
                 pending: bytes = b"") -> None:
        self.on_frame = on_frame
        self.pending = pending
        self.closed: "asyncio.Future[None]" = asyncio.get_event_loop().create_future()
        self.error: Optional[ProtocolError] = None

    def data_received(self, data: bytes) -> None:
        buffer = self.pending + data if self.pending else data
        position, size = 0, len(buffer)
        while size - position >= HEADER.size:
            kind, task, length = HEADER.unpack_from(buffer, position)
            end = position + HEADER.size + length
            if end > size:
                break
            self.on_frame(kind, task, buffer[position + HEADER.size:end])
            position = end
        self.pending = buffer[position:]

    def eof_received(self) -> bool:
        return False

    def connection_lost(self, exc: Optional[Exception]) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


def take_over(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
              on_frame: "Callable[[bytes, int, bytes], None]") -> FrameReceiver:
    """Switch an authenticated stream connection to a :class:`FrameReceiver` (bytes the
    stream had already buffered are not lost)."""
    transport = writer.transport
    pending = bytes(reader._buffer)  # type: ignore[attr-defined]  # stable since 3.4
    reader._buffer.clear()  # type: ignore[attr-defined]
    receiver = FrameReceiver(on_frame)
    transport.set_protocol(receiver)
    try:
        transport.max_size = READ_BYTES  # type: ignore[attr-defined]
    except AttributeError:
        pass
    if pending:
        receiver.data_received(pending)
    return receiver


def decode_json(payload: bytes) -> Dict[str, Any]:
    """A control message; ProtocolError when it is not a JSON object."""
    try:
        message = json.loads(payload.decode())
    except (UnicodeDecodeError, ValueError) as e:
        raise ProtocolError("malformed control message") from e
    if not isinstance(message, dict) or "type" not in message:
        raise ProtocolError("control message without a type")
    return message


def read_token(path: str) -> bytes:
    """The job's token from its file (Secret mount, or the local job directory);
    AccessError when it cannot be read."""
    with needed("read the job token", path):
        with open(path, "rb") as f:
            token = f.read().strip()
    if not token:
        raise ProtocolError(f"token file {path} is empty")
    return token


def answer_challenge(token: bytes, nonce: bytes) -> bytes:
    """The client's proof of knowing the token."""
    return hmac.new(token, _AUTH_CONTEXT + nonce, hashlib.sha256).digest()


async def challenge_client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                           token: bytes) -> None:
    """Agent side: send a nonce, check the answer in constant time; ProtocolError if wrong."""
    nonce = os.urandom(NONCE_BYTES)
    writer.write(encode_frame(KIND_JSON, 0, nonce))
    await writer.drain()
    frame = await asyncio.wait_for(read_frame(reader), AUTH_TIMEOUT_S)
    if frame is None or frame[0] != KIND_JSON:
        raise ProtocolError("no authentication answer")
    if not hmac.compare_digest(frame[2], answer_challenge(token, nonce)):
        raise ProtocolError("authentication failed")
    writer.write(encode_json({"type": "welcome"}))
    await writer.drain()


async def authenticate(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                       token: bytes) -> None:
    """Client side: answer the agent's challenge."""
    frame = await asyncio.wait_for(read_frame(reader), AUTH_TIMEOUT_S)
    if frame is None or len(frame[2]) != NONCE_BYTES:
        raise ProtocolError("the node agent sent no challenge")
    writer.write(encode_frame(KIND_JSON, 0, answer_challenge(token, frame[2])))
    await writer.drain()
    reply = await asyncio.wait_for(read_frame(reader), AUTH_TIMEOUT_S)
    if reply is None or reply[0] != KIND_JSON or decode_json(reply[2]).get("type") != "welcome":
        raise ProtocolError("the node agent refused the job token")
