"""The output stream node 0 writes to its pod log when the job's files stay in the pods.

On a partition whose volumes do not hold the job's working directory, node 0's runtime copies
the batch script's output files into its container's stdout (:mod:`.log_tee`), so that
``kubectl logs <node-0 pod>`` reads as the job's output and a client (``sbatch --wait``,
``sattach``) can rebuild every file byte for byte. The format:

* **Plain lines** are the bytes of the batch stdout file (file ``0``), line by line, as the job
  wrote them.
* Every other line is a **record**: it begins with :data:`MARK` (``::sbatch-k8s:: ``) and ends
  with a newline. Records carry what plain lines cannot:

  ``start 1``
      the stream begins (version 1); file 0's offset is 0 here.
  ``file <key> <w|a> <path as a JSON string>``
      file ``key`` (0: the batch stdout; 1: the batch stderr when ``-e`` names another file)
      is written at ``path`` in the job's working directory, truncated (``w``) or appended
      to (``a``, ``--open-mode=append``).
  ``data <key> <offset> <base64>``
      bytes of file ``key`` at ``offset`` (counted from the first byte this job wrote). Used
      for every file but 0, and for the bytes of file 0 that cannot be a plain line: a line
      that itself begins with the mark, a line longer than :data:`PLAIN_LINE_MAX`, and a last
      line without its newline (sent once the job has been quiet for a moment, or at the end).
  ``at <key> <offset>``
      file ``key`` has ``offset`` bytes up to here (written after bursts of plain lines).
  ``note <text>``
      a line of the runtime's own (its diagnostics): never part of a file.
  ``end <key>=<size> …``
      every file is complete at these sizes; nothing of the stream follows.

Every line stays below the container runtime's 16 KiB split (CRI "partial" log lines), so a
line of another writer can only come between whole lines. Lines before ``start`` and after
``end`` are another writer's (shown as runtime messages).

A client places every byte by its offset (:class:`StreamDecoder`): a connection that begins
with ``start`` knows every position; one that begins further on (the kubelet rotated the
log, 10 MiB by default, and serves only the newest file) holds its plain lines until the next
``at``/``data``/``end`` of file 0 places them backwards. Bytes already written are never
written again, so a reconnect (which serves the log from the start of what the kubelet still
has) duplicates nothing; bytes that were rotated away before any client read them are counted
as lost (:attr:`StreamDecoder.lost`).
"""

from __future__ import annotations

import base64
import json
from typing import Callable, Dict, List, Optional, Tuple

MARK = b"::sbatch-k8s:: "
VERSION = 1
#: Longest plain line in bytes, newline included (longer ones go as data records).
PLAIN_LINE_MAX = 8192
#: Raw bytes per data record (base64: 8 KiB of text).
DATA_CHUNK = 6144
STDOUT_KEY = 0
STDERR_KEY = 1


