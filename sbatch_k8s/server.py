"""The per-user command server behind :mod:`sbatch_k8s.fastpath`.

It imports every command and builds every value grammar once, then serves a Unix socket in
the state directory (mode 0700, only connections from its own uid). Each request is forked:
the child takes the client's stdin/stdout/stderr, working directory, environment and
arguments, runs the command's ``main`` and reports the exit code; the parent relays signals
the client forwards. One server per state directory (an exclusive lock); it exits when idle
for :data:`IDLE_EXIT_S`, or when a source file it loaded changes (the next command then runs
the new code and starts a fresh server).

For the Kubernetes backend it also keeps a watch cache
(:mod:`sbatch_k8s.backends.kubernetes.read.watch_cache`): the first Kubernetes command asks for
it through the journal pipe (:mod:`sbatch_k8s.backends.kubernetes.read.watch_journal`), which
also tells the server what every command wrote. Before forking a command that reads job
state, the server drains that pipe and waits (briefly, bounded) until the cache holds every
write of the commands that came before; the command then reads its forked copy of the
cache and makes no API call. The cache stops when the server exits.
"""

from __future__ import annotations

import fcntl
import os
import socket
import sys
import time
from typing import TYPE_CHECKING, Dict, List, Mapping, Optional, Tuple, Union

from sbatch_k8s.runtime.warm.fork_server import ForkServer, Request, listen

if TYPE_CHECKING:
    from sbatch_k8s.backends.kubernetes.read.watch_cache import WatchCache
    from sbatch_k8s.backends.kubernetes.read.watch_journal import JournalReader

IDLE_EXIT_S = 900.0
COMMANDS = ("sbatch", "srun", "squeue", "scancel", "sacct", "scontrol", "sinfo", "sattach",
            "sstat", "seff")


def preload() -> bool:
    """Import the commands and build the grammars: what every child then has for free.
    True when the Kubernetes backend is configured (its client is then loaded too)."""
    import importlib

    for name in COMMANDS:
        importlib.import_module(f"sbatch_k8s.cli.{name}")
    for module in ("parsers.formats.squeue_format", "parsers.formats.sacct_format",
                   "parsers.formats.scontrol_show", "parsers.formats.sinfo_format",
                   "parsers.report_options.squeue_options", "parsers.report_options.sacct_options",
                   "parsers.report_options.scancel_options",
                   "parsers.report_options.scontrol_options",
                   "parsers.report_options.sinfo_options", "sbatch_k8s.backends.local.submit",
                   "sbatch_k8s.backends.local.supervisor", "sbatch_k8s.backends.local.records",
                   "sbatch_k8s.jobdb", "translators", "parsers.job_description", "sqlite3"):
        importlib.import_module(module)
    from parsers.values.grammar import build_all

    build_all()
    return _preload_backend()


def _preload_backend() -> bool:
    """With a cluster configured, the Kubernetes backend and its client library too (their
    import costs most of a command's time otherwise)."""
    import importlib

    from sbatch_k8s.config_file import KUBERNETES, choose_backend, load_config

    try:
        config, path = load_config(os.environ)
        if choose_backend(os.environ, config, path) != KUBERNETES:
            return False
    except Exception:  # a broken configuration is reported by the command that reads it
        return False
    for module in ("kubernetes.client", "kubernetes.config",
                   "sbatch_k8s.backends.kubernetes.backend",
                   "sbatch_k8s.backends.kubernetes.submit.schedule",
                   "sbatch_k8s.backends.kubernetes.read.cluster_jobs",
                   "sbatch_k8s.backends.kubernetes.history.records",
                   "sbatch_k8s.backends.kubernetes.read.job_state",
                   "sbatch_k8s.backends.kubernetes.read.cluster_reads"):
        importlib.import_module(module)
    from sbatch_k8s.runtime_bundle import build_bundle

    build_bundle()
    return True


