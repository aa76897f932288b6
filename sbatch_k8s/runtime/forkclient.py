"""The client half of a command served by a warm process (:mod:`sbatch_k8s.runtime.forkserver`).

A command that must answer fast hands its arguments, working directory, environment and its
stdin/stdout/stderr descriptors (``SCM_RIGHTS``) to a server over a Unix socket, forwards the
signals it receives, and exits with the served command's exit code. The command then behaves
as if it ran here — same files, same environment — without paying for a Python start-up with
every module loaded.

Protocol, on one stream connection:

* client: 4-byte big-endian length, then NUL-separated words ``MAGIC, command, root, cwd,
  argc, argv…, envc, NAME=value…``, with descriptors 0, 1, 2 attached;
* server: ``P<pid>\\n`` (started) or ``S\\n`` (not served: run it yourself);
* client: ``K<signum>\\n`` per forwarded signal; closing the connection ends the command;
* server: ``X<code>\\n`` when the command is done.

Only ``os``, ``sys`` and the C modules ``_socket``/``_signal`` are imported (their Python
wrappers pull in ``enum``, which alone costs a few milliseconds); runs on Python ≥ 3.8.
"""

from __future__ import annotations

import _signal
import _socket
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs milliseconds this module must not spend
    from typing import Callable, List, Mapping, Optional, Sequence

MAGIC = b"SBK8S1"
FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGCONT")
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def encode_request(command: str, argv: Sequence[str], environ: Mapping[str, str]) -> bytes:
    """The request: NUL-separated words (no JSON: keep the client import-free)."""
    words = [MAGIC, command.encode(), PACKAGE_ROOT.encode(), os.getcwdb(),
             str(len(argv)).encode()]
    words += [os.fsencode(a) for a in argv]
    env = [k + b"=" + v for k, v in os.environb.items()] if environ is os.environ else [
        os.fsencode(f"{k}={v}") for k, v in environ.items()]
    words += [str(len(env)).encode()] + env
    body = b"\0".join(words)
    return len(body).to_bytes(4, "big") + body


def _read_line(conn: _socket.socket, buffer: List[bytes]) -> Optional[bytes]:
    while b"\n" not in buffer[0]:
        data = conn.recv(4096)
        if not data:
            return None
        buffer[0] += data
    line, _, rest = buffer[0].partition(b"\n")
    buffer[0] = rest
    return line


def _forward_signals(conn: _socket.socket) -> None:
    def forward(signum: int, _frame: object) -> None:
        try:
            conn.sendall(b"K" + str(signum).encode() + b"\n")
        except OSError:
            pass

    for name in FORWARDED:
        _signal.signal(getattr(_signal, name), forward)


def _descriptors(fds: Sequence[int]) -> bytes:
    """An ``int[]`` of descriptors, as ``SCM_RIGHTS`` carries them."""
    return b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in fds)


def run_on_server(path: str, command: str, argv: Sequence[str],
                  on_absent: Optional[Callable[[], None]] = None) -> Optional[int]:
    """The command's exit code as served at ``path``; None when it must run here (no
    server there, or the server declined). ``on_absent`` runs when nothing listens."""
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.connect(path)
    except OSError:
        conn.close()
        if on_absent is not None:
            on_absent()
        return None
    buffer = [b""]
    try:
        conn.sendmsg([encode_request(command, argv, os.environ)],
                     [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, _descriptors((0, 1, 2)))])
        started = _read_line(conn, buffer)
    except OSError:
        conn.close()
        return None
    if started is None or not started.startswith(b"P"):
        conn.close()
        return None
    try:  # the command runs there now: never run it a second time here
        _forward_signals(conn)
        finished = _read_line(conn, buffer)
        return int(finished[1:]) if finished and finished.startswith(b"X") else 1
    except (OSError, ValueError):
        return 1
    finally:
        conn.close()
