"""Who may use the console: the user who started it, from this machine, with its token.

The console listens on 127.0.0.1 only. Every request must then pass three checks:

* **Same user.** The client's socket must belong to the console's own uid: the kernel
  says whose each TCP socket is (``/proc/net/tcp``, the ``uid`` column), so another user of
  the machine is refused even with the URL in hand.
* **Token.** A random token (printed by the command in the console's URL) must come with
  the request: in the URL once — the page then holds it in a cookie of its own
  (``HttpOnly``, ``SameSite=Strict``) — and in a header on every request that changes
  something, which no other site's page can send.
* **Host.** The ``Host`` header must name the console's own address (a page of another
  site that made its name resolve to 127.0.0.1 cannot talk to the console).
"""

from __future__ import annotations

import hmac
import os
import secrets
import socket
import struct
from typing import Iterable, Optional, Tuple

COOKIE = "sbatch_k8s_ui"
HEADER = "X-Console-Token"
TOKEN_PARAMETER = "token"
#: Methods that only read (the rest need the token in :data:`HEADER`).
READING = ("GET", "HEAD")


def new_token() -> str:
    """A fresh random token (192 bits)."""
    return secrets.token_urlsafe(24)


def same_token(given: Optional[str], token: str) -> bool:
    """Constant-time comparison."""
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


def _hex_address(host: str, port: int) -> Optional[str]:
    """``127.0.0.1:8080`` as ``/proc/net/tcp`` writes it (``0100007F:1F90``)."""
    try:
        packed = socket.inet_aton(host)
    except OSError:
        return None
    return f"{struct.unpack('<I', packed)[0]:08X}:{port:04X}"


def socket_owner(peer: Tuple[str, int], server: Tuple[str, int],
                 tables: Iterable[str] = ("/proc/net/tcp",)) -> Optional[int]:
    """The uid owning the client end (``peer``) of a connection to ``server``; None when
    the kernel lists no such socket (another machine, another network namespace)."""
    local, remote = _hex_address(*peer), _hex_address(*server)
    if local is None or remote is None:
        return None
    for table in tables:
        try:
            with open(table) as f:
                next(f, None)
                for line in f:
                    fields = line.split()
                    if len(fields) > 7 and fields[1] == local and fields[2] == remote:
                        return int(fields[7])
        except OSError:
            continue
    return None


def peer_is_owner(peer: Optional[Tuple[str, int]], server: Tuple[str, int],
                  uid: Optional[int] = None) -> bool:
    """Whether the connection from ``peer`` comes from a process of ``uid`` (default:
    ours)."""
    if peer is None:
        return False
    owner = socket_owner((str(peer[0]), int(peer[1])), server)
    return owner is not None and owner == (os.getuid() if uid is None else uid)


def host_allowed(host: Optional[str], port: int) -> bool:
    """Whether the ``Host`` header names the console itself."""
    return host in (f"127.0.0.1:{port}", f"localhost:{port}")
