"""Node 0's tee (:mod:`sbatch_k8s.runtime.log_stream.tee`) when the job writes faster than the
container's log takes it (issue 15): every byte arrives, and the backlog waits in the file,
not in the runtime's memory (on real nodes a 50 MB backlog read at once got node 0's runtime
OOM-killed by its pod's memory limit, and the job's output ended mid-stream)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from sbatch_k8s.runtime.log_stream.decoder import StreamDecoder
from sbatch_k8s.runtime.log_stream.tee import CHUNK_BYTES
from tests.pod_side.test_log_stream import Files

BACKLOG = 24 * CHUNK_BYTES
# The checkout the child imports from (CI runs the pod-side suite from another folder).
CHECKOUT = str(Path(__file__).resolve().parents[2])

#: The child: tees a file that gains BACKLOG bytes at once while its reader is slow, then
#: prints (to the saved stderr) how much its peak memory grew while copying.
CHILD = """
import os, resource, sys
from sbatch_k8s.runtime.log_stream import tee as log_tee
from sbatch_k8s.runtime.log_stream.tee import start_tee
log_tee.STARTUP_S = 0.0     # no start-up allowance here
spool, path, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
err = os.dup(2)
open(path, "wb").close()
tee = start_tee(spool)
tee.add_file(0, path, False, "/work/out")
block = bytes(range(256)) * 4096
with open(path, "ab") as out:
    for _ in range(size // len(block)):
        out.write(block)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tee.finish()
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
os.write(err, b"grew %d\\n" % ((after - before) * 1024))
"""


def test_a_backlog_larger_than_memory_allows_comes_back_whole(tmp_path: Path) -> None:
    path = tmp_path / "out"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path), str(path), str(BACKLOG)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": CHECKOUT})
    assert child.stdout is not None
    files = Files()
    decoder = StreamDecoder(files)
    decoder.connect()
    time.sleep(1.0)                 # the container's log falls behind: the backlog builds
    while True:
        chunk = child.stdout.read(1 << 16)
        if not chunk:
            break
        decoder.feed(chunk)
    decoder.disconnected()
    _, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    assert decoder.complete and files.lost == 0
    block = bytes(range(256)) * 4096
    assert bytes(files.data[0]) == block * (BACKLOG // len(block))
    grew = int(err.decode().split()[-1])
    assert grew < BACKLOG // 3, f"the tee held {grew} bytes of a {BACKLOG}-byte backlog"


#: The child: a job that writes 4 MiB at once, under a 1 MiB start-up allowance of 4 s.
PACED = """
import sys
from sbatch_k8s.runtime.log_stream import tee as log_tee
log_tee.STARTUP_S, log_tee.STARTUP_BYTES = 4.0, 1 << 20
spool, path = sys.argv[1], sys.argv[2]
open(path, "wb").close()
tee = log_tee.start_tee(spool)
tee.add_file(0, path, False, "/work/out")
with open(path, "ab") as out:
    out.write(b"x" * ((4 << 20) - 1) + b"\\n")
tee.finish()
"""


def test_a_fast_start_waits_in_the_file_for_the_reader(tmp_path: Path) -> None:
    """The stream's first seconds carry at most the start-up allowance (the kubelet must not
    rotate the log before ``sbatch --wait`` connects), and the rest follows whole."""
    path = tmp_path / "out"
    child = subprocess.Popen([sys.executable, "-c", PACED, str(tmp_path), str(path)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env={**os.environ, "PYTHONPATH": CHECKOUT})
    assert child.stdout is not None
    files = Files()
    decoder = StreamDecoder(files)
    decoder.connect()
    first = child.stdout.read1(1 << 16)         # the start record: the window has begun
    early = time.monotonic() + 2.0
    decoder.feed(first)
    early_bytes = None
    while True:
        chunk = child.stdout.read1(1 << 16)
        if early_bytes is None and time.monotonic() > early:
            early_bytes = files.written.get(0, 0)
        if not chunk:
            break
        decoder.feed(chunk)
    decoder.disconnected()
    _, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert early_bytes is not None and early_bytes <= 1 << 20
    assert bytes(files.data[0]) == b"x" * ((4 << 20) - 1) + b"\n" and files.lost == 0
