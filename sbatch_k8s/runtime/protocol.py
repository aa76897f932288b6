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
from typing import Any, Dict, Optional, Tuple

HEADER = struct.Struct("!cII")
KIND_JSON = b"J"
KIND_STDOUT = b"O"
KIND_STDERR = b"E"
KIND_STDIN = b"I"
KIND_STDIN_CLOSE = b"C"
MAX_FRAME = 16 * 1024 * 1024
_AUTH_CONTEXT = b"sbatch-k8s-launch\0"
NONCE_BYTES = 32
AUTH_TIMEOUT_S = 10.0


class ProtocolError(Exception):
    """The peer broke the protocol (bad frame, failed authentication)."""


def encode_frame(kind: bytes, task: int, payload: bytes) -> bytes:
    """One frame's bytes."""
    return HEADER.pack(kind, task, len(payload)) + payload


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
    """The job's token from its file (Secret mount, or the local job directory)."""
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
