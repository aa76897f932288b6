"""Following one container's log (``pods/{name}/log?follow=true``) to our stdout.

The API server proxies the request to the kubelet of the pod's node, which streams what the
container writes until it exits. The log is one stream: the container's stdout and stderr
interleaved as written, so everything goes to our stdout. A stream that breaks while the
container still runs is opened again; the log is then served from its start, and the bytes
already written are skipped (right for our pods, which never restart and whose log is short
of the kubelet's rotation size, 10 MiB by default: past a rotation the kubelet serves only
the newest file, and output may repeat or go missing).
"""

from __future__ import annotations

import errno
import os
import threading
from typing import Callable, Optional

from sbatch_k8s.backends.kubernetes.client import BodyStream, KubeClient, KubeError
from sbatch_k8s.backends.kubernetes.kinds import POD

RETRY_S = 0.5
#: Answers that another try cannot change (no permission); 404: the pod is gone.
FINAL_STATUSES = (401, 403)


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd`` (no Python buffer: safe at interpreter exit)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class LogFollower:
    """A thread copying a container's log to ``fd`` until the container ends.

    ``ended()`` tells whether the container has ended (or its pod is gone): asked when a
    stream ends, to tell the end of the log from a broken connection. :meth:`stop` ends the
    following from another thread; :attr:`received` counts the bytes written; :attr:`error`
    says why the log could not be read when no other try can help (a missing permission).
    """

    def __init__(self, client: KubeClient, namespace: str, pod: str, container: str,
                 ended: Callable[[], bool], on_done: Callable[[], None], fd: int = 1) -> None:
        self.client = client
        self.namespace = namespace
        self.pod = pod
        self.path = POD.object_path(namespace, pod) + "/log"
        self.container = container
        self.ended = ended
        self.on_done = on_done
        self.fd = fd
        self.received = 0
        self.error: Optional[str] = None
        self._broken_pipe = False
        self._stopping = threading.Event()
        self._stream: Optional[BodyStream] = None
        self._thread = threading.Thread(target=self._run, name="pod-log", daemon=True)

    def start(self) -> "LogFollower":
        """Begin following."""
        self._thread.start()
        return self

    def join(self, timeout_s: float) -> bool:
        """Wait for the log's end; True when it came."""
        self._thread.join(timeout_s)
        return not self._thread.is_alive()

    def stop(self) -> None:
        """Stop following (whatever is still in transit is dropped)."""
        self._stopping.set()
        stream = self._stream
        if stream is not None:
            stream.abort()

    def _run(self) -> None:
        try:
            while not self._stopping.is_set():
                if self._follow_once() and self.ended():
                    return
                if self.error is not None:
                    return
                if self._stopping.wait(RETRY_S):
                    return
                if self._gone():
                    return
        finally:
            self.on_done()

    def _follow_once(self) -> bool:
        """One request: True when the stream came to its end, False when it broke."""
        skip = self.received
        try:
            self._stream = self.client.stream(self.path, {"container": self.container,
                                                          "follow": "true"})
            if self._stopping.is_set():
                self._stream.abort()
            for chunk in self._stream.chunks():
                if skip:
                    if len(chunk) <= skip:
                        skip -= len(chunk)
                        continue
                    chunk, skip = chunk[skip:], 0
                self._write(chunk)
        except KubeError as e:
            if e.status in FINAL_STATUSES:
                self.error = str(e)
            elif e.status == 404:
                return True      # the pod is gone: its log with it
            return False
        finally:
            self._stream = None
        return True

    def _gone(self) -> bool:
        """After a broken stream: True when the pod is gone (nothing more to follow)."""
        try:
            return self.client.get(POD, self.pod, self.namespace) is None
        except KubeError:
            return False

    def _write(self, data: bytes) -> None:
        self.received += len(data)
        if self._broken_pipe:
            return
        try:
            write_all(self.fd, data)
        except OSError as e:
            if e.errno != errno.EPIPE:
                raise
            self._broken_pipe = True   # our reader went away; keep following for the end
