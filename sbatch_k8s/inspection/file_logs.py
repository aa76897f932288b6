"""Reading a log whole (a download) or following it as it grows (a live page).

A :class:`LogHandle` gives the bytes exactly as written: :meth:`~LogHandle.chunks` what
exists now, :meth:`~LogHandle.follow` everything from the start and then what comes, until
the log's writer is done (its job ended) or the reader stops. :class:`FileLog` reads a file
on this machine (a local node's log, an output file); a Kubernetes pod's log is
:mod:`.pod_logs`.
"""

from __future__ import annotations

import os
import threading
import time
from typing import BinaryIO, Callable, Iterator, Optional, Protocol

READ_BYTES = 1 << 16
#: How often a followed file is looked at for new bytes.
POLL_S = 0.2
#: How often a followed log asks whether its job has ended.
ENDED_EVERY_S = 1.0


class SinceUnavailable(Exception):
    """A log that carries no times cannot be read from a time on: why, in a few words."""


class LogHandle(Protocol):
    """One log, read or followed; :attr:`lost`, after a read: bytes known not to have come
    back (0 where the log cannot tell)."""

    lost: int

    def chunks(self) -> Iterator[bytes]:
        """The log's bytes as they are now."""

    def follow(self, stop: threading.Event) -> Iterator[bytes]:
        """The log from its start, then its new bytes as they come, until it is complete
        or ``stop`` is set."""


class FileLog:
    """A file on this machine; complete once ``ended()`` says its writer is gone."""

    lost = 0

    def __init__(self, path: str, ended: Callable[[], bool]) -> None:
        self.path = path
        self.ended = ended

    def chunks(self) -> Iterator[bytes]:
        try:
            with open(self.path, "rb") as f:
                while True:
                    data = f.read(READ_BYTES)
                    if not data:
                        return
                    yield data
        except FileNotFoundError:
            return

    def follow(self, stop: threading.Event) -> Iterator[bytes]:
        handle = self._wait_for_file(stop)
        if handle is None:
            return
        with handle:
            asked = 0.0
            finishing = False
            while not stop.is_set():
                data = handle.read(READ_BYTES)
                if data:
                    yield data
                    continue
                if finishing:
                    return
                if os.fstat(handle.fileno()).st_size < handle.tell():
                    handle.seek(0)          # truncated (a requeued run writes it anew)
                    continue
                now = time.monotonic()
                if now - asked >= ENDED_EVERY_S:
                    asked = now
                    finishing = self.ended()   # then read once more, to the very end
                    if finishing:
                        continue
                stop.wait(POLL_S)

    def _wait_for_file(self, stop: threading.Event) -> Optional[BinaryIO]:
        """The file opened once it exists; None when the job ended without it."""
        while not stop.is_set():
            try:
                return open(self.path, "rb")
            except FileNotFoundError:
                if self.ended():
                    return None
                stop.wait(ENDED_EVERY_S)
        return None

