"""What the kubelet serves of a container's log: the current file, decoded from the CRI format
(:mod:`.cri_log`), and with ``follow`` what comes after, as a 1.28 kubelet follows it.

A 1.28 kubelet (``pkg/kubelet/kuberuntime/logs/logs.go``, ``ReadLogs``) serves only the
current file; rotated files are never served. Following, it waits at the end of the file for
an inotify event. At a rotation (the file renamed, a new one opened by the runtime) two things
can happen, and both happen on real nodes:

* the follow was still reading when the log rotated: by the time it reaches the end of the old
  file, the new one exists, and it goes on with that one from its start — nothing missed;
* the follow was waiting at the end when the log rotated: the rename wakes it before the
  runtime has opened the new file, so it stays on the old, renamed file, where nothing more
  comes. It serves nothing until the container ends (then the stream ends), or until a later
  rotation compresses and removes that old file (then it reopens the path: the newest file,
  from its start — everything in between is skipped).

This module reproduces both (telling them apart by the rotation's time, :attr:`CriLog.rotated_at`,
against the moment the follow began waiting), so that clients meet here what they meet on a
node. A follow ends once the container has ended and its output is all in the file — seen,
as the kubelet sees it, at its next look (every :data:`END_CHECK_S`, ``logForceCheckPeriod``),
so the container's terminated status usually reaches the API server before the stream ends.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, BinaryIO, Iterator, Optional

from tests.kubelet.cri_log import decode_lines

FOLLOW_POLL_S = 0.02
CHUNK_BYTES = 65536
#: How often a waiting follow asks whether the container still runs (the kubelet's
#: ``logForceCheckPeriod``).
END_CHECK_S = 1.0


def tail_offset(path: str, lines: int) -> int:
    """Where the last ``lines`` lines of the file begin."""
    with open(path, "rb") as f:
        data = f.read()
    if lines <= 0:
        return len(data)
    end = len(data) - 1 if data.endswith(b"\n") else len(data)
    position = end
    for _ in range(lines):
        position = data.rfind(b"\n", 0, position)
        if position < 0:
            return 0
    return position + 1


def run_ended(run: Any) -> bool:
    """Whether the container run has ended and everything it wrote is in its log."""
    if run.process is None or run.process.poll() is None:
        return False
    log = getattr(run, "log", None)
    return log is None or log.drained()


def _inode(path: str) -> Optional[int]:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


class LogReading:
    """One request's reading of a container's log; :meth:`chunks` yields what to send."""

    def __init__(self, run: Any, follow: bool, tail: Optional[int],
                 stopping: threading.Event, since: Optional[float] = None) -> None:
        self.run = run
        self.since = since
        self.path: str = run.spec.log_path
        self.follow = follow
        self.stopping = stopping
        self._file: BinaryIO = open(self.path, "rb")
        if tail is not None:
            self._file.seek(tail_offset(self.path, tail))
        self._pending = b""
        self._waiting_since: Optional[float] = None
        self._stalled = False
        self._end_checked = time.monotonic()

    def chunks(self) -> Iterator[bytes]:
        """The decoded log, chunk by chunk, until its end (see the module docstring)."""
        try:
            while True:
                data = self._file.read(CHUNK_BYTES)
                if data:
                    self._waiting_since = None
                    out = self._decode(data)
                    if out:
                        yield out
                    continue
                if not self.follow:
                    return
                if self.stopping.is_set() or self._ended():
                    yield self._decode(self._file.read())   # written just before the end
                    return
                if self._waiting_since is None:
                    self._waiting_since = time.monotonic()
                self._after_rotation()
                time.sleep(FOLLOW_POLL_S)
        finally:
            self._file.close()

    def _ended(self) -> bool:
        """Whether the container has ended, asked at the kubelet's pace."""
        now = time.monotonic()
        if now - self._end_checked < END_CHECK_S:
            return False
        self._end_checked = now
        return run_ended(self.run)

    def _decode(self, data: bytes) -> bytes:
        """The container output in the complete CRI lines read so far."""
        self._pending += data
        cut = self._pending.rfind(b"\n") + 1
        complete, self._pending = self._pending[:cut], self._pending[cut:]
        return decode_lines(complete, self.since)

    def _after_rotation(self) -> None:
        """At the end of the file, waiting: go on as the kubelet does after a rotation."""
        current = _inode(self.path)
        if current == os.fstat(self._file.fileno()).st_ino:
            return
        if self._stalled:
            if os.fstat(self._file.fileno()).st_nlink == 0:   # compressed away: reopen
                self._reopen()
            return
        log = getattr(self.run, "log", None)
        rotated_at = log.rotated_at if log is not None else time.monotonic()
        waiting_since = self._waiting_since or 0.0
        if current is not None and rotated_at < waiting_since:
            self._reopen()          # it rotated while the follow was still reading
        else:
            self._stalled = True    # it rotated under a waiting follow

    def _reopen(self) -> None:
        try:
            reopened = open(self.path, "rb")
        except OSError:
            return
        self._file.close()
        self._file = reopened
        self._pending = b""
        self._stalled = False
        self._waiting_since = None
