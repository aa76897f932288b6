"""A job's output files rebuilt from node 0's pod log (``sbatch --wait``, ``sattach``).

When a job's working directory is not on a shared volume, node 0 copies the batch output
files into its pod log (format: :mod:`sbatch_k8s.runtime.log_stream.frames`). :class:`JobOutput`
follows that log and hands the decoded files to a sink: :class:`FileSink` writes them at
their paths on this machine (the job's working directory), :class:`StdioSink` copies them to
the command's :class:`~sbatch_k8s.backends.base.OutputSink` (file 0 to stdout, the
``--error`` file to stderr).

:class:`FileSink` writes each byte at its offset (``pwrite``), never twice, and truncates a
file only when the stream says it is complete (to its final size) or when the file predates
the job (a stale file of an earlier job): a file the pods also write where this machine sees
it (a volume the partition does not declare) then ends up the same. Files outside the job's
working directory (and the directories of its ``--output``/``--error`` names) are refused.
"""

from __future__ import annotations

import errno
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from parsers.job_records import JobRecord
from sbatch_k8s.backends.kubernetes.api.client import KubeClient, KubeError
from sbatch_k8s.backends.base import OutputSink
from sbatch_k8s.backends.kubernetes.output.pod_log import STALL_S, LogFollower
from sbatch_k8s.runtime.log_stream.decoder import StreamDecoder, StreamSink
from sbatch_k8s.runtime.log_stream.frames import STDOUT_KEY
from sbatch_k8s.user_messages import print_job_warning


def _inside(path: str, root: str) -> bool:
    root = root.rstrip("/") or "/"
    return path == root or path.startswith(root.rstrip("/") + "/")


def allowed_roots(record: JobRecord) -> List[str]:
    """Where the job's output files may be written: its working directory and the
    directories its ``--output``/``--error`` names (as recorded) lie in."""
    roots = [os.path.normpath(record.work_dir)] if record.work_dir else []
    for name in (record.stdout, record.stderr):
        directory = os.path.dirname(name) if name else ""
        if directory.startswith("/") and "%" not in directory:
            roots.append(os.path.normpath(directory))
    return roots


def unwritten(written: int, offset: int, data: bytes) -> Optional[Tuple[int, bytes, int]]:
    """What of ``data`` (at ``offset``) is new past the ``written`` bytes: its offset, its
    bytes and how many bytes before it never arrived (lost to rotation); None when nothing
    is new (a replay after a reconnect)."""
    if offset + len(data) <= written:
        return None
    if offset > written:
        return offset, data, offset - written
    return written, data[written - offset:], 0


class FileSink(StreamSink):
    """Writes the decoded files on this machine."""

    def __init__(self, roots: Sequence[str], not_before: Optional[int], command: str,
                 job_id: int) -> None:
        self.roots = list(roots)
        self.not_before = not_before
        self.command = command
        self.job_id = job_id
        #: key → (descriptor, base offset, bytes written so far)
        self.files: Dict[int, List[int]] = {}
        self.paths: Dict[int, str] = {}
        self.lost = 0
        self.complete = False

    def _warn(self, message: str) -> None:
        print_job_warning(self.command, self.job_id, message)

    def declare(self, key: int, append: bool, path: str) -> None:
        normal = os.path.normpath(path)
        if not os.path.isabs(normal) or not any(_inside(normal, r) for r in self.roots):
            self._warn(f"not writing {path}: outside the job's working directory")
            return
        try:
            os.makedirs(os.path.dirname(normal), exist_ok=True)
            fd = os.open(normal, os.O_WRONLY | os.O_CREAT, 0o644)
        except OSError as e:
            self._warn(f"cannot write {path}: {os.strerror(e.errno or errno.EIO)}")
            return
        size = os.fstat(fd).st_size
        if not append and size and self.not_before is not None and \
                os.fstat(fd).st_mtime < self.not_before:
            os.ftruncate(fd, 0)     # an earlier job's file: Slurm truncates it
            size = 0
        self.files[key] = [fd, size if append else 0, 0]
        self.paths[key] = normal

    def write(self, key: int, offset: int, data: bytes) -> None:
        entry = self.files.get(key)
        if entry is None:
            return
        fd, base, written = entry
        fresh = unwritten(written, offset, data)
        if fresh is None:
            return
        offset, data, skipped = fresh
        self.lost += skipped
        end = offset + len(data)
        view = memoryview(data)
        while view:
            count = os.pwrite(fd, view, base + offset)
            view, offset = view[count:], offset + count
        entry[2] = end

    def ended(self, sizes: Dict[int, int]) -> None:
        self.complete = True
        for key, (fd, base, written) in self.files.items():
            size = sizes.get(key, written)
            if written < size:
                self.lost += size - written
            if base == 0:
                os.ftruncate(fd, size)

    def close(self) -> None:
        for fd, _, _ in self.files.values():
            os.close(fd)
        self.files.clear()


