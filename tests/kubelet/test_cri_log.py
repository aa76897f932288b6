"""Container logs as on a node (issue 15, items 2 and 3): written in the CRI format with
containerd's alterations (checked against what containerd 1.6.20 stored on the real nodes),
rotated as the kubelet rotates them, and followed across a rotation as a 1.28 kubelet follows:
on when the follow was still reading, stalled when it was waiting, jumping ahead once the old
file is compressed away."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Iterator, Optional

import pytest

from tests.apiserver.support import wait_until
from tests.kubelet.cri_log import CriLog, LogPolicy, cri_lines, decode_lines, read_log
from tests.kubelet.log_reading import LogReading

#: What a container wrote, and what containerd stored (tag, content) — seen on the real nodes.
STORED = [
    (b"crlf\r\n", [(b"F", b"crlf")]),
    (b"lone\rcr\n", [(b"F", b"lone\rcr")]),
    (b"nul\x00byte\n", [(b"F", b"nul\x00byte")]),
    (b"bad\xff\xfeutf\n", [(b"F", b"bad\xff\xfeutf")]),
    (b"A" * 20000 + b"\n", [(b"P", b"A" * 16384), (b"F", b"A" * 3616)]),
    (b"two-cr\r\r\n", [(b"F", b"two-cr\r")]),
    (b"\r\n", [(b"F", b"")]),
    (b"cr-at-16k" + b"B" * 16374 + b"\r\n", [(b"F", b"cr-at-16k" + b"B" * 16374)]),
]


@pytest.mark.parametrize("written,stored", STORED)
def test_the_runtime_writes_lines_as_containerd_does(written: bytes, stored: Any) -> None:
    assert cri_lines(b"", written, closed=False) == (stored, b"")
    # the same bytes in pieces of any size make the same lines
    pending, lines = b"", []
    for i in range(0, len(written), 7):
        more, pending = cri_lines(pending, written[i:i + 7], closed=False)
        lines += more
    assert (lines, pending) == (stored, b"")


def test_a_last_line_without_newline_is_partial_when_the_pipe_closes() -> None:
    assert cri_lines(b"", b"nofinal", closed=False) == ([], b"nofinal")
    assert cri_lines(b"nofinal", b"", closed=True) == ([(b"P", b"nofinal")], b"")
    # a CR at the end of what came so far waits: it may be the start of CRLF
    assert cri_lines(b"", b"x" * 16384 + b"\r", closed=False) == ([], b"x" * 16384 + b"\r")


def test_the_kubelet_reads_back_the_altered_output() -> None:
    raw = b"".join(b"2026-11-27T00:00:00.1Z stdout %s %s\n" % line
                   for _, stored in STORED for line in stored)
    expected = b"".join(w.replace(b"\r\n", b"\n") for w, _ in STORED)
    assert decode_lines(raw) == expected
    assert decode_lines(b"not a cri line\n2026-11-27T00:00:00Z stderr F ok\n") == b"ok\n"


def _writer(log: CriLog, data: bytes) -> None:
    """``data`` written to the log's stdout by a real process (its pipes closed after)."""
    out, err = log.attach()
    try:
        subprocess.run(["cat"], input=data, stdout=out, stderr=err, check=True)
    finally:
        os.close(out)
        os.close(err)
    assert log.wait_drained(60)


def test_a_real_process_writes_through_the_runtime(tmp_path: Path) -> None:
    log = CriLog(str(tmp_path / "main.log"), LogPolicy(monitor_s=3600))
    _writer(log, b"".join(w for w, _ in STORED) + b"end without newline")
    log.close()
    assert read_log(log.path) == b"".join(w.replace(b"\r\n", b"\n") for w, _ in STORED) + \
        b"end without newline"


def test_rotation_keeps_max_files_compresses_the_rotated_and_renames(tmp_path: Path) -> None:
    log = CriLog(str(tmp_path / "main.log"), LogPolicy(max_size=1000, max_files=3,
                                                       monitor_s=3600))
    for round_ in range(5):
        _writer(log, b"%d" % round_ * 1200 + b"\n")
        assert log.rotate_if_needed()
        assert not log.rotate_if_needed()           # the new file is empty
    log.close()
    names = sorted(os.listdir(tmp_path))
    # at most max_files - 1 rotated files beside the current one; all but the newest gzipped
    assert len(names) == 3 and names[0] == "main.log", names
    assert names[1].endswith(".gz") and not names[2].endswith(".gz"), names
    assert read_log(str(tmp_path / "main.log")) == b""
    assert read_log(str(tmp_path / names[2])) == b"4" * 1200 + b"\n"


