"""The output stream node 0 writes to its pod log when the job's files stay in the pods.

On a partition whose volumes do not hold the job's working directory, node 0's runtime copies
the batch script's output files into its container's stdout (:mod:`.tee`), so that
``kubectl logs <node-0 pod>`` reads as the job's output and a client (``sbatch --wait``,
``sattach``) can rebuild every file byte for byte (:mod:`.decoder`). The format:

* **Plain lines** are the bytes of the batch stdout file (file ``0``), line by line, as the job
  wrote them — those a log pipeline passes through unchanged (:func:`plain_safe`), but for
  short runs of them among lines that cannot be plain, which go as data with those.
* Every other line is a **record**: it begins with :data:`MARK` (``::sbatch-k8s:: ``) and ends
  with :data:`RECORD_END` (`` ::`` and the newline; version 1 records end with the newline
  alone). Records carry what plain lines cannot:

  ``start 1``
      the stream begins (version 1); file 0's offset is 0 here.
  ``file <key> <w|a> <path as a JSON string>``
      file ``key`` (0: the batch stdout; 1: the batch stderr when ``-e`` names another file)
      is written at ``path`` in the job's working directory, truncated (``w``) or appended
      to (``a``, ``--open-mode=append``). Said again every :data:`REDECLARE_S` and right
      before ``end``, for a reader whose first look at the log comes after a rotation.
  ``data <key> <offset> <base64> <crc32>``
      bytes of file ``key`` at ``offset`` (counted from the first byte this job wrote), and
      their CRC-32 in hexadecimal (not in version 1), which a joined line must match. Used
      for every file but 0, and for the bytes of file 0 that cannot be a plain line: a line
      that begins with the mark, one longer than :data:`PLAIN_LINE_MAX`, one a container
      runtime's log writer would alter (a carriage return, other control bytes, bytes that
      are not UTF-8), and a last line without its newline (sent once the job has been quiet
      for a moment, or at the end).
  ``at <key> <offset>``
      file ``key`` has ``offset`` bytes up to here: written after a burst of plain lines (at
      most :data:`MARK_EVERY_BYTES` of them apart), and every :data:`KEEPALIVE_S` while the
      job writes nothing, so a reader can tell a quiet job from a log that stopped coming.
  ``note <text>``
      a line of the runtime's own (its diagnostics): never part of a file.
  ``end <key>=<size> …``
      every file is complete at these sizes; nothing of the stream follows.

Why records: a container's log is not a byte-exact channel. The runtime splits what a
container writes at each ``\\n`` into CRI log lines (``<time> <stream> <P|F> <content>``),
cuts lines longer than 16 KiB into partial (``P``) ones, and containerd drops the ``\\r`` of
a ``\\r\\n``; other log drivers re-encode what is not UTF-8. So every line stays below the 16
KiB split (a line of another writer can only come between whole lines), and only lines that
every pipeline passes through unchanged are plain; the rest travel base64-encoded. Lines
before ``start`` and after ``end`` are another writer's (shown as runtime messages).

The kubelet rotates the log (10 MiB by default, 5 files) and serves only the newest file, and
its follow of a log can stop at a rotation; the offsets in the records let a client place
every byte whatever part of the log a connection serves (:mod:`.decoder`). A rotation can
cut a line in two: containerd writes the part of a line it already had into the old file (as
a partial ``P`` line) and the rest into the new one, so a connection can begin with the tail
of a line. The record end says which tails are a record's (never placed as plain bytes; no
plain line ends that way), and the CRC says whether a head and a tail joined are one record.
"""

from __future__ import annotations

import base64
import json
import re
import zlib
from typing import Dict, List, Tuple

MARK = b"::sbatch-k8s:: "
#: How a record line ends (version 2): its tail, whatever part a rotation cut, is a record's.
RECORD_END = b" ::\n"
VERSION = 2
#: Longest plain line in bytes, newline included (longer ones go as data records).
PLAIN_LINE_MAX = 8192
#: Raw bytes per data record (base64: 8 KiB of text).
DATA_CHUNK = 6144
#: Output is judged plain or not in pieces of at least this many bytes (:func:`_runs`).
PLAIN_RUN_MIN = 1024
STDOUT_KEY = 0
STDERR_KEY = 1
#: Plain bytes of file 0 between two ``at`` records at most (a reader holds the lines between
#: two of them until the second says where they end).
MARK_EVERY_BYTES = 256 << 10
#: While the job writes nothing, an ``at`` record this often (the stream's heartbeat).
KEEPALIVE_S = 2.0
#: The ``file`` records again this often (and before ``end``).
REDECLARE_S = 10.0
#: Bytes a log pipeline may alter: control bytes but tab and escape (``\\r`` among them:
#: containerd drops it before a ``\\n``; NUL, form feed…). Bytes that are not UTF-8 are
#: caught by decoding.
_ALTERABLE = re.compile(rb"[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f]")
_ALTERABLE_BYTES = bytes([*range(0x00, 0x09), *range(0x0b, 0x1b), *range(0x1c, 0x20), 0x7f])


