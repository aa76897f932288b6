"""Container logs as a node keeps them: written by the container runtime in the CRI log format,
rotated by the kubelet, read back as the kubelet reads them.

**Writing (containerd 1.6, ``pkg/cri/io/logger.go``).** A container's stdout and stderr are two
pipes; the runtime reads each with Go's ``bufio.Reader.ReadLine`` and writes one line per
``\\n`` it finds, ``<RFC 3339 time> <stdout|stderr> <F|P> <content>\\n``: ``ReadLine`` drops the
line's ``\\n`` *and a* ``\\r`` *right before it*; content past :data:`LINE_MAX` bytes is cut into
partial (``P``) lines of exactly that size; a last line without its newline is written ``P``
when the pipe closes. A lone ``\\r``, NUL and bytes that are not UTF-8 pass unchanged.
Observed on the real nodes (containerd 1.6.20): ``crlf\\r\\n`` is stored ``F crlf``, a 20,000-byte
line as ``P`` 16,384 + ``F`` 3,616, ``nofinal`` at exit as ``P nofinal``.

**Rotation (kubelet ``pkg/kubelet/logs/container_log_manager.go``).** Every
:attr:`LogPolicy.monitor_s` (``ContainerLogMonitorInterval``, 10 s), a running container's log
larger than :attr:`LogPolicy.max_size` (``containerLogMaxSize``, 10 Mi) is rotated: rotated
files beyond ``max_files - 2`` are removed (oldest first), every rotated file left is
compressed (``.gz``, the original removed), the log is renamed ``<log>.<time>`` and the runtime
reopens a new one at the same path. Reopening closes the old file's writer, which writes the
part of a line it already had as a ``P`` line into the old file; the rest of the line goes
into the new one (seen on the real nodes: ``P ::sbatch-k8s:: data 0 13203923 dWpx…`` ending
one file, ``F nMTcw…Ao=`` beginning the next).

**Reading (kubelet ``pkg/kubelet/kuberuntime/logs/logs.go``).** :func:`decode_lines` turns CRI
lines back into what the container wrote (``F``: content and a newline, ``P``: content alone),
minus what the runtime dropped. Only the current file is ever read; the rules of a followed
read across a rotation are the log server's (:mod:`.log_server`).
"""

from __future__ import annotations

import calendar

import gzip
import os
import shutil
import threading
import time
from typing import Dict, List, NamedTuple, Optional, Tuple

#: containerd's ``max_container_log_line_size``: longer content goes out in ``P`` lines.
LINE_MAX = 16384
READ_BYTES = 65536
STREAMS = (b"stdout", b"stderr")


class LogPolicy(NamedTuple):
    """The kubelet's rotation settings (its defaults)."""

    max_size: int = 10 << 20
    max_files: int = 5
    monitor_s: float = 10.0


def timestamp(now: float) -> bytes:
    """RFC 3339 with nanoseconds, as containerd writes it."""
    whole = int(now)
    nanos = int((now - whole) * 1e9)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)).encode() + \
        b".%09dZ" % nanos


def cri_lines(pending: bytes, data: bytes, closed: bool
              ) -> Tuple[List[Tuple[bytes, bytes]], bytes]:
    """What the runtime writes for ``data`` read from one stream after ``pending`` (the
    start of a line not yet written): ``(tag, content)`` pairs, and the new pending bytes.
    ``closed``: the pipe ended (a pending line goes out as ``P``)."""
    out: List[Tuple[bytes, bytes]] = []
    buffer = pending + data
    start = 0
    while True:
        newline = buffer.find(b"\n", start)
        if newline < 0:
            break
        content = buffer[start:newline]
        if content.endswith(b"\r"):
            content = content[:-1]
        while len(content) > LINE_MAX:
            out.append((b"P", content[:LINE_MAX]))
            content = content[LINE_MAX:]
        out.append((b"F", content))
        start = newline + 1
    rest = buffer[start:]
    # a \r at the end may be the first half of \r\n: ReadLine keeps it back
    while len(rest) - rest.endswith(b"\r") > LINE_MAX:
        out.append((b"P", rest[:LINE_MAX]))
        rest = rest[LINE_MAX:]
    if closed and rest:
        out.append((b"P", rest))
        rest = b""
    return out, rest


def runtime_lines(data: bytes, stream: bytes = b"stdout", closed: bool = True) -> bytes:
    """The CRI lines the runtime writes for ``data`` written at once to ``stream`` (a fake
    container's log; ``closed``: the pipe closed after it)."""
    lines, _ = cri_lines(b"", data, closed)
    now = timestamp(time.time())
    return b"".join(b"%s %s %s %s\n" % (now, stream, tag, content) for tag, content in lines)


def line_time(stamp: bytes) -> Optional[float]:
    """Epoch seconds of a CRI line's RFC 3339 time (None when it does not parse)."""
    head, _, fraction = stamp.rstrip(b"Z").partition(b".")
    try:
        whole = calendar.timegm(time.strptime(head.decode(), "%Y-%m-%dT%H:%M:%S"))
        return whole + (float(b"0." + fraction) if fraction.isdigit() else 0.0)
    except ValueError:
        return None


