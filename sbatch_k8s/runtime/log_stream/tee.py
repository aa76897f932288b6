"""Node 0 copies the batch output files into its pod log (format: :mod:`.frames`).

Used when the job description says ``stream_output`` (the partition's volumes do not hold the
working directory, so the files the job writes stay in the pod). The files are written in the
pod exactly as without streaming; a thread reads what each one gained (as ``tail -f`` does,
every :data:`POLL_S`) and writes it to the container's stdout. The runtime's own stdout and
stderr — and those of every process it starts — go to a spool file for the duration
(:meth:`OutputTee.begin`), whose lines enter the stream as ``note`` records: the container's
stdout then has one writer, and no diagnostic line can fall inside a user's file. At the end
(:meth:`OutputTee.finish`) the files are read to their end, the ``end`` record is written and
the runtime's stdout and stderr are the container's again.

Streamed: the batch script's ``--output`` file and its ``--error`` file when that is another
file (the steps' output goes there by default). Not streamed: step files named by
``srun -o``/``-e`` and anything else the job writes (they stay in the pods), and
``/dev/…`` paths (already the container's own output).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Dict, List, Optional, Tuple

from sbatch_k8s.runtime.log_stream.frames import KEEPALIVE_S, REDECLARE_S, STDOUT_KEY, StreamEncoder

POLL_S = 0.1
READ_BYTES = 1 << 16
#: The most of one file one round reads and sends (:meth:`OutputTee._copy`).
CHUNK_BYTES = 1 << 20
#: The stream's first STARTUP_S carry at most STARTUP_BYTES of the files (the rest waits in
#: them): a job writing fast from its first second filled its log past the kubelet's rotation
#: size (10 MiB) before ``sbatch --wait`` had connected, and the kubelet serves only the
#: newest file (on real nodes: 12 MB written in 1.5 s, all but 32 bytes rotated away unread).
STARTUP_S = 10.0
STARTUP_BYTES = 6 << 20
#: A last line without its newline is sent (as data) once file 0 is quiet this long.
PARTIAL_AFTER_S = 1.0
#: ``at`` records: after a pause of plain output, and at most this far apart in time while
#: it flows (a reader shows plain lines once an ``at`` confirms them; the encoder also
#: bounds the bytes between two); one every ``KEEPALIVE_S`` when nothing is written at all.
MARK_IDLE_S = 1.0
MARK_EVERY_S = 2.0
MESSAGES_FILE = "runtime-messages.log"


def streamable(path: str) -> bool:
    """Whether ``path`` is a file worth streaming (not a device such as ``/dev/stdout``)."""
    normal = os.path.normpath(path)
    return not (normal.startswith("/dev/") or normal.startswith("/proc/"))


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class OutputTee:
    """The copying of node 0's output files into its container's stdout."""

    def __init__(self, spool: str) -> None:
        self.messages_path = os.path.join(spool, MESSAGES_FILE)
        self.encoder = StreamEncoder()
        self._out = -1
        self._saved: Tuple[int, int] = (-1, -1)
        self._files: List[Tuple[int, int]] = []       # (key, descriptor)
        self._messages_fd = -1
        self._message_tail = b""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="log-tee", daemon=True)
        self._last_data = time.monotonic()
        self._last_mark = time.monotonic()
        self._last_write = time.monotonic()
        self._last_declared = time.monotonic()
        self._began = time.monotonic()
        self._sent = 0          # bytes of the files read so far

    def begin(self) -> None:
        """Take over the container's stdout; send the runtime's own output to the spool."""
        sys.stdout.flush()
        sys.stderr.flush()
        self._out = os.dup(1)
        os.set_inheritable(self._out, False)
        self._saved = (os.dup(1), os.dup(2))
        for fd in self._saved:
            os.set_inheritable(fd, False)
        messages = os.open(self.messages_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(messages, 1)
        os.dup2(messages, 2)
        os.close(messages)
        self._messages_fd = os.open(self.messages_path, os.O_RDONLY)
        self._began = time.monotonic()
        _write_all(self._out, self.encoder.start())
        self._thread.start()

    def add_file(self, key: int, path: str, append: bool, shown_as: str) -> None:
        """Stream ``path`` (just opened by the batch host) from its current end, declared to
        clients as ``shown_as`` (its path in the job's working directory)."""
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            return
        os.lseek(fd, 0, os.SEEK_END)
        with self._lock:
            _write_all(self._out, self.encoder.declare(key, append, shown_as))
            self._files.append((key, fd))

    def _run(self) -> None:
        while not self._stop.wait(POLL_S):
            try:
                self._copy(final=False)
            except OSError:
                pass  # a read or write that failed now may succeed at the next look

    def _copy(self, final: bool) -> None:
        """Send what every file gained since the last look, :data:`CHUNK_BYTES` of each file
        at a time: when the job writes faster than the container's log takes it, the rest
        waits in the file, not in this process (whose memory counts against the pod's
        limit: a 50 MB backlog read at once got the runtime OOM-killed on real nodes)."""
        while self._copy_round(final) and (final or not self._stop.is_set()):
            pass            # (the thread's copy stops between rounds once finish began)

    def _copy_round(self, final: bool) -> bool:
        """One round of :meth:`_copy`; whether a file has more to send at once."""
        with self._lock:
            out: List[bytes] = []
            grew: Dict[int, bool] = {}
            more = False
            allowance = self._allowance()
            for key, fd in self._files:
                limit = CHUNK_BYTES if allowance is None else min(CHUNK_BYTES, allowance)
                data = _read_new(fd, limit) if limit > 0 else b""
                self._sent += len(data)
                if allowance is not None:
                    allowance -= len(data)
                grew[key] = bool(data)
                more = more or (limit > 0 and len(data) >= limit)
                if data:
                    out.append(self.encoder.feed(key, data))
            self._copy_messages(out, final and not more)
            now = time.monotonic()
            if grew.get(STDOUT_KEY):
                self._last_data = now
            if more:
                pass            # the next round goes on at once; no marks in between
            elif final:
                out.append(self.encoder.end())
            else:
                out.append(self._marks(now, bool(grew.get(STDOUT_KEY))))
                if now - self._last_declared >= REDECLARE_S:
                    out.append(self.encoder.redeclare())
                    self._last_declared = now
            data = b"".join(out)
            if data:
                _write_all(self._out, data)
                self._last_write = now
            return more

    def _allowance(self) -> Optional[int]:
        """How much more of the files the stream may carry now (None: any amount)."""
        if time.monotonic() - self._began >= STARTUP_S:
            return None
        return max(0, STARTUP_BYTES - self._sent)

    def _unread(self) -> int:
        """Bytes the files hold that the stream has not carried yet."""
        with self._lock:
            return sum(max(0, os.fstat(fd).st_size - os.lseek(fd, 0, os.SEEK_CUR))
                       for _, fd in self._files)

    def _wait_for_allowance(self) -> None:
        """Before the last copy: while the start-up allowance holds back what is left, wait
        (the copying thread goes on, within it)."""
        while True:
            allowance = self._allowance()
            if allowance is None or self._unread() <= allowance:
                return
            time.sleep(POLL_S)

    def _marks(self, now: float, grew: bool) -> bytes:
        """A last line without its newline after a quiet moment; an ``at`` when due, or as
        the stream's heartbeat."""
        out = b""
        quiet = now - self._last_data
        if not grew and quiet >= PARTIAL_AFTER_S:
            out += self.encoder.flush()
        unmarked = self.encoder.unmarked()
        due = unmarked and (quiet >= MARK_IDLE_S or now - self._last_mark >= MARK_EVERY_S)
        if due or (not out and now - self._last_write >= KEEPALIVE_S):
            out += self.encoder.mark()
            self._last_mark = now
        return out

    def _copy_messages(self, out: List[bytes], final: bool) -> None:
        data = self._message_tail + _read_new(self._messages_fd)
        lines = data.split(b"\n")
        self._message_tail = lines.pop()
        if final and self._message_tail:
            lines.append(self._message_tail)
            self._message_tail = b""
        out.extend(self.encoder.note(line) for line in lines)

    def finish(self) -> None:
        """Copy everything left, write the ``end`` record, give back stdout and stderr."""
        try:
            self._wait_for_allowance()
        except OSError:
            pass
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(30)
        sys.stdout.flush()
        sys.stderr.flush()
        self._copy(final=True)
        os.dup2(self._saved[0], 1)
        os.dup2(self._saved[1], 2)
        for fd in [self._out, self._messages_fd, *self._saved] + [f for _, f in self._files]:
            os.close(fd)
        self._files = []


def _read_new(fd: int, limit: Optional[int] = None) -> bytes:
    """What ``fd`` has past its position: everything, or at most ``limit`` bytes."""
    chunks: List[bytes] = []
    taken = 0
    while limit is None or taken < limit:
        chunk = os.read(fd, READ_BYTES if limit is None else min(READ_BYTES, limit - taken))
        if not chunk:
            break
        chunks.append(chunk)
        taken += len(chunk)
    return b"".join(chunks)


def start_tee(spool: str) -> Optional[OutputTee]:
    """An :class:`OutputTee` that has begun (None when the spool cannot hold its file)."""
    tee = OutputTee(spool)
    try:
        tee.begin()
    except OSError:
        return None
    return tee
