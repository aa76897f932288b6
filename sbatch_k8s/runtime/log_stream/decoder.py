"""Rebuilding node 0's output files from its pod log (the format: :mod:`.frames`).

A client reads the log over one or more connections (``sbatch --wait``, ``sattach``: see
``sbatch_k8s.backends.kubernetes.output.pod_log``). Each connection serves what the kubelet has from
some point on: the start of the newest log file, which after a rotation is not the start of the
stream; a followed log can also jump ahead within one connection, when the kubelet's follow
stalled at a rotation and later reopened the then newest file. So no byte is placed by where it
arrives, only by what the records say:

* a connection that begins with ``start`` knows file 0's position (0); one that begins
  further on holds its plain lines until the first ``at``/``data``/``end`` of file 0 and places
  them backwards from it;
* once the position is known, the plain lines between two anchors are held until the second
  one, and written only when they end exactly where it says: lines that do not add up (a jump
  inside the connection, or a pipeline that altered them) are never written — the files keep
  a hole there, which the sink counts as lost;
* a connection that ends writes what it held at the place it knew (the bytes since the last
  anchor of a stream that stalled at a rotation, which no later connection serves again);
* a line a rotation cut in two ends one connection (the head, without its newline) and begins
  the next (the tail). A record's head and tail are joined when the joined record proves
  itself (a ``data`` record by its CRC; ``at``, ``file`` and ``end`` by parsing). A plain
  first line is written only where it provably belongs: placed backwards, it must begin
  where the last connection's bytes (and a plain head it ended with) end; otherwise it may be
  the tail of a line whose head no connection served, and stays a hole, counted. A record's
  tail inside a connection is never taken for a plain line (it ends with
  :data:`~.log_frames.RECORD_END`, which no plain line does).

Bytes already written are never written again (the sinks keep each file's high-water mark), so
a reconnect duplicates nothing, and what was rotated away before any connection read it shows
as a gap, counted as lost (:attr:`StreamDecoder.lost` and the sink's own count). A runtime
``note`` is delivered once, by its place in the stream. A file's bytes that come before its
``file`` record (a first look after a rotation: the writer says them again every few seconds
and before ``end``) wait for it.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Callable, Dict, List, Optional, Tuple, Union

from sbatch_k8s.runtime.log_stream.frames import (
    MARK, RECORD_END, STDOUT_KEY, checksum, record_words, split_lines)

#: A held item: a plain line of file 0, or a note's text (tagged).
Item = Union[bytes, Tuple[str, bytes]]


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
    #: Plain lines held for their anchor; past this they are written unconfirmed (a writer
    #: that anchors more sparsely than :data:`~.frames.MARK_EVERY_BYTES`).
    HELD_MAX = 8 << 20

    def __init__(self, sink: StreamSink) -> None:
        self.sink = sink
        self.started = False
        self.complete = False
        self.sizes: Dict[int, int] = {}
        self.declared: Dict[int, Tuple[bool, str]] = {}
        #: Plain bytes dropped while their place was unknown (held past UNPLACED_MAX).
        self.lost = 0
        #: Plain bytes not written because they did not add up between two anchors.
        self.unverified = 0
        self._messages = 0          # other writers' lines delivered
        self._conn_messages = 0     # other writers' lines seen on this connection
        self._line = b""
        self._cursor: Optional[int] = None
        #: Since the last anchor (position known) or since the connection began (unknown).
        self._held: List[Item] = []
        self._held_bytes = 0
        self._held_start = 0
        self._last_note = (-1, -1)   # (position, rank) of the last note delivered
        self._rank = (-1, -1)        # (position, rank) of the last note seen on this connection
        self._replay = False
        #: Writes to files not declared yet: key → (offset, bytes), in order.
        self._undeclared: Dict[int, List[Tuple[int, bytes]]] = {}
        self._undeclared_bytes = 0
        #: Where the last connection's bytes of file 0 ended, and the line it ended inside
        #: (a rotation's cut; empty when none).
        self._resume: Optional[Tuple[int, bytes]] = None
        #: The next line is this connection's first; its first held line is not placed yet.
        self._first = False
        self._first_held = False
        self._verify_from: Optional[Tuple[int, bytes]] = None
        self._handlers: Dict[bytes, Callable[[List[bytes]], None]] = {
            b"start": self._start, b"file": self._file, b"data": self._data, b"at": self._at,
            b"note": self._note, b"end": self._end}

    # -- connections -----------------------------------------------------------------------

    def connect(self) -> None:
        """A new connection serves the log from the start of what the kubelet serves."""
        self._line = b""
        self._cursor = None
        self._held, self._held_bytes = [], 0
        self._conn_messages = 0
        self._rank = (-1, -1)
        self._replay = self.complete     # the whole stream is in: nothing new can come
        self._first = True
        self._first_held = False

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
        """The connection ended: a line cut short is dropped (it is served again); lines
        held at a known place are written there; a log with no stream in it is all runtime
        messages."""
        known = self.started and not self.complete and self._cursor is not None
        self._resume = (self._cursor, self._line) if known and self._cursor is not None \
            else None
        self._line = b""
        if self._cursor is not None:
            self._release()
        elif not self.complete and not self.started:
            for item in self._held:
                if isinstance(item, bytes):
                    self._message(item)
        self._held, self._held_bytes = [], 0

    # -- lines -----------------------------------------------------------------------------

    def _take(self, line: bytes) -> None:
        if self._replay:
            return
        if self._first:
            self._first = False
            taken = self._first_line(line)
            if taken is None:
                return
            line = taken
        if self.complete:
            self._message(line)
        elif line.startswith(MARK):
            words = record_words(line)
            handler = self._handlers.get(words[0])
            if handler is not None:
                try:
                    handler(words[1:])
                except (ValueError, IndexError, binascii.Error):
                    pass                # a garbled record: what it would have placed is a hole
        elif line.endswith(RECORD_END):
            pass                        # a record's tail (a cut inside one connection)
        else:
            self._hold(line)

    def _first_line(self, line: bytes) -> Optional[bytes]:
        """A connection's first line, joined with the head the last one ended with when they
        prove one record (see the module docstring); None: nothing to take."""
        resume, self._resume = self._resume, None
        if line.startswith(MARK) or self.complete:
            return line
        position, head = resume if resume is not None else (-1, b"")
        joined = head + line
        if not joined.startswith(MARK):
            if line.endswith(RECORD_END):
                return None             # a record's tail whose head was never served
            self._first_held = True     # placed only where it provably begins
            self._verify_from = (position, head) if resume is not None else None
            return line
        if not joined.endswith(RECORD_END):
            return None
        words = record_words(joined)
        try:
            if words[0] == b"data":
                payload = base64.b64decode(words[3], validate=True)
                return joined if len(words) > 4 and checksum(payload).encode() == words[4] \
                    else None
        except (IndexError, binascii.Error):
            return None
        return joined if words[0] in (b"at", b"file", b"end") else None

    def _hold(self, item: Item) -> None:
        if not self._held:
            self._held_start = self._cursor if self._cursor is not None else 0
        self._held.append(item)
        if not isinstance(item, bytes):
            return
        self._held_bytes += len(item)
        if self._cursor is not None:
            self._cursor += len(item)
            if self._held_bytes > self.HELD_MAX:
                self._release()
        elif self._held_bytes > self.UNPLACED_MAX:
            first = next(i for i, held in enumerate(self._held) if isinstance(held, bytes))
            dropped = self._held.pop(first)
            self._held_bytes -= len(dropped)
            self.lost += len(dropped)

    def _release(self) -> None:
        """Write the held lines forward from where they began (their place is known)."""
        self._place(self._held_start, self._held)
        self._held, self._held_bytes = [], 0

    def _place(self, start: int, items: List[Item]) -> None:
        """Write ``items`` from ``start`` on (consecutive lines in one write), delivering the
        notes among them by their place."""
        position, run = start, []
        for item in items:
            if isinstance(item, bytes):
                run.append(item)
                continue
            position = self._write_run(position, run)
            run = []
            self._deliver_note(position, item[1])
        self._write_run(position, run)

    def _write_run(self, position: int, run: List[bytes]) -> int:
        """Write consecutive lines of file 0 at ``position``; the position after them."""
        if not run:
            return position
        data = b"".join(run)
        self._write(STDOUT_KEY, position, data)
        return position + len(data)

    def _write(self, key: int, offset: int, data: bytes) -> None:
        """To the sink once the file is declared; kept until then (bounded: past
        :data:`UNPLACED_MAX` the oldest kept bytes are dropped, and counted)."""
        if key in self.declared:
            self.sink.write(key, offset, data)
            return
        self._undeclared.setdefault(key, []).append((offset, data))
        self._undeclared_bytes += len(data)
        while self._undeclared_bytes > self.UNPLACED_MAX:
            oldest = next(k for k, writes in self._undeclared.items() if writes)
            _, dropped = self._undeclared[oldest].pop(0)
            self._undeclared_bytes -= len(dropped)
            self.lost += len(dropped)

    def _anchor(self, offset: int) -> None:
        """File 0 has ``offset`` bytes here: place what was held before it."""
        if self._cursor is None:          # placed backwards: they end here
            start = offset - self._held_bytes
            items = self._held
            if self._first_held:
                start, items = self._verified_start(start, items)
            while start < 0 and items:    # more than the file had: not this stream's lines
                item, items = items[0], items[1:]
                if isinstance(item, bytes):
                    start += len(item)
                    self.unverified += len(item)
            self._place(max(start, 0), items)
        elif self._cursor == offset:
            self._place(self._held_start, self._held)
        else:                             # they do not add up: leave the hole
            self.unverified += self._held_bytes
            for item in self._held:
                if not isinstance(item, bytes):
                    self._deliver_note(self._held_start, item[1])
        self._held, self._held_bytes = [], 0
        self._cursor = offset
        self._first_held = False

    def _verified_start(self, start: int, items: List[Item]) -> Tuple[int, List[Item]]:
        """The connection's held lines placed backwards from ``start``: written whole when
        the first begins where the last connection ended (its cut head written before it);
        else without the first line, which may be a tail (counted)."""
        if self._verify_from is not None:
            position, head = self._verify_from
            if start == position + len(head):
                if head:
                    self._write(STDOUT_KEY, position, head)
                return start, items
        first = next(i for i, item in enumerate(items) if isinstance(item, bytes))
        dropped = items[first]
        assert isinstance(dropped, bytes)
        self.unverified += len(dropped)
        return start + len(dropped), items[:first] + items[first + 1:]

    def _message(self, line: bytes) -> None:
        """Another writer's line: delivered once (a reconnect serves it again)."""
        self._conn_messages += 1
        if self._conn_messages > self._messages:
            self._messages += 1
            self.sink.message(line)

    def _deliver_note(self, position: int, text: bytes) -> None:
        """A runtime note at ``position`` of file 0: delivered unless an earlier connection
        did (the n-th note at one position on a connection is the n-th on any)."""
        rank = self._rank[1] + 1 if self._rank[0] == position else 0
        self._rank = (position, rank)
        if (position, rank) > self._last_note:
            self._last_note = (position, rank)
            self.sink.message(text)

    # -- records ---------------------------------------------------------------------------

    def _start(self, words: List[bytes]) -> None:
        if not self.started:
            for item in self._held:
                if isinstance(item, bytes):
                    self._message(item)
        self._held, self._held_bytes = [], 0
        self.started = True
        self._cursor = 0

    def _file(self, words: List[bytes]) -> None:
        key, append = int(words[0]), words[1] == b"a"
        path = json.loads(b" ".join(words[2:]).decode("utf-8", "surrogateescape"))
        if key not in self.declared:
            self.declared[key] = (append, path)
            self.sink.declare(key, append, path)
            for offset, data in self._undeclared.pop(key, []):
                self._undeclared_bytes -= len(data)
                self.sink.write(key, offset, data)

    def _data(self, words: List[bytes]) -> None:
        key, offset = int(words[0]), int(words[1])
        payload = base64.b64decode(words[2], validate=True) if len(words) > 2 else b""
        if len(words) > 3 and checksum(payload).encode() != words[3]:
            return                      # a line joined from two records: not placed
        if key == STDOUT_KEY:
            self._anchor(offset)
            self._cursor = offset + len(payload)
        self._write(key, offset, payload)

    def _at(self, words: List[bytes]) -> None:
        if int(words[0]) == STDOUT_KEY:
            self._anchor(int(words[1]))

    def _note(self, words: List[bytes]) -> None:
        text = b" ".join(words) + b"\n"
        if self._cursor is not None and not self._held:
            self._deliver_note(self._cursor, text)
        else:
            self._hold(("note", text))

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