def split_lines(data: bytes) -> List[bytes]:
    """``data`` cut after each newline (only ``\\n``: a carriage return is a line's byte)."""
    lines = [line + b"\n" for line in data.split(b"\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def record(*words: str) -> bytes:
    """One record line."""
    return MARK + " ".join(words).encode("utf-8", "surrogateescape") + b"\n"


def data_records(key: int, offset: int, data: bytes) -> bytes:
    """``data`` of file ``key`` at ``offset``, in records of :data:`DATA_CHUNK` bytes."""
    out = []
    for start in range(0, len(data), DATA_CHUNK):
        piece = data[start:start + DATA_CHUNK]
        out.append(record("data", str(key), str(offset + start),
                          base64.b64encode(piece).decode("ascii")))
    return b"".join(out)


class StreamEncoder:
    """Turns file bytes into the stream's lines; tracks each file's offset."""

    def __init__(self) -> None:
        self.offsets: Dict[int, int] = {}
        #: File 0's bytes not yet sent (a line still without its newline).
        self.pending = b""
        self.marked = 0

    def start(self) -> bytes:
        return record("start", str(VERSION))

    def declare(self, key: int, append: bool, path: str) -> bytes:
        self.offsets.setdefault(key, 0)
        return record("file", str(key), "a" if append else "w", json.dumps(path))

    def note(self, line: bytes) -> bytes:
        text = line.rstrip(b"\n").replace(b"\n", b" ")
        return MARK + b"note " + text + b"\n"

    def feed(self, key: int, data: bytes) -> bytes:
        """New bytes of file ``key``: the lines to write now."""
        if key != STDOUT_KEY:
            offset = self.offsets.get(key, 0)
            self.offsets[key] = offset + len(data)
            return data_records(key, offset, data)
        self.pending += data
        last = self.pending.rfind(b"\n")
        if last < 0:
            return b""
        complete, self.pending = self.pending[:last + 1], self.pending[last + 1:]
        out: List[bytes] = []
        offset = self.offsets.get(STDOUT_KEY, 0)
        for line in split_lines(complete):
            if line.startswith(MARK) or len(line) > PLAIN_LINE_MAX:
                out.append(data_records(STDOUT_KEY, offset, line))
            else:
                out.append(line)
            offset += len(line)
        self.offsets[STDOUT_KEY] = offset
        return b"".join(out)

    def flush(self) -> bytes:
        """File 0's unfinished line, sent as data."""
        if not self.pending:
            return b""
        offset = self.offsets.get(STDOUT_KEY, 0)
        data, self.pending = self.pending, b""
        self.offsets[STDOUT_KEY] = offset + len(data)
        self.marked = self.offsets[STDOUT_KEY]
        return data_records(STDOUT_KEY, offset, data)

    def unmarked(self) -> int:
        """Bytes of file 0 sent since the last ``at`` (or data) record."""
        return self.offsets.get(STDOUT_KEY, 0) - self.marked

    def mark(self) -> bytes:
        self.marked = self.offsets.get(STDOUT_KEY, 0)
        return record("at", str(STDOUT_KEY), str(self.marked))

    def end(self) -> bytes:
        tail = self.flush()
        sizes = " ".join(f"{key}={size}" for key, size in sorted(self.offsets.items()))
        return tail + record("end", sizes) if sizes else tail + record("end")


class StreamSink:
    """Where a decoded stream goes (the callbacks of :class:`StreamDecoder`)."""

    def declare(self, key: int, append: bool, path: str) -> None:
        """File ``key`` is written at ``path``."""

    def write(self, key: int, offset: int, data: bytes) -> None:
        """Bytes of file ``key`` at ``offset`` (possibly some already written before)."""

    def message(self, line: bytes) -> None:
        """A line that is no file's: the runtime's note, or another writer's line."""

    def ended(self, sizes: Dict[int, int]) -> None:
        """The stream is complete: each file's final size."""


class StreamDecoder:
    """Rebuilds files from the log served over one or more connections."""

    #: Plain lines held while their place is unknown; past this they are counted as lost.
    UNPLACED_MAX = 8 << 20

    def __init__(self, sink: StreamSink) -> None:
        self.sink = sink
        self.started = False
        self.complete = False
        self.sizes: Dict[int, int] = {}
        self.declared: Dict[int, Tuple[bool, str]] = {}
        self.lost = 0
        self._messages = 0          # messages delivered
        self._conn_messages = 0     # messages seen on this connection
        self._line = b""
        self._cursor: Optional[int] = None
        self._unplaced: List[bytes] = []
        self._replay = False
        self._handlers: Dict[bytes, Callable[[List[bytes]], None]] = {
            b"start": self._start, b"file": self._file, b"data": self._data, b"at": self._at,
            b"note": self._note, b"end": self._end}

    def connect(self) -> None:
        """A new connection serves the log from its (current) start."""
        self._line = b""
        self._cursor = None
        self._unplaced = []
        self._conn_messages = 0
        self._replay = self.complete     # the whole stream is in: nothing new can come

    def feed(self, chunk: bytes) -> None:
        """The next bytes of the served log."""
        text = self._line + chunk
        last = text.rfind(b"\n")
        if last < 0:
            self._line = text
            return
        self._line = text[last + 1:]
        for line in split_lines(text[:last + 1]):
            self._take(line)

    def disconnected(self) -> None:
        """The connection ended: a line cut short is dropped (it is served again)."""
        self._line = b""
        if not self.complete and self._unplaced and not self.started:
            for line in self._unplaced:
                self._message(line)        # a log of no stream: the runtime's lines
            self._unplaced = []

    def _take(self, line: bytes) -> None:
        if self._replay:
            return
        if self.complete:
            self._message(line)
        elif line.startswith(MARK):
            words = line[len(MARK):].rstrip(b"\n").split(b" ", 1)
            handler = self._handlers.get(words[0])
            if handler is not None:
                handler(words[1].split(b" ") if len(words) > 1 else [])
        elif self._cursor is None:
            self._unplaced.append(line)
            if sum(map(len, self._unplaced)) > self.UNPLACED_MAX:
                self.lost += len(self._unplaced.pop(0))
        else:
            self.sink.write(STDOUT_KEY, self._cursor, line)
            self._cursor += len(line)

    def _message(self, line: bytes) -> None:
        """A runtime line: delivered once (a reconnect serves it again)."""
        self._conn_messages += 1
        if self._conn_messages > self._messages:
            self._messages += 1
            self.sink.message(line)

    def _anchor(self, offset: int) -> None:
        """File 0 is at ``offset`` here: the held lines end at it."""
        held = b"".join(self._unplaced)
        self._unplaced = []
        if held:
            start = offset - len(held)
            if start < 0:
                held, start = held[-start:], 0
            self.sink.write(STDOUT_KEY, start, held)
        self._cursor = offset

    def _start(self, words: List[bytes]) -> None:
        for line in self._unplaced:
            self._message(line)
        self._unplaced = []
        self.started = True
        self._cursor = 0

    def _file(self, words: List[bytes]) -> None:
        key, append = int(words[0]), words[1] == b"a"
        path = json.loads(b" ".join(words[2:]).decode("utf-8", "surrogateescape"))
        if key not in self.declared:
            self.declared[key] = (append, path)
            self.sink.declare(key, append, path)

    def _data(self, words: List[bytes]) -> None:
        key, offset = int(words[0]), int(words[1])
        payload = base64.b64decode(words[2]) if len(words) > 2 else b""
        if key == STDOUT_KEY:
            self._anchor(offset)
            self._cursor = offset + len(payload)
        self.sink.write(key, offset, payload)

    def _at(self, words: List[bytes]) -> None:
        if int(words[0]) == STDOUT_KEY:
            self._anchor(int(words[1]))

    def _note(self, words: List[bytes]) -> None:
        self._message(b" ".join(words) + b"\n")

    def _end(self, words: List[bytes]) -> None:
        sizes = {}
        for word in words:
            key, _, size = word.partition(b"=")
            if size:
                sizes[int(key)] = int(size)
        if STDOUT_KEY in sizes:
            self._anchor(sizes[STDOUT_KEY])
        self.sizes = sizes
        self.complete = True
        self.sink.ended(sizes)
