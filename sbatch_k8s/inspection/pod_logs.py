"""A pod's log: read once, or followed with the backend's follower.

:class:`PodLog` gives the container's log as the kubelet serves it. :class:`DecodedOutput`
gives one of the batch step's files that node 0 carries in its log (the format of
:mod:`sbatch_k8s.runtime.log_stream.frames`), rebuilt by the same decoder ``sattach`` uses;
:class:`DecodedNodeLog` gives node 0's log itself through that decoder: the files' bytes and
the runtime's messages in the order they came, without the stream's records. Following runs
the backend's :class:`~sbatch_k8s.backends.kubernetes.output.pod_log.LogFollower` thread, which
hands chunks to the reader's thread through a queue. ``since_time`` (RFC 3339) asks the API
server for what was written from then on only.
"""

from __future__ import annotations

import queue
import threading
from typing import Any, Dict, Iterator, Optional

from sbatch_k8s.backends.kubernetes.api.client import KubeClient, KubeError
from sbatch_k8s.backends.kubernetes.api.kinds import POD
from sbatch_k8s.backends.kubernetes.output.pod_log import NewBytes
from sbatch_k8s.runtime.log_stream.decoder import StreamDecoder, StreamSink

#: How long the reader waits on the queue before it looks at ``stop`` again.
WAKE_S = 0.5
_DONE = object()


class _Queued(NewBytes):
    """A LogReader putting the bytes it gets on a queue, each once (:class:`~sbatch_k8s.
    backends.kubernetes.output.pod_log.NewBytes`)."""

    def __init__(self, out: "queue.Queue[Any]") -> None:
        super().__init__()
        self.out = out

    def deliver(self, chunk: bytes) -> None:
        self.out.put(chunk)


class _FileSink(StreamSink):
    """The decoded bytes of one file, each byte once, in order, on a queue."""

    def __init__(self, key: int, out: "queue.Queue[Any]") -> None:
        self.key = key
        self.out = out
        self.written = 0

    def write(self, key: int, offset: int, data: bytes) -> None:
        if key != self.key or offset + len(data) <= self.written:
            return
        if offset < self.written:
            data = data[self.written - offset:]
        self.written = max(self.written, offset) + len(data)
        self.out.put(data)


class _LogSink(StreamSink):
    """Node 0's log decoded: every file's new bytes and every message, as they come;
    :attr:`lost` counts the bytes of a file that never came (rotated away before any read:
    a gap), but before its first bytes when the log is read from a time on (``partial``)."""

    def __init__(self, out: "queue.Queue[Any]", partial: bool) -> None:
        self.out = out
        self.partial = partial
        self.written: Dict[int, int] = {}
        self.lost = 0

    def write(self, key: int, offset: int, data: bytes) -> None:
        done = self.written.get(key)
        if done is None:
            done = offset if self.partial else 0
        if offset + len(data) <= done:
            return
        if offset < done:
            data = data[done - offset:]
        self.lost += max(0, offset - done)
        self.written[key] = max(done, offset) + len(data)
        self.out.put(data)

    def message(self, line: bytes) -> None:
        self.out.put(line)


class _Following:
    """One pod's log followed into a queue by the backend's follower thread."""

    def __init__(self, client: KubeClient, namespace: str, pod: str, reader: Any,
                 out: "queue.Queue[Any]", since_time: Optional[str] = None) -> None:
        from sbatch_k8s.backends.kubernetes.output.pod_log import LogFollower
        from sbatch_k8s.backends.kubernetes.output.srun_outside import container_of

        found = client.get(POD, pod, namespace) or {"spec": {}}
        self.client, self.namespace, self.pod = client, namespace, pod
        self.follower = LogFollower(client, namespace, pod, container_of(found), self._ended,
                                    lambda: out.put(_DONE), reader, since_time)

    def _ended(self) -> bool:
        from sbatch_k8s.backends.kubernetes.read.pod_view import main_container, terminated

        try:
            found = self.client.get(POD, self.pod, self.namespace)
        except KubeError:
            return False
        return found is None or terminated(main_container(found)) is not None


def _drain(out: "queue.Queue[Any]", following: _Following, stop: threading.Event
           ) -> Iterator[bytes]:
    following.follower.start()
    try:
        while not stop.is_set():
            try:
                item = out.get(timeout=WAKE_S)
            except queue.Empty:
                continue
            if item is _DONE:
                return
            yield item
    finally:
        following.follower.stop()


