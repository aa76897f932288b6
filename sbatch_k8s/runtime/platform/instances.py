"""One acting instance per node, where a platform starts the command several times per
container: ModelArts once per Ascend card, the task-training platform's Horovod mode once per
MPI slot (``mpirun`` runs the command on every slot of every host).

The instance whose local number is 0 (``ASCEND_DEVICE_ID``, the MPI local rank) *acts*: it
becomes the node. The others wait for it and exit with its exit code, so the platform sees
every instance end as the job did. They meet through a Unix socket in the container's own
temporary directory, named after the job: the acting instance listens there for its whole
run, each waiting instance connects (retrying within the bound) and receives one line, the
exit code, when the job ends. The code is also left in a file beside the socket, for an
instance that starts after the job ended. An acting instance that vanishes (killed) closes
the connections: the waiters end with one line saying so.
"""

from __future__ import annotations

import hashlib
import os
import socket
import tempfile
import threading
import time
from typing import List, Optional, Tuple

from sbatch_k8s.runtime.contract import ContractError

RETRY_S = 0.1
#: Exit code of a waiting instance whose acting instance vanished without a code.
LOST_CODE = 1


def meeting_paths(job_key: str, directory: Optional[str] = None) -> Tuple[str, str]:
    """The socket and exit-code file of ``job_key``'s instances in this container."""
    digest = hashlib.sha256(job_key.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    base = os.path.join(directory or tempfile.gettempdir(), f"sbatch-k8s-{digest}")
    return base + ".sock", base + ".exit"


def _read_code(path: str) -> Optional[int]:
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    return int(text) if text.lstrip("-").isdigit() else None


def wait_for_actor(job_key: str, who: str, wait_s: float,
                   directory: Optional[str] = None) -> int:
    """A waiting instance: the acting instance's exit code. ContractError when no acting
    instance appears within ``wait_s`` or it vanishes without a code (``who`` names it, e.g.
    ``ASCEND_DEVICE_ID=0``)."""
    sock_path, code_path = meeting_paths(job_key, directory)
    deadline = time.monotonic() + wait_s
    while True:
        code = _read_code(code_path)
        if code is not None:
            return code
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect(sock_path)
        except OSError:
            conn.close()
            if time.monotonic() >= deadline:
                raise ContractError(f"no instance with {who} started in this container "
                                    f"within {wait_s:g} s (it runs the job; this instance "
                                    "waits for it)") from None
            time.sleep(RETRY_S)
            continue
        with conn:
            data = b""
            while True:
                chunk = conn.recv(64)
                if not chunk:
                    break
                data += chunk
        text = data.decode(errors="replace").strip()
        if text.lstrip("-").isdigit():
            return int(text)
        code = _read_code(code_path)
        if code is not None:
            return code
        raise ContractError(f"the instance with {who} ended without an exit code")


class Actor:
    """The acting instance's side: listens from :meth:`open` until :meth:`finish`."""

    def __init__(self, job_key: str, directory: Optional[str] = None) -> None:
        self.sock_path, self.code_path = meeting_paths(job_key, directory)
        self._listener: Optional[socket.socket] = None
        self._waiters: List[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = False

    def open(self) -> None:
        """Listen for the waiting instances (a stale socket of an earlier run replaced)."""
        for path in (self.sock_path, self.code_path):
            try:
                os.unlink(path)
            except OSError:
                pass
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(self.sock_path)
            listener.listen(64)
        except OSError as e:
            listener.close()
            raise ContractError(f"cannot listen for this container's other instances on "
                                f"{self.sock_path}: {e.strerror or e}") from e
        self._listener = listener
        threading.Thread(target=self._accept, name="instances", daemon=True).start()

    def _accept(self) -> None:
        listener = self._listener
        while listener is not None:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with self._lock:
                if self._closed:
                    conn.close()
                    return
                self._waiters.append(conn)

    def finish(self, code: int) -> None:
        """Tell every waiting instance (present and later) the exit code; stop listening."""
        try:
            fd = os.open(self.code_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            with os.fdopen(fd, "w") as f:
                f.write(f"{code}\n")
        except OSError:
            pass
        with self._lock:
            self._closed = True
            waiters, self._waiters = self._waiters, []
        for conn in waiters:
            try:
                conn.sendall(f"{code}\n".encode())
            except OSError:
                pass
            conn.close()
        if self._listener is not None:
            listener, self._listener = self._listener, None
            try:
                listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            listener.close()
        try:
            os.unlink(self.sock_path)
        except OSError:
            pass
