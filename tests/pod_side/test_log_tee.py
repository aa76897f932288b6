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

#: The child: tees a file that gains BACKLOG bytes at once while its reader is slow, then
#: prints (to the saved stderr) how much its peak memory grew while copying.
CHILD = """
import os, resource, sys
from sbatch_k8s.runtime.log_stream.tee import start_tee
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
        env={**os.environ, "PYTHONPATH": os.getcwd()})
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
