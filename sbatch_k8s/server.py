"""The per-user command server behind :mod:`sbatch_k8s.fastpath`.

It imports every command and builds every value grammar once, then serves a Unix socket in
the state directory (mode 0700, only connections from its own uid). Each request is forked:
the child takes the client's stdin/stdout/stderr, working directory, environment and
arguments, runs the command's ``main`` and reports the exit code; the parent relays signals
the client forwards. One server per state directory (an exclusive lock); it exits when idle
for :data:`IDLE_EXIT_S`, or when a source file it loaded changes (the next command then runs
the new code and starts a fresh server).
"""

from __future__ import annotations

import fcntl
import os
import selectors
import signal
import socket
import struct
import sys
import time
from typing import Dict, List, Optional, Tuple

from sbatch_k8s.fastpath import MAGIC

IDLE_EXIT_S = 900.0
COMMANDS = ("sbatch", "srun", "squeue", "scancel", "sacct", "scontrol", "sinfo")
MAX_FDS = 3


def preload() -> None:
    """Import the commands and build the grammars: what every child then has for free."""
    import importlib
    import pkgutil

    for name in COMMANDS:
        importlib.import_module(f"sbatch_k8s.cli.{name}")
    for module in ("parsers.formats.squeue", "parsers.formats.sacct", "parsers.formats.scontrol",
                   "parsers.formats.sinfo", "parsers.report_options.squeue",
                   "parsers.report_options.sacct", "parsers.report_options.scancel",
                   "parsers.report_options.scontrol", "parsers.report_options.sinfo",
                   "sbatch_k8s.backends.local.submit", "sbatch_k8s.backends.local.supervisor",
                   "sbatch_k8s.backends.local.records", "sbatch_k8s.jobdb", "translators",
                   "translators.job_description", "sqlite3"):
        importlib.import_module(module)
    from parsers.values.grammar import load_parser

    import parsers.values as values

    for info in pkgutil.iter_modules(values.__path__):
        try:
            load_parser(info.name)
        except (OSError, ValueError):
            continue


def loaded_sources() -> Dict[str, float]:
    """Our modules' files and their modification times."""
    roots = ("parsers", "translators", "sbatch_k8s")
    sources = {}
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if path and name.split(".")[0] in roots:
            try:
                sources[path] = os.stat(path).st_mtime
            except OSError:
                continue
    return sources


def changed(sources: Dict[str, float]) -> bool:
    """Whether any loaded source file changed since the server started."""
    for path, mtime in sources.items():
        try:
            if os.stat(path).st_mtime != mtime:
                return True
        except OSError:
            return True
    return False


def decode_request(body: bytes) -> Tuple[str, str, bytes, List[bytes], Dict[bytes, bytes]]:
    """command, package root, cwd, argv, environment."""
    words = body.split(b"\0")
    if words[0] != MAGIC:
        raise ValueError("not a command request")
    command, root, cwd = words[1].decode(), words[2].decode(), words[3]
    count = int(words[4])
    argv = words[5:5 + count]
    rest = words[5 + count:]
    env_count = int(rest[0])
    env = dict(item.split(b"=", 1) for item in rest[1:1 + env_count] if b"=" in item)
    return command, root, cwd, argv, env