class StdioSink(StreamSink):
    """Copies file 0 to the command's stdout and the others to its stderr, each byte once."""

    def __init__(self, streams: OutputSink) -> None:
        self.streams = streams
        self.written: Dict[int, int] = {}
        self.lost = 0
        self.complete = False

    def write(self, key: int, offset: int, data: bytes) -> None:
        fresh = unwritten(self.written.get(key, 0), offset, data)
        if fresh is None:
            return
        offset, data, skipped = fresh
        self.lost += skipped
        self.written[key] = offset + len(data)
        try:
            (self.streams.write_out if key == STDOUT_KEY else self.streams.write_err)(data)
        except BrokenPipeError:
            pass

    def ended(self, sizes: Dict[int, int]) -> None:
        self.complete = True


class DecodingReader:
    """A :class:`~sbatch_k8s.backends.kubernetes.output.pod_log.LogReader` feeding a decoder (the
    stream has a heartbeat: silence past :data:`STALL_S` is a stalled follow)."""

    framed = True
    quiet_limit_s: Optional[float] = STALL_S

    def __init__(self, decoder: StreamDecoder) -> None:
        self.decoder = decoder

    @property
    def complete(self) -> bool:
        return self.decoder.complete

    def connect(self) -> None:
        self.decoder.connect()

    def feed(self, chunk: bytes) -> None:
        self.decoder.feed(chunk)

    def disconnected(self) -> None:
        self.decoder.disconnected()


def node0_pod(client: KubeClient, namespace: str, record: JobRecord
              ) -> Optional[Dict[str, Any]]:
    """The current pod of the job's node 0 (an array element of a shared Indexed Job: the
    pod of its completion index), None when there is none."""
    from sbatch_k8s.backends.kubernetes.read.cluster_jobs import COMPLETION_INDEX, JOB_ID_LABEL
    from sbatch_k8s.backends.kubernetes.api.kinds import POD
    from sbatch_k8s.backends.kubernetes.read.pod_view import nodes_by_index

    pods, _ = client.list(POD, namespace, f"{JOB_ID_LABEL}={record.job_id}")
    if not pods and record.array_job_id is not None:
        shared, _ = client.list(POD, namespace, f"{JOB_ID_LABEL}={record.array_job_id}")
        position = str(record.job_id - record.array_job_id)
        pods = [p for p in shared
                if ((p.get("metadata") or {}).get("annotations") or {}).get(COMPLETION_INDEX)
                == position]
        first = int(position)
        return nodes_by_index(pods, 1, first).get(0) if pods else None
    return nodes_by_index(pods, max(record.node_count, 1)).get(0)


def container_started(pod: Mapping[str, Any]) -> bool:
    """Whether the pod's main container has started (its log can be read)."""
    from sbatch_k8s.backends.kubernetes.read.pod_view import main_container, running_since

    return running_since(main_container(pod)) is not None


class JobOutput:
    """Following one job's node 0 log into a sink."""

    def __init__(self, client: KubeClient, namespace: str, record: JobRecord,
                 sink: StreamSink) -> None:
        self.client = client
        self.namespace = namespace
        self.record = record
        self.sink = sink
        self.decoder = StreamDecoder(sink)
        self.follower: Optional[LogFollower] = None
        self.pod_name = ""

    def start(self, pod: Mapping[str, Any], on_done: Any = lambda: None) -> None:
        """Begin following ``pod``'s log (once its container has started)."""
        from sbatch_k8s.backends.kubernetes.output.srun_outside import container_of

        self.pod_name = pod["metadata"]["name"]
        self.follower = LogFollower(self.client, self.namespace, self.pod_name,
                                    container_of(pod), self._container_ended, on_done,
                                    DecodingReader(self.decoder)).start()

    def _container_ended(self) -> bool:
        from sbatch_k8s.backends.kubernetes.api.kinds import POD
        from sbatch_k8s.backends.kubernetes.read.pod_view import main_container, terminated

        try:
            pod = self.client.get(POD, self.pod_name, self.namespace)
        except KubeError:
            return False
        return pod is None or terminated(main_container(pod)) is not None

    def streamed(self) -> bool:
        """Whether node 0's log carries the job's files (seen its ``start``)."""
        return self.decoder.started

    def lost(self) -> int:
        """Bytes of the files that never arrived: rotated away before any read, or not
        placeable (the sink counts every hole it was left with, whatever made it)."""
        return int(getattr(self.sink, "lost", 0))

    def stop(self) -> None:
        """Stop following (a later run of the job is followed instead)."""
        if self.follower is not None:
            self.follower.stop()
            self.follower.join(5.0)

    def finish(self, timeout_s: Optional[float]) -> Tuple[bool, str]:
        """Wait up to ``timeout_s`` (None: as long as it takes) for the log's end;
        (complete, why not)."""
        follower = self.follower
        if follower is None:
            return False, "node 0's pod is gone"
        if timeout_s is None:
            while not follower.join(1.0):
                pass
        elif not follower.join(timeout_s):
            follower.stop()
            follower.join(5.0)
        if follower.error:
            return False, follower.error
        return self.decoder.complete, "" if self.decoder.complete else "its log ended early"
