"""Following one container's log (``pods/{name}/log?follow=true``).

The API server proxies the request to the kubelet of the pod's node, which streams what the
container writes until it exits. The log is one stream: the container's stdout and stderr
interleaved as written. What is done with it is the reader's: :class:`RawCopy` copies it to
our stdout (``srun`` outside a job), a :class:`~sbatch_k8s.runtime.log_stream.frames.StreamDecoder`
rebuilds the output files node 0 copies into it (``sbatch --wait``, ``sattach``).

A stream that breaks while the container still runs is opened again; the log is then served
from the start of what the kubelet still has. :class:`RawCopy` skips the bytes it already
wrote: right unless the kubelet rotated the log in between (10 MiB by default; past a
rotation only the newest file is served, and output may repeat or go missing). The decoder
places every byte by the offsets in the stream instead, so a rotation loses only what was
rotated away before anyone read it, and repeats nothing (see
:mod:`~sbatch_k8s.runtime.log_stream.decoder`).

What a real kubelet (1.28) does at a rotation shapes the rest. A follow that had read
everything when the log rotated keeps waiting on the old, renamed file: it serves nothing more
until the container ends (then its stream ends) or until that file is compressed at a later
rotation (then it jumps to the newest file). So a reader that expects a heartbeat (the
stream node 0 writes has one, :data:`~sbatch_k8s.runtime.log_stream.frames.KEEPALIVE_S`) opens the
log again when nothing came for :data:`STALL_S`; and once the container has ended, a stream that
ended without everything is followed by a plain read of the log (the newest file, which holds the
end).
"""

from __future__ import annotations

import errno
import threading
from typing import Callable, Optional, Protocol

from sbatch_k8s.backends.base import OutputSink
from sbatch_k8s.backends.kubernetes.api.client import BodyStream, KubeClient, KubeError
from sbatch_k8s.backends.kubernetes.api.kinds import POD

RETRY_S = 0.5
#: Answers that another try cannot change (no permission); 404: the pod is gone.
FINAL_STATUSES = (401, 403)
#: A stream with a heartbeat that stays silent this long has stalled (at a rotation): it is
#: opened again. Over twice the heartbeat, and well below the kubelet's rotation period
#: (10 s): a follow that reached the end of a rotated file a few seconds after the rotation
#: must be left before the next one compresses that file, or the kubelet jumps it past the
#: whole file in between (9 s lost 16.7 MB of a 25 MB job on real nodes).
STALL_S = 5.0


class LogReader(Protocol):
    """What consumes a followed log."""

    #: True once everything expected has arrived (following may stop).
    complete: bool
    #: Whether the log ends with a frame of its own (a stream that ended short of it, with
    #: the container, is read once more).
    framed: bool
    #: The longest a healthy stream stays silent (None: as long as it likes).
    quiet_limit_s: Optional[float]

    def connect(self) -> None:
        """A new connection: the log is served again from its start."""

    def feed(self, chunk: bytes) -> None:
        """The next bytes of the log."""

    def disconnected(self) -> None:
        """The connection ended."""


class NewBytes:
    """A reader of the log as it is, skipping what a reconnect serves again (it is served
    from the start): each new byte goes to :meth:`deliver` once."""

    complete = False
    framed = False
    quiet_limit_s: Optional[float] = None

    def __init__(self) -> None:
        self.received = 0
        self._skip = 0

    def connect(self) -> None:
        self._skip = self.received

    def feed(self, chunk: bytes) -> None:
        if self._skip:
            if len(chunk) <= self._skip:
                self._skip -= len(chunk)
                return
            chunk, self._skip = chunk[self._skip:], 0
        self.received += len(chunk)
        self.deliver(chunk)

    def deliver(self, chunk: bytes) -> None:
        """Bytes of the log not delivered before."""

    def disconnected(self) -> None:
        pass


class RawCopy(NewBytes):
    """Copies the log as it is to the command's stdout (its
    :class:`~sbatch_k8s.backends.base.OutputSink`), skipping what a reconnect serves again."""

    def __init__(self, sink: OutputSink) -> None:
        super().__init__()
        self.sink = sink
        self._broken_pipe = False

    def deliver(self, chunk: bytes) -> None:
        if self._broken_pipe:
            return
        try:
            self.sink.write_out(chunk)
        except OSError as e:
            if e.errno != errno.EPIPE:
                raise
            self._broken_pipe = True   # our reader went away; keep following for the end


class LogFollower:
    """A thread feeding a container's log to ``reader`` until the container ends.

    ``ended()`` tells whether the container has ended (or its pod is gone): asked when a
    stream ends, to tell the end of the log from a broken connection. :meth:`stop` ends the
    following from another thread; :attr:`error` says why the log could not be read when no
    other try can help (a missing permission); :attr:`connections` counts the requests.
    ``since_time`` (RFC 3339): every request asks only for what was written from then on
    (one fixed time, so a reconnect serves what the last one did from its start).
    """

    def __init__(self, client: KubeClient, namespace: str, pod: str, container: str,
                 ended: Callable[[], bool], on_done: Callable[[], None],
                 reader: Optional[LogReader] = None,
                 since_time: Optional[str] = None) -> None:
        self.client = client
        self.namespace = namespace
        self.pod = pod
        self.path = POD.object_path(namespace, pod) + "/log"
        self.container = container
        self.ended = ended
        self.on_done = on_done
        self.reader: LogReader = reader if reader is not None else RawCopy(OutputSink())
        self.since_time = since_time
        self.error: Optional[str] = None
        self.connections = 0
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
                if self._follow_once(follow=True) and (self.reader.complete or self.ended()):
                    if self.reader.framed and not self.reader.complete and \
                            not self._stopping.is_set():
                        # a follow stalled at a rotation ends with the container, short of
                        # the end: the newest file, read once more, holds the rest
                        self._follow_once(follow=False)
                    return
                if self.error is not None:
                    return
                if self._stopping.wait(RETRY_S):
                    return
                if self._gone():
                    return
        finally:
            self.on_done()

    def _follow_once(self, follow: bool) -> bool:
        """One request (following the log, or reading what it holds now): True when the
        stream came to its end (or the reader has all it wants), False when it broke or
        stayed silent past the reader's limit."""
        self.reader.connect()
        query = {"container": self.container}
        if follow:
            query["follow"] = "true"
        if self.since_time:
            query["sinceTime"] = self.since_time
        try:
            self.connections += 1
            self._stream = self.client.stream(self.path, query,
                                              read_timeout_s=self.reader.quiet_limit_s)
            if self._stopping.is_set():
                self._stream.abort()
            for chunk in self._stream.chunks():
                self.reader.feed(chunk)
                if self.reader.complete:
                    self._stream.abort()
                    break
        except KubeError as e:
            if self.reader.complete:
                return True
            if e.status in FINAL_STATUSES:
                self.error = str(e)
            elif e.status == 404:
                return True      # the pod is gone: its log with it
            return False
        finally:
            self._stream = None
            self.reader.disconnected()
        return True

    def _gone(self) -> bool:
        """After a broken stream: True when the pod is gone (nothing more to follow)."""
        try:
            return self.client.get(POD, self.pod, self.namespace) is None
        except KubeError:
            return False