def test_a_rotation_cuts_the_line_being_written_in_two(tmp_path: Path) -> None:
    """As containerd 1.6.20 did on the real nodes: the part of a line the old file's writer
    had goes there as ``P``; the rest begins the new file as ``F``."""
    log = CriLog(str(tmp_path / "main.log"), LogPolicy(max_size=10, monitor_s=3600))
    write_end, stderr = log.attach()
    os.close(stderr)
    os.write(write_end, b"whole line\nthe head of a line ")
    wait_until(lambda: os.path.getsize(log.path) > 0 and log._pending.get(b"stdout"),
               60, "the first line stored")
    assert log.rotate_if_needed()
    os.write(write_end, b"and its tail\n")
    os.close(write_end)
    log.wait_drained(60)
    log.close()
    rotated = [name for name in os.listdir(tmp_path) if name != "main.log"]
    old = (tmp_path / rotated[0]).read_bytes()
    assert old.split(b" ", 2)[2].startswith(b"F whole line\n")
    assert old.endswith(b" stdout P the head of a line \n")
    assert (tmp_path / "main.log").read_bytes().endswith(b" stdout F and its tail\n")
    assert read_log(str(tmp_path / rotated[0])) == b"whole line\nthe head of a line "
    assert read_log(log.path) == b"and its tail\n"


class Process:
    def __init__(self) -> None:
        self.code: Optional[int] = None

    def poll(self) -> Optional[int]:
        return self.code


class Run:
    """A running container as the log reading sees it: its log, written through its pipes."""

    def __init__(self, log: CriLog) -> None:
        self.log = log
        self.spec = type("Spec", (), {"log_path": log.path})()
        self.process = Process()
        self._out, self._err = log.attach()

    def say(self, text: bytes) -> None:
        os.write(self._out, text)

    def end(self) -> None:
        """The container exits (its pipes close)."""
        for fd in (self._out, self._err):
            if fd >= 0:
                os.close(fd)
        self._out = self._err = -1
        self.process.code = 0


class Follow:
    """A followed read in a thread; what it served so far."""

    def __init__(self, reading: LogReading) -> None:
        self.served = b""
        self.ended = threading.Event()
        self._reading = reading
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        for chunk in self._reading.chunks():
            self.served += chunk
        self.ended.set()

    def has(self, data: bytes, timeout_s: float = 60) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.served.endswith(data):
                return True
            time.sleep(0.02)
        return False


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    log = CriLog(str(tmp_path / "main.log"), LogPolicy(max_size=100, max_files=5,
                                                       monitor_s=3600))
    running = Run(log)
    yield running
    running.end()
    log.close()


def _follow(run: Run) -> Follow:
    return Follow(LogReading(run, True, None, threading.Event()))


def _waiting(follow: Follow) -> None:
    """Until the follow, having read to the end of the file, waits there for more."""
    wait_until(lambda: follow._reading._waiting_since is not None, 60,
               "the follow waiting at the end of the file")


def _stored(run: Run, data: bytes) -> bytes:
    """The current log file once it holds ``data`` (the runtime writes it from its pipe)."""
    def probe() -> Optional[bytes]:
        text = read_log(run.log.path)
        return text if data in text else None
    return wait_until(probe, 60, f"{data[:20]!r} in the log")


def test_a_follow_waiting_at_a_rotation_stalls_until_the_container_ends(run: Run) -> None:
    follow = _follow(run)
    run.say(b"x" * 150 + b"\n")
    assert follow.has(b"x\n")
    _waiting(follow)                        # the follow waits at the end of the file
    assert run.log.rotate_if_needed()
    run.say(b"after the rotation\n")
    assert not follow.has(b"after the rotation\n", 1.0)     # it stalled
    assert _stored(run, b"after the rotation\n") == b"after the rotation\n"
    run.end()
    assert follow.ended.wait(60)            # the stream ends with the container...
    assert follow.served == b"x" * 150 + b"\n"             # ...without the newest file


def test_a_stalled_follow_jumps_to_the_newest_file_once_the_old_is_compressed(
        run: Run) -> None:
    follow = _follow(run)
    run.say(b"first " + b"1" * 150 + b"\n")
    assert follow.has(b"1\n")
    _waiting(follow)
    assert run.log.rotate_if_needed()       # stalls the waiting follow
    run.say(b"skipped " + b"2" * 150 + b"\n")
    _stored(run, b"skipped ")
    assert run.log.rotate_if_needed()       # compresses the file it waits on
    run.say(b"newest\n")
    assert follow.has(b"newest\n")
    assert follow.served == b"first " + b"1" * 150 + b"\nnewest\n"


def test_a_follow_still_reading_at_a_rotation_goes_on_seamlessly(run: Run) -> None:
    reading = LogReading(run, True, None, threading.Event())    # opens the current file
    run.say(b"a" * 150 + b"\n")
    wait_until(lambda: read_log(run.log.path), 60, "the log")
    assert run.log.rotate_if_needed()       # before the follow read that file to its end
    run.say(b"b\n")
    follow = Follow(reading)
    assert follow.has(b"b\n")
    assert follow.served == b"a" * 150 + b"\nb\n"


def test_a_plain_read_serves_the_newest_file_only(run: Run) -> None:
    run.say(b"old\n")
    wait_until(lambda: read_log(run.log.path), 60, "the log")
    run.log.policy = run.log.policy._replace(max_size=1)
    assert run.log.rotate_if_needed()
    run.say(b"new\n")
    assert wait_until(lambda: read_log(run.log.path), 60, "the log") == b"new\n"
    served = b"".join(LogReading(run, False, None, threading.Event()).chunks())
    assert served == b"new\n"
