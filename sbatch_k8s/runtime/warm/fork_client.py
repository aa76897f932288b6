"""The client half of a command served by a warm process
(:mod:`sbatch_k8s.runtime.warm.fork_server`).

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
* server: ``X<code>\\n`` when the command is done, ``Z<signum>\\n`` when its process died
  by a signal (the served process reports ``X`` itself; the server reports what it reaped).

A client always ends. The command's exit code is its own; a command killed by a signal the
client forwarded kills the client with that signal, as it would have killed the command run
here; any other end without an exit code (the process killed by someone else, the server
gone) is one ``<command>: error: ...`` line and exit 1. While it waits, the client looks every
:data:`LIVENESS_S` whether the served process still exists, so that a server that cannot
report (stopped, wedged) cannot keep it waiting for ever.

Only ``os``, ``sys`` and the C modules ``_socket``/``_signal`` are imported at start (their Python
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
#: How often a waiting client checks that the served process still exists.
LIVENESS_S = 2.0
#: How long a client waits for the server's word once the served process is gone.
GONE_GRACE_S = 3.0
FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGCONT")
#: The directory holding the ``sbatch_k8s`` package (whichever checkout or zipapp runs).
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


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


def _forward_signals(conn: _socket.socket, forwarded: List[int]) -> None:
    def forward(signum: int, _frame: object) -> None:
        forwarded.append(signum)
        try:
            conn.sendall(b"K" + str(signum).encode() + b"\n")
        except OSError:
            pass

    for name in FORWARDED:
        _signal.signal(getattr(_signal, name), forward)


def _descriptors(fds: Sequence[int]) -> bytes:
    """An ``int[]`` of descriptors, as ``SCM_RIGHTS`` carries them."""
    return b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in fds)


def process_exists(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie nobody reaped is not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False      # the number went to another user's process: ours is gone
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return True       # no /proc: kill(0) is all there is
    return stat[stat.rfind(b")") + 2:][:1] not in (b"Z", b"X")


def _wait_for_end(conn: _socket.socket, buffer: List[bytes], pid: int) -> Optional[bytes]:
    """The server's final line; None when the connection closed without one, or when the
    served process ``pid`` is gone and nothing came within :data:`GONE_GRACE_S`."""
    import time  # a built-in module: no cost worth avoiding once the command runs

    conn.settimeout(LIVENESS_S)
    gone_since = None
    while True:
        try:
            return _read_line(conn, buffer)
        except _socket.timeout:
            pass
        if process_exists(pid):
            gone_since = None
        elif gone_since is None:
            gone_since = time.monotonic()
            conn.settimeout(min(LIVENESS_S, GONE_GRACE_S))
        elif time.monotonic() - gone_since >= GONE_GRACE_S:
            return None


def _error(command: str, message: str) -> int:
    try:
        os.write(2, f"{command}: error: {message}\n".encode())
    except OSError:
        pass
    return 1


def _ended(command: str, line: Optional[bytes], forwarded: Sequence[int]) -> int:
    """The client's exit code for the server's final ``line``."""
    if line is None:
        return _error(command, "the command server ended without the exit status of this "
                               "command (its process is gone)")
    if line.startswith(b"X"):
        return int(line[1:])
    if line.startswith(b"Z"):
        signum = int(line[1:])
        if signum in forwarded:   # what this process was sent killed the command there
            _signal.signal(signum, _signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return 128 + signum
        return _error(command, f"the command's process on the command server was killed "
                               f"by signal {signum} ({_signal.strsignal(signum)})")
    return _error(command, f"unexpected answer from the command server: {line[:40]!r}")


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
    forwarded: List[int] = []
    try:  # the command runs there now: never run it a second time here
        _forward_signals(conn, forwarded)
        return _ended(command, _wait_for_end(conn, buffer, int(started[1:])), forwarded)
    except (OSError, ValueError) as e:
        return _error(command, f"lost the command server: {e}")
    finally:
        conn.close()