def split_lines(data: bytes) -> List[bytes]:
    """``data`` cut after each newline (only ``\\n``: a carriage return is a line's byte)."""
    lines = [line + b"\n" for line in data.split(b"\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def plain_safe(line: bytes) -> bool:
    """Whether ``line`` can be a plain line: a whole line (its newline included), not a
    record's look-alike, short enough, and made only of bytes every log pipeline passes
    through unchanged (UTF-8 text without control bytes other than tab and escape)."""
    if not line.endswith(b"\n") or line.startswith(MARK) or len(line) > PLAIN_LINE_MAX:
        return False
    if line.endswith(RECORD_END):       # a record's tail look-alike
        return False
    body = line[:-1]
    if _ALTERABLE.search(body):
        return False
    if body.isascii():
        return True
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def all_plain(block: bytes) -> bool:
    """Whether every line of ``block`` (whole lines) is :func:`plain_safe`, looked at in one
    pass over the block (the common case of text output, at C speed)."""
    if block.startswith(MARK) or b"\n" + MARK in block or RECORD_END in block:
        return False
    if len(block.translate(None, _ALTERABLE_BYTES)) != len(block) or \
            max(map(len, block.split(b"\n"))) >= PLAIN_LINE_MAX:
        return False
    if block.isascii():
        return True
    try:
        block.decode("utf-8")           # valid as a whole: valid line by line (cut at \n)
    except UnicodeDecodeError:
        return False
    return True


def record(*words: str) -> bytes:
    """One record line."""
    return MARK + " ".join(words).encode("utf-8", "surrogateescape") + RECORD_END


def record_words(line: bytes) -> List[bytes]:
    """The words of a record ``line`` (mark, newline and record end taken off)."""
    body = line[len(MARK):].rstrip(b"\n")
    if body.endswith(RECORD_END[:-1]):
        body = body[:-len(RECORD_END) + 1]
    return body.split(b" ")


def checksum(data: bytes) -> str:
    """The ``data`` record's CRC-32 word."""
    return "%08x" % zlib.crc32(data)


def data_records(key: int, offset: int, data: bytes) -> bytes:
    """``data`` of file ``key`` at ``offset``, in records of :data:`DATA_CHUNK` bytes."""
    out = []
    for start in range(0, len(data), DATA_CHUNK):
        piece = data[start:start + DATA_CHUNK]
        out.append(record("data", str(key), str(offset + start),
                          base64.b64encode(piece).decode("ascii"), checksum(piece)))
    return b"".join(out)


def _runs(block: bytes) -> List[Tuple[bool, bytes]]:
    """``block`` (whole lines) as runs of plain lines (True) and of bytes sent as data
    (False), judged in pieces of at least :data:`PLAIN_RUN_MIN` bytes cut at line ends: a
    piece with a line that cannot be plain goes as data whole, so that output of mostly
    awkward bytes costs one record per :data:`DATA_CHUNK` bytes, not one per line, and
    neither side looks at each line on its own."""
    runs: List[Tuple[bool, List[bytes]]] = []
    position = 0
    while position < len(block):
        end = block.find(b"\n", position + PLAIN_RUN_MIN - 1) + 1 or len(block)
        piece = block[position:end]
        plain = all_plain(piece)
        if runs and runs[-1][0] == plain:
            runs[-1][1].append(piece)
        else:
            runs.append((plain, [piece]))
        position = end
    return [(plain, b"".join(pieces)) for plain, pieces in runs]


class StreamEncoder:
    """Turns file bytes into the stream's lines; tracks each file's offset."""

    def __init__(self) -> None:
        self.offsets: Dict[int, int] = {}
        #: File 0's bytes not yet sent (a line still without its newline).
        self.pending = b""
        self.marked = 0
        #: Each file's ``file`` record, to say again.
        self.declarations: Dict[int, bytes] = {}

    def start(self) -> bytes:
        return record("start", str(VERSION))

    def declare(self, key: int, append: bool, path: str) -> bytes:
        self.offsets.setdefault(key, 0)
        line = record("file", str(key), "a" if append else "w", json.dumps(path))
        self.declarations[key] = line
        return line

    def redeclare(self) -> bytes:
        """Every ``file`` record again."""
        return b"".join(self.declarations[key] for key in sorted(self.declarations))

    def note(self, line: bytes) -> bytes:
        """A runtime line as a ``note`` record (one line, below the CRI split)."""
        text = line.rstrip(b"\r\n").replace(b"\n", b" ").replace(b"\r", b" ")
        return MARK + b"note " + text[:PLAIN_LINE_MAX] + RECORD_END

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
        if all_plain(complete):
            return self._plain_block(complete)
        out: List[bytes] = []
        for plain, run in _runs(complete):
            if plain:
                out.append(self._plain_block(run))
                continue
            offset = self.offsets.get(STDOUT_KEY, 0)
            out.append(data_records(STDOUT_KEY, offset, run))
            self.offsets[STDOUT_KEY] = self.marked = offset + len(run)
        return b"".join(out)

    def _plain_block(self, block: bytes) -> bytes:
        """Whole lines that are all plain, with an ``at`` after the line that completes each
        :data:`MARK_EVERY_BYTES` (as line by line, without splitting the block)."""
        out: List[bytes] = []
        position = 0
        while position < len(block):
            offset = self.offsets.get(STDOUT_KEY, 0)
            room = MARK_EVERY_BYTES - (offset - self.marked)
            if len(block) - position < room:
                out.append(block[position:])
                self.offsets[STDOUT_KEY] = offset + len(block) - position
                break
            end = block.find(b"\n", position + max(room, 1) - 1) + 1
            out.append(block[position:end])
            self.offsets[STDOUT_KEY] = offset + end - position
            out.append(self.mark())
            position = end
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
        tail = self.flush() + self.redeclare()
        sizes = " ".join(f"{key}={size}" for key, size in sorted(self.offsets.items()))
        return tail + record("end", sizes) if sizes else tail + record("end")