class PodLog:
    """The container log of one pod (what the kubelet rotated away cannot be told: the log
    carries no offsets)."""

    lost = 0

    def __init__(self, client: KubeClient, namespace: str, pod: str,
                 since_time: Optional[str] = None) -> None:
        self.client, self.namespace, self.pod = client, namespace, pod
        self.since_time = since_time

    def chunks(self) -> Iterator[bytes]:
        from sbatch_k8s.backends.kubernetes.output.srun_outside import container_of

        found = self.client.get(POD, self.pod, self.namespace) or {"spec": {}}
        query = {"container": container_of(found)}
        if self.since_time:
            query["sinceTime"] = self.since_time
        stream = self.client.stream(POD.object_path(self.namespace, self.pod) + "/log", query)
        try:
            yield from stream.chunks()
        finally:
            stream.abort()

    def follow(self, stop: threading.Event) -> Iterator[bytes]:
        out: "queue.Queue[Any]" = queue.Queue()
        yield from _drain(out, _Following(self.client, self.namespace, self.pod,
                                          _Queued(out), out, self.since_time), stop)


class DecodedNodeLog:
    """Node 0's log when it carries the job's output files: decoded, readable. After a read,
    :attr:`lost` says how many bytes of the files never came back (the kubelet rotated them
    away before they were read)."""

    def __init__(self, client: KubeClient, namespace: str, pod: str,
                 since_time: Optional[str] = None) -> None:
        self.client, self.namespace, self.pod = client, namespace, pod
        self.since_time = since_time
        self.lost = 0

    def _decoder(self, out: "queue.Queue[Any]") -> StreamDecoder:
        self._sink = _LogSink(out, partial=self.since_time is not None)
        self._stream = StreamDecoder(self._sink)
        return self._stream

    def _count_lost(self) -> None:
        self.lost = self._sink.lost + self._stream.lost + self._stream.unverified

    def chunks(self) -> Iterator[bytes]:
        """What node 0's log holds now (one read of the log, decoded)."""
        out: "queue.Queue[Any]" = queue.Queue()
        decoder = self._decoder(out)
        decoder.connect()
        for chunk in PodLog(self.client, self.namespace, self.pod, self.since_time).chunks():
            decoder.feed(chunk)
            while not out.empty():
                yield out.get()
        decoder.disconnected()
        while not out.empty():
            yield out.get()
        self._count_lost()

    def follow(self, stop: threading.Event) -> Iterator[bytes]:
        from sbatch_k8s.backends.kubernetes.output.rebuilt_files import DecodingReader

        out: "queue.Queue[Any]" = queue.Queue()
        decoder = self._decoder(out)
        yield from _drain(out, _Following(self.client, self.namespace, self.pod,
                                          DecodingReader(decoder), out, self.since_time),
                          stop)
        self._count_lost()


class DecodedOutput:
    """File ``key`` (0: the batch output, 1: a separate error file) out of node 0's log."""

    lost = 0

    def __init__(self, client: KubeClient, namespace: str, pod: str, key: int) -> None:
        self.client, self.namespace, self.pod, self.key = client, namespace, pod, key

    def _decoded(self, stop: threading.Event) -> Iterator[bytes]:
        from sbatch_k8s.backends.kubernetes.output.rebuilt_files import DecodingReader

        out: "queue.Queue[Any]" = queue.Queue()
        decoder = StreamDecoder(_FileSink(self.key, out))
        yield from _drain(out, _Following(self.client, self.namespace, self.pod,
                                          DecodingReader(decoder), out), stop)

    def chunks(self) -> Iterator[bytes]:
        """What node 0's log holds of the file now (one read of the log, decoded)."""
        out: "queue.Queue[Any]" = queue.Queue()
        decoder = StreamDecoder(_FileSink(self.key, out))
        decoder.connect()
        for chunk in PodLog(self.client, self.namespace, self.pod).chunks():
            decoder.feed(chunk)
        decoder.disconnected()
        while not out.empty():
            yield out.get()

    def follow(self, stop: threading.Event) -> Iterator[bytes]:
        yield from self._decoded(stop)

