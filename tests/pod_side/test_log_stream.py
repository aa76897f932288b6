"""Node 0's output stream through a container log (issue 15, items 2 and 3): every byte comes
back exactly through containerd's CRI log writer (which drops the ``\\r`` of a ``\\r\\n``,
splits lines at 16 KiB and stores a last line without newline as partial), whatever the bytes;
a connection that jumps ahead inside the log leaves a counted hole, never a wrong byte; a
runtime note comes once, however the log is served again.

The runtime's CRI writer here is the test kubelet's (:mod:`tests.kubelet.cri_log`), which
follows what containerd 1.6.20 stored on the real nodes."""

from __future__ import annotations

import random
import re
from typing import Dict, List, Tuple

import pytest

from sbatch_k8s.runtime.log_stream.decoder import StreamDecoder, StreamSink
from sbatch_k8s.runtime.log_stream.frames import (
    DATA_CHUNK, MARK, MARK_EVERY_BYTES, RECORD_END, StreamEncoder, plain_safe)
from tests.kubelet.cri_log import cri_lines, decode_lines, runtime_lines

#: Bytes a log pipeline alters or a stream must carry as data.
AWKWARD = [b"crlf\r\n", b"lone\rcr\n", b"nul\x00\n", b"\xff\xfe not utf-8\n", b"\r\n",
           b"two-cr\r\r\n", b"y" * (1 << 20) + b"\n", MARK + b"end 0=1\n", b"form\x0cfeed\n",
           b"no final newline"]
PLAIN = [b"text\n", b"tab\there\n", b"\x1b[31mred\x1b[0m\n", "café ✓\n".encode(), b"\n"]


@pytest.mark.parametrize("line", AWKWARD)
def test_lines_a_pipeline_would_alter_are_not_plain(line: bytes) -> None:
    assert not plain_safe(line)


@pytest.mark.parametrize("line", PLAIN)
def test_text_lines_stay_plain(line: bytes) -> None:
    assert plain_safe(line)


class Files(StreamSink):
    """The files a client rebuilds, with holes as NUL bytes (as a sparse file reads), and
    what it counts as lost (the high-water mark rule of the real sinks)."""

    def __init__(self) -> None:
        self.data: Dict[int, bytearray] = {}
        self.written: Dict[int, int] = {}
        self.lost = 0
        self.messages: List[bytes] = []
        self.sizes: Dict[int, int] = {}

    def write(self, key: int, offset: int, data: bytes) -> None:
        done = self.written.get(key, 0)
        if offset + len(data) <= done:
            return
        if offset > done:
            self.lost += offset - done
        else:
            data, offset = data[done - offset:], done
        buffer = self.data.setdefault(key, bytearray())
        buffer.extend(b"\0" * (offset + len(data) - len(buffer)))
        buffer[offset:offset + len(data)] = data
        self.written[key] = offset + len(data)

    def message(self, line: bytes) -> None:
        self.messages.append(line)

    def ended(self, sizes: Dict[int, int]) -> None:
        self.sizes = sizes
        for key, size in sizes.items():
            self.lost += max(0, size - self.written.get(key, 0))
            buffer = self.data.setdefault(key, bytearray())
            buffer.extend(b"\0" * (size - len(buffer)))


def _through_containerd(stream: bytes) -> bytes:
    """What the kubelet serves of ``stream`` written by a container (in pieces)."""
    stored, pending = b"", b""
    for i in range(0, len(stream), 4093):
        lines, pending = cri_lines(pending, stream[i:i + 4093], closed=False)
        stored += b"".join(b"t stdout %s %s\n" % line for line in lines)
    lines, _ = cri_lines(pending, b"", closed=True)
    stored += b"".join(b"t stdout %s %s\n" % line for line in lines)
    return decode_lines(stored)


def _encode(pieces: List[bytes]) -> bytes:
    encoder = StreamEncoder()
    out = [encoder.start(), encoder.declare(0, False, "/w/out")]
    for piece in pieces:
        out.append(encoder.feed(0, piece))
        out.append(encoder.note(b"runtime says hi"))
    out.append(encoder.end())
    return b"".join(out)


def _decode(served: List[bytes]) -> Files:
    files = Files()
    decoder = StreamDecoder(files)
    for connection in served:
        decoder.connect()
        decoder.feed(connection)
        decoder.disconnected()
    assert decoder.complete
    return files


def test_every_byte_comes_back_through_containerd() -> None:
    random.seed(15)
    noise = bytes(random.getrandbits(8) for _ in range(200_000))
    pieces = AWKWARD + PLAIN + [noise, b"\r", b"\n", b"ends in cr\r", b"\n"]
    truth = b"".join(pieces)
    files = _decode([_through_containerd(_encode(pieces))])
    assert bytes(files.data[0]) == truth and files.lost == 0


def test_the_old_encoding_of_crlf_lines_is_what_containerd_corrupts() -> None:
    """Why the records: a CRLF line sent plain comes back without its CR."""
    assert _through_containerd(b"continued\r\nnext\n") == b"continued\nnext\n"


