"""srun's side of task output: line buffering per task, ``--label`` prefixes, ``-u``.

Slurm forwards whole lines per task (so lines of different tasks never mix); with ``-u`` it
forwards bytes as they come. With ``--label`` every line gets ``"%*d: "`` — the width is the
number of digits of the highest rank — and a last line without a newline gets one.
"""

from __future__ import annotations

from typing import BinaryIO, Dict, Tuple


def label_width(ntasks: int) -> int:
    """Digits of the highest rank (``ntasks - 1``)."""
    return len(str(max(ntasks - 1, 0)))


class OutputRouter:
    """Collects chunks per (task, stream) and writes complete lines to the right file."""

    def __init__(self, stdout: BinaryIO, stderr: BinaryIO, ntasks: int, label: bool,
                 unbuffered: bool) -> None:
        self.files = {b"O": stdout, b"E": stderr}
        self.label = label
        self.unbuffered = unbuffered and not label
        self.width = label_width(ntasks)
        self.partial: Dict[Tuple[int, bytes], bytes] = {}
        self.prefixes: Dict[int, bytes] = {}

    def _prefix(self, rank: int) -> bytes:
        prefix = self.prefixes.get(rank)
        if prefix is None:
            prefix = self.prefixes[rank] = f"{rank:>{self.width}}: ".encode()
        return prefix

    def _emit(self, rank: int, kind: bytes, lines: bytes) -> None:
        """Write complete lines (``lines`` ends with a newline)."""
        out = self.files[kind]
        if self.label:
            prefix = self._prefix(rank)
            out.write(prefix + lines[:-1].replace(b"\n", b"\n" + prefix) + b"\n")
        else:
            out.write(lines)
        out.flush()

    def feed(self, rank: int, kind: bytes, data: bytes) -> None:
        """A chunk of task ``rank``'s stdout (``O``) or stderr (``E``).

        Large chunks are written with one pass over the data (the label replace) and no
        further copies: the complete lines go out as a view, the tail waits for its newline.
        """
        out = self.files[kind]
        if self.unbuffered:
            out.write(data)
            out.flush()
            return
        key = (rank, kind)
        held = self.partial.pop(key, b"")
        last = data.rfind(b"\n")
        if last < 0:
            self.partial[key] = held + data
            return
        if self.label:
            prefix = self._prefix(rank)
            labelled = data.replace(b"\n", b"\n" + prefix)
            out.write(prefix)
            if held:
                out.write(held)
            out.write(memoryview(labelled)[:labelled.rfind(b"\n") + 1])
        else:
            if held:
                out.write(held)
            out.write(memoryview(data)[:last + 1])
        out.flush()
        if last + 1 < len(data):
            self.partial[key] = data[last + 1:]

    def finish(self, rank: int) -> None:
        """Task ``rank`` ended: flush its last partial lines (labelled ones get a newline)."""
        for kind in (b"O", b"E"):
            rest = self.partial.pop((rank, kind), b"")
            if not rest:
                continue
            if self.label:
                self._emit(rank, kind, rest + b"\n")
            else:
                out = self.files[kind]
                out.write(rest)
                out.flush()
