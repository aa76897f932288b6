"""The server half of commands served by a warm process (client: :mod:`.fork_client`).

The server has every module the commands need already imported. It accepts connections from
its own uid only; each request is forked: the child takes the client's stdin/stdout/stderr,
working directory, environment and arguments, runs the command and reports its exit code;
the parent relays the signals the client forwards, ends a child whose client went away, and
reaps. Subclasses say which requests they serve and when to stop.

A child can end without reporting (``kill -9``, the kernel's OOM killer, a signal the client
forwarded): the client would then wait for ever, since the server holds its own end of the
connection. So the server reaps as soon as a child ends (``SIGCHLD`` wakes its loop) and
reports every reaped child's end itself — ``X<code>`` for an exit, ``Z<signal>`` for a death
by a signal — then closes its end. A child that did report sends the same line first; the
client reads only the first.

Used by the per-user command server (``sbatch``, ``squeue``…, :mod:`sbatch_k8s.server`) and by
node 0's step server (``srun`` inside a job, :mod:`sbatch_k8s.runtime.batch_host.step_server`).
Standard library only.
"""

from __future__ import annotations

import abc
import os
import selectors
import signal
import socket
import struct
import sys
import time
from typing import Dict, List, Tuple

from sbatch_k8s.runtime.warm.fork_client import MAGIC, PACKAGE_ROOT

MAX_FDS = 3
CHILD_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD, signal.SIGQUIT,
                 signal.SIGUSR1, signal.SIGUSR2)


class Request:
    """One decoded request."""

    def __init__(self, command: str, root: str, cwd: bytes, argv: List[bytes],
                 env: Dict[bytes, bytes], fds: List[int]) -> None:
        self.command = command
        self.root = root
        self.cwd = cwd
        self.argv = argv
        self.env = env
        self.fds = fds


def decode_request(body: bytes, fds: List[int]) -> Request:
    """The request a client sent (see :mod:`.fork_client` for the layout)."""
    words = body.split(b"\0")
    if words[0] != MAGIC:
        raise ValueError("not a command request")
    count = int(words[4])
    rest = words[5 + count:]
    env_count = int(rest[0])
    env = dict(item.split(b"=", 1) for item in rest[1:1 + env_count] if b"=" in item)
    return Request(words[1].decode(), words[2].decode(), words[3], words[5:5 + count], env, fds)


def receive(conn: socket.socket) -> Tuple[bytes, List[int]]:
    """The request body and the passed descriptors."""
    fds: List[int] = []
    head = b""
    while len(head) < 4:
        data, ancillary, _, _ = conn.recvmsg(65536, socket.CMSG_SPACE(MAX_FDS * 4))
        if not data:
            raise ConnectionError("client went away")
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                whole = len(payload) // 4 * 4
                fds += list(struct.unpack(f"{whole // 4}i", payload[:whole]))
        head += data
    size = int.from_bytes(head[:4], "big")
    body = head[4:]
    while len(body) < size:
        data = conn.recv(min(65536, size - len(body)))
        if not data:
            raise ConnectionError("client went away")
        body += data
    return body, fds


def kill(pid: int, signum: int) -> None:
    """Signal ``pid`` if it still exists."""
    try:
        os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _alive(pid: int) -> bool:
    try:
        return os.waitpid(pid, os.WNOHANG) == (0, 0)
    except ChildProcessError:
        return False


def _exit_code(e: SystemExit) -> int:
    return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)


def same_mount_namespace(pid: int) -> bool:
    """Whether process ``pid`` sees the files this server sees: a client in another mount
    namespace (a container whose filesystem shares this server's socket path) must run its
    command itself, among its own files."""
    try:
        return os.stat(f"/proc/{pid}/ns/mnt").st_ino == os.stat("/proc/self/ns/mnt").st_ino
    except OSError:
        return True     # no /proc to tell by: as before