def decode_lines(raw: bytes, since: Optional[float] = None) -> bytes:
    """The container output in complete CRI lines ``raw``, as the kubelet serves it (a line
    that does not parse is skipped, as the kubelet logs and skips it); ``since`` (epoch
    seconds, ``sinceTime``/``sinceSeconds``): only lines written at or after it."""
    out: List[bytes] = []
    for line in raw.split(b"\n")[:-1]:
        parts = line.split(b" ", 3)
        if len(parts) < 4 or parts[1] not in STREAMS:
            continue
        if since is not None:
            written = line_time(parts[0])
            if written is None or written < since:
                continue
        out.append(parts[3] if parts[2].split(b":")[0] == b"P" else parts[3] + b"\n")
    return b"".join(out)


def read_log(path: str) -> bytes:
    """What ``kubectl logs`` shows of the current file at ``path`` (empty when missing)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError:
        return b""
    return decode_lines(raw[:raw.rfind(b"\n") + 1])


class CriLog:
    """One container's log file at ``path``, written as the runtime writes it and rotated as
    the kubelet rotates it (see the module docstring)."""

    def __init__(self, path: str, policy: LogPolicy = LogPolicy()) -> None:
        self.path = path
        self.policy = policy
        #: When the log was last rotated (monotonic clock; 0: never).
        self.rotated_at = 0.0
        self.rotations = 0
        self._lock = threading.Lock()
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o640)
        self._pumps: List[threading.Thread] = []
        #: Each stream's line begun and not yet written (what a rotation cuts).
        self._pending: Dict[bytes, bytes] = {}
        self._stop = threading.Event()
        self._monitor = threading.Thread(target=self._watch_size, name="log-rotation",
                                         daemon=True)
        self._monitor.start()

    def attach(self, uid: Optional[int] = None, gid: Optional[int] = None
               ) -> Tuple[int, int]:
        """New stdout and stderr pipes for a container process (given to its user, as runc
        does, so it can open ``/dev/stdout`` again); the caller closes them once the process
        has them."""
        ends = []
        for stream in STREAMS:
            read_end, write_end = os.pipe()
            if uid is not None or gid is not None:
                os.fchown(write_end, -1 if uid is None else uid, -1 if gid is None else gid)
            pump = threading.Thread(target=self._pump, args=(read_end, stream),
                                    name=f"log-{stream.decode()}", daemon=True)
            pump.start()
            self._pumps.append(pump)
            ends.append(write_end)
        return ends[0], ends[1]

    def drained(self) -> bool:
        """Whether everything the container's processes wrote is in the file (their pipes
        have closed)."""
        return not any(pump.is_alive() for pump in self._pumps)

    def wait_drained(self, timeout_s: float) -> bool:
        """Wait for :meth:`drained` (at most ``timeout_s``)."""
        deadline = time.monotonic() + timeout_s
        for pump in list(self._pumps):
            pump.join(max(0.0, deadline - time.monotonic()))
        return self.drained()

    def close(self) -> None:
        """Stop rotating; the file stays (a node keeps a container's log until its pod goes)."""
        self._stop.set()
        self.wait_drained(5.0)
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def _pump(self, read_end: int, stream: bytes) -> None:
        try:
            while True:
                data = os.read(read_end, READ_BYTES)
                with self._lock:
                    lines, self._pending[stream] = cri_lines(
                        self._pending.get(stream, b""), data, closed=not data)
                    self._write(stream, lines)
                if not data:
                    return
        finally:
            os.close(read_end)

    def _write(self, stream: bytes, lines: List[Tuple[bytes, bytes]]) -> None:
        """CRI lines of ``stream`` into the current file (the lock held)."""
        if self._fd < 0 or not lines:
            return
        now = timestamp(time.time())
        records = b"".join(b"%s %s %s %s\n" % (now, stream, tag, content)
                           for tag, content in lines)
        view = memoryview(records)
        while view:
            view = view[os.write(self._fd, view):]

    def _watch_size(self) -> None:
        while not self._stop.wait(self.policy.monitor_s):
            if self._pumps and not self.drained():       # running containers only
                self.rotate_if_needed()

    def rotate_if_needed(self) -> bool:
        """Rotate when the file has reached the policy's size; True when it did."""
        with self._lock:
            if self._fd < 0 or os.fstat(self._fd).st_size < self.policy.max_size:
                return False
            rotated = self._rotated_files()
            keep = max(self.policy.max_files - 2, 0)      # one more is about to be made
            for old in rotated[:len(rotated) - keep]:
                os.remove(old)
            for old in rotated[len(rotated) - keep:]:
                if not old.endswith(".gz"):
                    _compress(old)
            for stream, begun in self._pending.items():    # the old writer closes
                self._write(stream, [(b"P", begun)] if begun else [])
            self._pending = {}
            self.rotations += 1
            # the kubelet's name has whole seconds; a counter keeps fast test rotations apart
            name = time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + f".{self.rotations:06d}"
            os.rename(self.path, f"{self.path}.{name}")
            os.close(self._fd)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o640)
            self.rotated_at = time.monotonic()
            return True

    def _rotated_files(self) -> List[str]:
        directory, base = os.path.split(self.path)
        return sorted(os.path.join(directory, name) for name in os.listdir(directory)
                      if name.startswith(base + ".") and not name.endswith(".tmp"))


def _compress(path: str) -> None:
    """``path`` gzipped beside it, the original removed (the kubelet's compressLog)."""
    with open(path, "rb") as source, gzip.open(path + ".gz.tmp", "wb") as target:
        shutil.copyfileobj(source, target)
    os.rename(path + ".gz.tmp", path + ".gz")
    os.remove(path)