def test_anchors_come_often_enough_for_held_lines() -> None:
    encoder = StreamEncoder()
    out = encoder.feed(0, b"0123456789abcde\n" * (MARK_EVERY_BYTES // 4))
    assert out.count(MARK + b"at 0 ") == 4


def test_a_jump_inside_a_connection_leaves_a_counted_hole_and_nothing_wrong() -> None:
    pieces = [b"line %06d\n" % i for i in range(40_000)]       # 480,000 bytes, ~2 anchors
    log = _encode(pieces)
    truth = b"".join(pieces)
    lines = log.splitlines(keepends=True)
    # the follow served the first third, stalled, then jumped to a later file
    jumped = b"".join(lines[:len(lines) // 3] + lines[len(lines) // 2:])
    files = _decode([jumped])
    rebuilt = bytes(files.data[0])
    assert len(rebuilt) == len(truth)
    holes = sum(1 for a, b in zip(rebuilt, truth) if a != b)
    assert files.lost == rebuilt.count(0) == holes > 0        # every wrong byte is a hole
    assert all(a in (0, b) for a, b in zip(rebuilt, truth))


def test_a_reconnect_after_a_rotation_places_the_newest_file_and_counts_the_gap() -> None:
    pieces = [b"line %06d\n" % i for i in range(40_000)]
    lines = _encode(pieces).splitlines(keepends=True)
    first, newest = lines[:1000], lines[20000:]       # what lay between rotated away
    files = _decode([b"".join(first), b"".join(newest)])
    truth = b"".join(pieces)
    rebuilt = bytes(files.data[0])
    assert files.lost == rebuilt.count(0) > 0
    assert all(a in (0, b) for a, b in zip(rebuilt, truth))
    assert rebuilt.endswith(truth[-100_000:])
    # a runtime note is delivered once, however many connections serve it
    assert files.messages.count(b"runtime says hi\n") == \
        sum(line.count(b"note runtime says hi") for line in first + newest)


def test_a_log_served_whole_twice_repeats_nothing() -> None:
    pieces = [b"a\n", b"b\r\n", b"c"]
    log = _encode(pieces)
    files = _decode([log[:len(log) // 2], log, log])
    assert bytes(files.data[0]) == b"a\nb\r\nc" and files.lost == 0
    assert files.messages == [b"runtime says hi\n"] * 3


def test_a_fake_containers_log_reads_back_as_the_runtime_altered_it() -> None:
    assert decode_lines(runtime_lines(b"a\r\nb")) == b"a\nb"


def _mixed_log() -> Tuple[bytes, bytes]:
    """A stream of plain lines and records (awkward bytes) with notes, and its file 0."""
    random.seed(1515)
    pieces = []
    for i in range(3000):
        pieces.append(b"plain line %05d\n" % i if i % 3 else
                      bytes(random.getrandbits(8) for _ in range(random.randint(1, 90))) +
                      b"\r\n")
    return _encode(pieces), b"".join(pieces)


def test_a_line_a_rotation_cut_in_two_comes_back_whole_wherever_the_cut() -> None:
    """containerd writes the part of a line it had into the old file and the rest into the
    new one: one connection ends with the head, the next begins with the tail (seen on the
    real nodes: a record's tail placed as plain text, 172 wrong bytes and exit 0)."""
    log, truth = _mixed_log()
    random.seed(7)
    cuts = random.sample(range(200, len(log) - 200), 100)
    for cut in cuts:
        files = _decode([log[:cut], log[cut:]])
        assert bytes(files.data[0]) == truth and files.lost == 0, cut


def test_a_tail_without_its_head_is_a_counted_hole_never_a_wrong_byte() -> None:
    log, truth = _mixed_log()
    random.seed(8)
    for _ in range(100):
        cut = random.randrange(200, len(log) - 20_000)
        resumed = cut + random.randrange(1, 10_000)            # a rotated file never read
        files = _decode([log[:cut], log[resumed:]])
        rebuilt = bytes(files.data[0])
        assert len(rebuilt) == len(truth)
        wrong = [i for i, (a, b) in enumerate(zip(rebuilt, truth)) if a != b]
        assert all(rebuilt[i] == 0 for i in wrong), (cut, resumed, wrong[:3])
        assert files.lost >= len(wrong)


def test_a_plain_line_ending_like_a_record_goes_as_a_record() -> None:
    assert not plain_safe(b"looks like a record's end ::\n")
    assert plain_safe(b"ends with colons::\n")


def test_a_version_1_stream_still_reads() -> None:
    """Records without their end or CRC (a job started by an older client)."""
    pieces = [b"one\n", b"cr\r\n", b"two\n"]
    encoded = _encode(pieces).replace(RECORD_END, b"\n")
    old = re.sub(rb"(data \d+ \d+ \S*) [0-9a-f]{8}\n", rb"\1\n", encoded)
    assert old.count(b" data ") == 1 and b" ::" not in old
    files = _decode([old])
    assert bytes(files.data[0]) == b"".join(pieces) and files.lost == 0


def test_awkward_output_goes_in_few_records_and_text_stays_plain() -> None:
    """A reader decodes one record per DATA_CHUNK bytes of awkward output, not one per line
    (one per line made sbatch --wait read 3 MB/s, and fall a whole rotation behind)."""
    random.seed(3)
    awkward = b"".join(bytes(random.getrandbits(8) for _ in range(40)) + b"\r\n"
                       for _ in range(5000))
    encoder = StreamEncoder()
    out = encoder.feed(0, awkward)
    assert out.count(b"\n") <= len(awkward) // DATA_CHUNK + 2
    text = b"".join(b"step %d loss %.3f\n" % (i, 1 / (i + 1)) for i in range(5000))
    assert StreamEncoder().feed(0, text).startswith(text[:4096])
    files = _decode([_encode([awkward, text, awkward])])
    assert bytes(files.data[0]) == awkward + text + awkward and files.lost == 0