def start_watch_cache(kubernetes: bool) -> Tuple["WatchCache", "JournalReader"]:
    """The watch cache (idle until a command asks for it) and the journal pipe's reader;
    with the Kubernetes backend configured, the reader drains the pipe from the start."""
    from sbatch_k8s.backends.kubernetes.api import client
    from sbatch_k8s.backends.kubernetes.read import watch_cache, watch_journal

    cache = watch_cache.install()
    reader = watch_journal.JournalReader(watch_journal.open_journal(), cache.handle)
    client.WRITE_OBSERVERS.append(watch_journal.note_write)
    if kubernetes:
        reader.start_thread()
    return cache, reader


#: A loaded file's modification time, or a folder's entries.
Mark = Union[float, Tuple[str, ...]]


def loaded_sources() -> Dict[str, Mark]:
    """Our modules' files and their modification times, with every file of the runtime
    bundle the server built and the source files of the folders holding them (one added or
    removed changes the bundle): a pod must never get the bundle of sources that have
    changed."""
    roots = ("parsers", "translators", "sbatch_k8s")
    paths = [getattr(module, "__file__", None) for name, module in list(sys.modules.items())
             if name.split(".")[0] in roots]
    folders: List[str] = []
    if "sbatch_k8s.runtime_bundle" in sys.modules:
        from sbatch_k8s.runtime_bundle import bundle_files

        shipped = [path for _, path in bundle_files()]
        paths += shipped
        folders = sorted({os.path.dirname(path) for path in shipped})
    sources: Dict[str, Mark] = {}
    for path in paths:
        if path:
            try:
                sources[path] = os.stat(path).st_mtime
            except OSError:
                continue
    for folder in folders:
        sources[folder] = _source_names(folder)
    return sources


def _source_names(folder: str) -> Tuple[str, ...]:
    """The entries of ``folder`` but its ``__pycache__`` — not its modification time, which
    the ``__pycache__`` made in it by the first import from there changes too (a fresh
    checkout's commands then found their server retired and ran cold, without the watch
    cache)."""
    try:
        return tuple(sorted(name for name in os.listdir(folder) if name != "__pycache__"))
    except OSError:
        return ()


def changed(sources: Mapping[str, Mark]) -> bool:
    """Whether any loaded source file changed since the server started."""
    for path, mark in sources.items():
        try:
            now: Mark = _source_names(path) if isinstance(mark, tuple) else \
                os.stat(path).st_mtime
        except OSError:
            return True
        if now != mark:
            return True
    return False


class CommandServer(ForkServer):
    """The user commands, served until idle or until a loaded source file changes."""

    def __init__(self, listener: socket.socket, sources: Dict[str, Mark],
                 lock: "object", cache: "WatchCache", journal: "JournalReader") -> None:
        super().__init__(listener)
        self.sources = sources
        self.lock = lock
        self.stale = False
        self.cache = cache
        self.journal = journal

    def accepts(self, request: Request) -> bool:
        from sbatch_k8s.backends.kubernetes.read.watch_cache import READERS, catch_up_wait_s

        self.stale = self.stale or changed(self.sources)
        accepted = request.command in COMMANDS and super().accepts(request) and not self.stale
        self._drain_journal()
        if accepted and request.command in READERS:
            self.cache.wait_caught_up(catch_up_wait_s(os.environ))
        return accepted

    def _drain_journal(self) -> None:
        """Take in what finished commands wrote; once anything came, drain continuously."""
        self.journal.drain()
        if self.cache.mirrors:
            self.journal.start_thread()

    def done(self) -> bool:
        self._drain_journal()
        idle = not self.children and time.time() - self.last_request > IDLE_EXIT_S
        return self.stale or idle

    def close_in_child(self) -> None:
        # Supervisors forked by sbatch must not keep the server lock (it would block restarts).
        self.lock.close()  # type: ignore[attr-defined]
        os.close(self.journal.read_fd)  # only the server reads the journal

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
    kubernetes = preload()
    cache, journal = start_watch_cache(kubernetes)
    sources = loaded_sources()
    listener = listen(path)
    try:
        CommandServer(listener, sources, lock, cache, journal).serve()
    finally:
        journal.stop()
        cache.stop()
        listener.close()
        try:
            os.unlink(path)
        except OSError:
            pass