def _receive(conn: socket.socket) -> Tuple[bytes, List[int]]:
    """The request body and the passed descriptors."""
    fds: List[int] = []
    head = b""
    while len(head) < 4:
        data, ancillary, _, _ = conn.recvmsg(65536, socket.CMSG_SPACE(MAX_FDS * 4))
        if not data:
            raise ConnectionError("client went away")
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds += list(struct.unpack(f"{len(payload) // 4}i", payload[:len(payload) // 4 * 4]))
        head += data
    size = int.from_bytes(head[:4], "big")
    body = head[4:]
    while len(body) < size:
        data = conn.recv(min(65536, size - len(body)))
        if not data:
            raise ConnectionError("client went away")
        body += data
    return body, fds


def _child(conn: socket.socket, fds: List[int], cwd: bytes, env: Dict[bytes, bytes],
           command: str, argv: List[bytes]) -> None:
    """In the forked child: become the client's command, run it, report the exit code."""
    code = 1
    try:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD,
                       signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
            signal.signal(signum, signal.SIG_DFL)
        os.setpgid(0, 0)
        for target, fd in enumerate(fds[:3]):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        os.chdir(cwd)
        os.environ.clear()
        os.environb.update(env)
        sys.argv = [command] + [os.fsdecode(a) for a in argv]
        import importlib

        module = importlib.import_module(f"sbatch_k8s.cli.{command}")
        try:
            module.main(sys.argv[1:])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException as e:  # report, never fall back into the server loop
        try:
            os.write(2, f"{command}: error: internal error: {e}\n".encode())
        except OSError:
            pass
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        try:
            conn.sendall(b"X" + str(code).encode() + b"\n")
        except OSError:
            pass
        os._exit(code)


class Server:
    """Accepts requests, forks children, relays signals, reaps."""

    def __init__(self, listener: socket.socket, sources: Dict[str, float],
                 lock: "object") -> None:
        self.listener = listener
        self.lock = lock
        self.sources = sources
        self.selector = selectors.DefaultSelector()
        self.selector.register(listener, selectors.EVENT_READ)
        self.children: Dict[socket.socket, int] = {}
        self.last_request = time.time()
        self.stale = False

    def _serve(self, conn: socket.socket) -> None:
        uid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                  struct.calcsize("3i")))[1]
        if uid != os.getuid():
            conn.close()
            return
        try:
            body, fds = _receive(conn)
            command, root, cwd, argv, env = decode_request(body)
        except (ValueError, ConnectionError, OSError):
            conn.close()
            return
        self.last_request = time.time()
        package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        if command not in COMMANDS or root != package_root or changed(self.sources):
            self.stale = self.stale or changed(self.sources)
            conn.sendall(b"S\n")
            conn.close()
            for fd in fds:
                os.close(fd)
            return
        pid = os.fork()
        if pid == 0:
            # The child (and whatever it forks: supervisors) must hold none of the server's
            # own descriptors: not the listener, not other clients, not the server lock.
            self.listener.close()
            self.selector.close()
            self.lock.close()  # type: ignore[attr-defined]
            for other in self.children:
                other.close()
            _child(conn, fds, cwd, env, command, argv)
        for fd in fds:
            os.close(fd)
        conn.sendall(b"P" + str(pid).encode() + b"\n")
        self.children[conn] = pid
        self.selector.register(conn, selectors.EVENT_READ)

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
                _kill(pid, signal.SIGTERM)
            return
        for line in data.split(b"\n"):
            if line.startswith(b"K") and pid is not None:
                _kill(pid, int(line[1:]))

    def _reap(self) -> None:
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return

    def run(self) -> None:
        while not self.stale:
            events = self.selector.select(timeout=5.0)
            for key, _ in events:
                if key.fileobj is self.listener:
                    conn, _ = self.listener.accept()
                    self._serve(conn)
                else:
                    self._relay(key.fileobj)  # type: ignore[arg-type]
            self._reap()
            if not self.children and time.time() - self.last_request > IDLE_EXIT_S:
                return


def _alive(pid: int) -> bool:
    try:
        return os.waitpid(pid, os.WNOHANG) == (0, 0)
    except ChildProcessError:
        return False


def _kill(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def main(path: Optional[str] = None) -> None:
    """``python -c '… server main()' <socket path>``: serve until idle."""
    path = path or sys.argv[1]
    lock = open(path + ".lock", "w")
    try:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return
    preload()
    sources = loaded_sources()
    if os.path.exists(path):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o077)
    try:
        listener.bind(path)
    finally:
        os.umask(old)
    listener.listen(64)
    try:
        Server(listener, sources, lock).run()
    finally:
        listener.close()
        try:
            os.unlink(path)
        except OSError:
            pass
