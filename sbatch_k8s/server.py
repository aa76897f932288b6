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
import socket
import sys
import time
from typing import Dict, List, Optional

from sbatch_k8s.runtime.forkserver import ForkServer, Request, listen

IDLE_EXIT_S = 900.0
COMMANDS = ("sbatch", "srun", "squeue", "scancel", "sacct", "scontrol", "sinfo")


def preload() -> None:
    """Import the commands and build the grammars: what every child then has for free."""
    import importlib

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
    from parsers.values.grammar import build_all

    build_all()
    _preload_backend()


def _preload_backend() -> None:
    """With a cluster configured, the Kubernetes backend and its client library too (their
    import costs most of a command's time otherwise)."""
    import importlib

    from sbatch_k8s.config import KUBERNETES, choose_backend, load_config

    try:
        config, path = load_config(os.environ)
        if choose_backend(os.environ, config, path) != KUBERNETES:
            return
    except Exception:  # a broken configuration is reported by the command that reads it
        return
    for module in ("kubernetes.client", "kubernetes.config",
                   "sbatch_k8s.backends.kubernetes.backend",
                   "sbatch_k8s.backends.kubernetes.submit",
                   "sbatch_k8s.backends.kubernetes.cluster_jobs",
                   "sbatch_k8s.backends.kubernetes.records",
                   "sbatch_k8s.backends.kubernetes.state"):
        importlib.import_module(module)
    from sbatch_k8s.runtime_bundle import build_bundle

    build_bundle()


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


class CommandServer(ForkServer):
    """The user commands, served until idle or until a loaded source file changes."""

    def __init__(self, listener: socket.socket, sources: Dict[str, float],
                 lock: "object") -> None:
        super().__init__(listener)
        self.sources = sources
        self.lock = lock
        self.stale = False

    def accepts(self, request: Request) -> bool:
        self.stale = self.stale or changed(self.sources)
        return request.command in COMMANDS and super().accepts(request) and not self.stale

    def done(self) -> bool:
        idle = not self.children and time.time() - self.last_request > IDLE_EXIT_S
        return self.stale or idle

    def close_in_child(self) -> None:
        # Supervisors forked by sbatch must not keep the server lock (it would block restarts).
        self.lock.close()  # type: ignore[attr-defined]

    def run_command(self, command: str, argv: List[str]) -> int:
        import importlib

        importlib.import_module(f"sbatch_k8s.cli.{command}").main(argv)
        return 0


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
    listener = listen(path)
    try:
        CommandServer(listener, sources, lock).serve()
    finally:
        listener.close()
        try:
            os.unlink(path)
        except OSError:
            pass
