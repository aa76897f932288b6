"""What forked commands tell the warm command server about the cluster: a pipe of JSON lines.

The server creates the pipe before it serves (:func:`open_journal`); every command it forks
inherits the write end. A command sends

- ``want``: a watch cache for its cluster (how to connect: the kubeconfig variables and
  context), namespace and workload kinds — the first Kubernetes command starts the cache;
- ``wrote``: the resourceVersion a successful write of it got back (with the labels the
  cache's selectors look at), from
  :data:`sbatch_k8s.backends.kubernetes.api.client.WRITE_OBSERVERS`. A command that ends has put all
  its lines in the pipe before its exit code reached its client, so the server, which drains the
  pipe before forking the next command, knows every write that command can depend on: that is how an
  ``squeue`` right after ``sbatch`` or ``scancel`` sees the change.

Lines are shorter than ``PIPE_BUF``, so concurrent writers never interleave. A server that
went away makes writes fail (EPIPE), which commands ignore: without a server there is no
cache to keep fresh.
"""

from __future__ import annotations

from parsers.vocabulary import KIND, MANAGED_BY
import errno
import json
import os
import threading
import time
from typing import Any, Callable, Dict, List, Mapping, Optional

#: Labels the cache's selectors use; a ``wrote`` line carries these only.
TRACKED_LABELS = (KIND, MANAGED_BY)
#: What the server uses to connect as the command did.
CONNECT_VARIABLES = ("KUBECONFIG", "HOME", "SBATCHK8S_CONTEXT", "KUBERNETES_SERVICE_HOST",
                     "KUBERNETES_SERVICE_PORT", "SBATCHK8S_API_RETRY_S")
#: How long a command keeps trying when the pipe is full (the server drains it continuously).
FULL_PIPE_WAIT_S = 10.0
MAX_LINE = 4000

#: The write end in the server's children (None: not under a command server).
_write_fd: Optional[int] = None
_server_pid = 0


def open_journal() -> int:
    """In the server, before it forks: the pipe; returns the (non-blocking) read end."""
    global _write_fd, _server_pid
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    os.set_blocking(write_fd, False)
    _write_fd, _server_pid = write_fd, os.getpid()
    return read_fd


def in_served_command() -> bool:
    """True in a command forked by a server that keeps a journal."""
    return _write_fd is not None and os.getpid() != _server_pid


def send(message: Mapping[str, Any]) -> None:
    """Put one line in the pipe (commands only); a lost server is ignored."""
    if not in_served_command():
        return
    line = json.dumps(message, separators=(",", ":")).encode() + b"\n"
    if len(line) > MAX_LINE:
        return
    deadline = time.monotonic() + FULL_PIPE_WAIT_S
    while True:
        try:
            os.write(_write_fd, line)  # type: ignore[arg-type]
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.005)
        except OSError as e:
            if e.errno != errno.EINTR:
                return


def collection_of(path: str) -> Optional[str]:
    """``/api/v1/namespaces/ns/pods`` from an object's (or subresource's) URL path."""
    parts = path.split("/")
    try:
        at = parts.index("namespaces")
    except ValueError:
        return None
    if len(parts) < at + 3:
        return None
    return "/".join(parts[:at + 3])


def note_write(client: Any, method: str, path: str, query: Mapping[str, str],
               answer: Any) -> None:
    """A :data:`sbatch_k8s.backends.kubernetes.api.client.WRITE_OBSERVERS` entry: tell the server
    what a write produced. Answers without an object (a DELETE's Status) and dry runs carry nothing
    to wait for."""
    if not in_served_command() or query.get("dryRun") or not isinstance(answer, dict):
        return
    metadata = answer.get("metadata") or {}
    collection = collection_of(path)
    rv = str(metadata.get("resourceVersion") or "")
    if collection is None or not rv.isdigit() or answer.get("kind") == "Status":
        return
    labels = metadata.get("labels") or {}
    send({"t": "wrote", "server": client.target.server, "collection": collection, "rv": rv,
          "labels": {k: labels[k] for k in TRACKED_LABELS if k in labels}})


def want(cluster: List[str], environ: Mapping[str, str], context: Optional[str],
         namespace: str, kinds: List[str]) -> None:
    """Ask the server for a watch cache of ``namespace`` (records, pods, and ``kinds``)."""
    send({"t": "want", "cluster": cluster, "context": context, "namespace": namespace,
          "kinds": kinds, "env": {k: environ[k] for k in CONNECT_VARIABLES if k in environ}})


class JournalReader:
    """The server's end: :meth:`drain` reads what is there and hands each message on; safe
    to call from the accept loop and from the background thread at once."""

    def __init__(self, read_fd: int, handle: Callable[[Dict[str, Any]], None]) -> None:
        self.read_fd = read_fd
        self.handle = handle
        self._lock = threading.Lock()
        self._pending = b""
        self._thread: Optional[threading.Thread] = None
        self._stop = threading.Event()

    def drain(self) -> None:
        with self._lock:
            while True:
                try:
                    data = os.read(self.read_fd, 65536)
                except BlockingIOError:
                    break
                except OSError:
                    return
                if not data:
                    break
                self._pending += data
            *lines, self._pending = self._pending.split(b"\n")
            for line in lines:
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if isinstance(message, dict):
                    self.handle(message)

    def start_thread(self) -> None:
        """Drain continuously (commands never wait on a full pipe)."""
        if self._thread is not None:
            return
        import select

        def loop() -> None:
            while not self._stop.is_set():
                ready, _, _ = select.select([self.read_fd], [], [], 1.0)
                if ready:
                    self.drain()

        self._thread = threading.Thread(target=loop, daemon=True, name="journal")
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