class ForkServer(abc.ABC):
    """Accepts requests, forks children, relays signals, reaps. Subclasses give
    :meth:`run_command` (in the child), and may refine :meth:`accepts`, :meth:`done` and
    :meth:`close_in_child`."""

    poll_s = 5.0

    def __init__(self, listener: socket.socket) -> None:
        self.listener = listener
        self.selector = selectors.DefaultSelector()
        self.selector.register(listener, selectors.EVENT_READ)
        self.children: Dict[socket.socket, int] = {}
        self.last_request = time.time()
        #: The self-pipe SIGCHLD writes to (:meth:`serve` sets it up): ends are reaped and
        #: reported at once, not at the next request or poll.
        self._wakeup: Tuple[int, int] = (-1, -1)

    def accepts(self, request: Request) -> bool:
        """Whether to serve ``request`` (otherwise the client runs it itself)."""
        return request.root == PACKAGE_ROOT

    def done(self) -> bool:
        """Whether to stop serving (checked between requests)."""
        return False

    def close_in_child(self) -> None:
        """Close what a child must not hold besides the listener and other clients."""

    @abc.abstractmethod
    def run_command(self, command: str, argv: List[str]) -> int:
        """In the child, as the client's process: run the command, return its exit code."""

    def _serve(self, conn: socket.socket) -> None:
        peer_pid, uid, _ = struct.unpack("3i", conn.getsockopt(
            socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
        if uid != os.getuid():
            conn.close()
            return
        try:
            request = decode_request(*receive(conn))
        except (ValueError, IndexError, ConnectionError, OSError):
            conn.close()
            return
        self.last_request = time.time()
        if not (same_mount_namespace(peer_pid) and self.accepts(request)):
            for fd in request.fds:
                os.close(fd)
            try:
                conn.sendall(b"S\n")
            except OSError:
                pass
            conn.close()
            return
        # The child waits for the go-ahead until "P" is on the wire: its own "X" must never
        # overtake it (a client reading "X" first would run the command a second time).
        go_read, go_write = os.pipe()
        pid = os.fork()
        if pid == 0:
            # The child (and whatever it forks) holds none of the server's descriptors.
            os.close(go_write)
            self._drop_wakeup()
            self.listener.close()
            self.selector.close()
            for other in self.children:
                other.close()
            self.close_in_child()
            if os.read(go_read, 1) != b"g":
                os._exit(1)
            os.close(go_read)
            self._child(conn, request)
        os.close(go_read)
        for fd in request.fds:
            os.close(fd)
        try:
            conn.sendall(b"P" + str(pid).encode() + b"\n")
            os.write(go_write, b"g")
        except OSError:
            conn.close()
            return
        finally:
            os.close(go_write)
        self.children[conn] = pid
        self.selector.register(conn, selectors.EVENT_READ)

    def _child(self, conn: socket.socket, request: Request) -> None:
        """Become the client's command, run it, report the exit code; never return."""
        code = 1
        try:
            for signum in CHILD_SIGNALS:
                signal.signal(signum, signal.SIG_DFL)
            os.setpgid(0, 0)
            for target, fd in enumerate(request.fds[:3]):
                os.dup2(fd, target)
            for fd in request.fds:
                if fd > 2:
                    os.close(fd)
            os.chdir(request.cwd)
            os.environ.clear()
            os.environb.update(request.env)
            sys.argv = [request.command] + [os.fsdecode(a) for a in request.argv]
            try:
                code = self.run_command(request.command, sys.argv[1:])
            except SystemExit as e:
                code = _exit_code(e)
        except BaseException as e:  # report, never fall back into the server loop
            try:
                os.write(2, f"{request.command}: error: internal error: {e}\n".encode())
            except OSError:
                pass
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
            try:
                conn.sendall(b"X" + str(code).encode() + b"\n")
            except OSError:
                pass
            os._exit(code)

    def _relay(self, conn: socket.socket) -> None:
        pid = self.children.get(conn)
        try:
            data = conn.recv(4096)
        except OSError:
            data = b""
        if not data:
            self.selector.unregister(conn)
            conn.close()
            self.children.pop(conn, None)
            if pid is not None and _alive(pid):
                kill(pid, signal.SIGTERM)
            return
        for line in data.split(b"\n"):
            if line.startswith(b"K") and pid is not None:
                kill(pid, int(line[1:]))

    def _reap(self) -> None:
        """Reap every ended child; tell the client of a child still connected how it ended."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = next((c for c, child in self.children.items() if child == pid), None)
            if conn is not None:
                self._report_end(conn, status)

    def _report_end(self, conn: socket.socket, status: int) -> None:
        """Send ``conn``'s client the end of its command (``status`` as ``waitpid`` gives
        it) and close the server's end of the connection."""
        line = end_line(status)
        try:
            conn.sendall(line)
        except OSError:
            pass  # the client is gone too
        self.children.pop(conn, None)
        try:
            self.selector.unregister(conn)
        except (KeyError, ValueError):
            pass
        conn.close()

    def _watch_children(self) -> None:
        """Wake the loop when a child ends: SIGCHLD writes to a self-pipe it selects on."""
        read_end, write_end = os.pipe()
        for fd in (read_end, write_end):
            os.set_blocking(fd, False)
            os.set_inheritable(fd, False)
        self._wakeup = (read_end, write_end)
        signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)
        self.selector.register(read_end, selectors.EVENT_READ)

    def _drop_wakeup(self) -> None:
        """In a child: no SIGCHLD wake-ups into the server's pipe."""
        if self._wakeup[0] < 0:
            return
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in self._wakeup:
            os.close(fd)
        self._wakeup = (-1, -1)

    def serve(self) -> None:
        """Serve until :meth:`done`."""
        self._watch_children()
        while not self.done():
            for key, _ in self.selector.select(timeout=self.poll_s):
                if key.fileobj is self.listener:
                    try:
                        conn, _ = self.listener.accept()
                    except OSError:
                        continue
                    self._serve(conn)
                elif key.fileobj == self._wakeup[0]:
                    try:
                        os.read(self._wakeup[0], 4096)
                    except OSError:
                        pass
                else:
                    self._relay(key.fileobj)  # type: ignore[arg-type]
            self._reap()

    def end_children(self) -> None:
        """SIGTERM every child still running (the server is going away)."""
        for pid in self.children.values():
            kill(pid, signal.SIGTERM)


def end_line(status: int) -> bytes:
    """The protocol line for a child's end (``waitpid`` status): ``X<exit code>`` or
    ``Z<signal>``."""
    if os.WIFSIGNALED(status):
        return b"Z" + str(os.WTERMSIG(status)).encode() + b"\n"
    return b"X" + str(os.WEXITSTATUS(status)).encode() + b"\n"


def listen(path: str) -> socket.socket:
    """A Unix socket at ``path`` only this user can connect to (an old one replaced)."""
    if os.path.exists(path):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o077)
    try:
        listener.bind(path)
    finally:
        os.umask(old)
    listener.listen(64)
    return listener
