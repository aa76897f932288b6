"""Output files reach the submitter on a cluster (issue 8), byte for byte through the CRI log
format and the kubelet's log rotation (issue 15, items 2 and 3).

Where the partition's volumes do not hold the working directory, node 0 copies the batch
output files into its pod log and ``sbatch --wait``/``sattach`` rebuild them byte for byte
(``sbatch_k8s.runtime.log_stream.frames``). The pods of the test kubelet see this machine's files,
so these jobs hide the working directory from the pod as a cluster node would: with
``--container-readonly`` the pod gets its own ``/tmp``, where the test directories are (the
kubelet of these tests keeps its pod files outside ``/tmp``). With
a shared volume (a hostPath the test kubelet maps onto the working directory) the pods write
the files in place and nothing is streamed.

The test kubelet writes and serves pod logs as a node does (:mod:`tests.kubelet.cri_log`):
containerd's CRI format (a ``\\r`` before ``\\n`` dropped, 16 KiB partial lines) and the
kubelet's rotation, with a follow that stalls at a rotation it was waiting at. The rotation
tests make it rotate at a small size so that a few megabytes cross several files.
"""

from __future__ import annotations

import base64
import glob
import os
import re
import subprocess
import sys
import threading
import zlib
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from sbatch_k8s.runtime.log_stream.decoder import StreamDecoder, StreamSink
from sbatch_k8s.runtime.log_stream.frames import MARK, StreamEncoder
from tests.apiserver.support import wait_until
from tests.kube.harness import CONFIG, KubeSlurm, submitted_id
from tests.kubelet.cri_log import LogPolicy
from tests.local.harness import BIN, until_exists

#: What the job writes: no trailing newline, NUL and 0xff bytes, CRLF, a lone CR, a line that
#: looks like a record, a 1 MB line, and lines longer than a plain line may be.
STDOUT_BYTES = (b"plain line\n" + MARK + b"end 0=3\n" + b"\x00\x01\xff\xfe binary\r\n"
                + b"x" * 20000 + b"\n" + b"caf\xc3\xa9 \xe9t\xe9\n" + b"windows\r\nline\r\n"
                + b"lone\rcarriage return\n" + b"\r\n" + b"z" * 1_000_000 + b"\r\n"
                + b"no newline at the end")
STDERR_BYTES = b"to the error file\n\xff\x00 and no newline"
CHDIR = ("slurmstepd: error: couldn't chdir to `{0}': No such file or directory: going to "
         "/tmp instead\n")


def _hiding_kubelet(cluster: Any, policy: LogPolicy = LogPolicy()) -> Iterator[Any]:
    """A test kubelet whose own files are outside ``/tmp`` (pods with their own ``/tmp``
    then still get their volumes), rotating logs by ``policy``."""
    import shutil
    import tempfile

    from tests.kubelet import TestKubelet

    root = tempfile.mkdtemp(prefix="sbatch-k8s-kubelet-", dir="/var/tmp")
    try:
        with TestKubelet(cluster.kubeconfig, nodes=1, root_dir=root,
                         log_policy=policy) as running:
            yield running
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def hiding(cluster: Any) -> Iterator[Any]:
    """A hiding kubelet with a kubelet's default rotation (10 Mi, 5 files, every 10 s)."""
    yield from _hiding_kubelet(cluster)


@pytest.fixture
def rotating(cluster: Any) -> Iterator[Any]:
    """A hiding kubelet that rotates at 256 KiB, keeps 5 files, looks every 2 s."""
    yield from _hiding_kubelet(cluster, LogPolicy(max_size=256 << 10, max_files=5,
                                                  monitor_s=2.0))


@pytest.fixture
def shredding(cluster: Any) -> Iterator[Any]:
    """A hiding kubelet that rotates at 64 KiB every half second and keeps only the newest
    rotated file: what nobody read in time is gone."""
    yield from _hiding_kubelet(cluster, LogPolicy(max_size=64 << 10, max_files=2,
                                                  monitor_s=0.5))


def _writer(data: bytes, fd: int) -> str:
    """A shell line writing ``data`` to ``fd`` (1 or 2) exactly."""
    encoded = base64.b64encode(zlib.compress(data, 9)).decode()
    stream = "stdout" if fd == 1 else "stderr"
    return (f"python3 -c \"import base64,sys,zlib; s=sys.{stream}.buffer; "
            f"s.write(zlib.decompress(base64.b64decode('{encoded}'))); s.flush()\"")


def _unshared_script(extra: str = "") -> str:
    return ("#!/bin/sh\n#SBATCH --container-readonly -e err-%j.txt\n"
            f"{_writer(STDOUT_BYTES, 1)}\n{_writer(STDERR_BYTES, 2)}\n{extra}")


# -- the stream itself -----------------------------------------------------------------------

class Collect(StreamSink):
    """Checks every placed byte against the true files; keeps what arrived."""

    def __init__(self, truth: Dict[int, bytes]) -> None:
        self.truth = truth
        self.files: Dict[int, bytearray] = {}
        self.messages: List[bytes] = []

    def write(self, key: int, offset: int, data: bytes) -> None:
        assert self.truth[key][offset:offset + len(data)] == data, (key, offset)
        buffer = self.files.setdefault(key, bytearray())
        if offset <= len(buffer):
            buffer[offset:offset + len(data)] = data

    def message(self, line: bytes) -> None:
        self.messages.append(line)


def _stream(chunks: List[bytes]) -> bytes:
    encoder = StreamEncoder()
    out = encoder.start() + encoder.declare(0, False, "/w/out") + encoder.declare(1, False,
                                                                                 "/w/err")
    for index, chunk in enumerate(chunks):
        out += encoder.feed(index % 2, chunk)
        out += encoder.mark() if index % 3 == 0 else b""
    return out + encoder.end()


def test_a_stream_rebuilds_the_files_from_any_reconnect_and_after_rotation() -> None:
    chunks = [b"a\nb", b"err\x00", STDOUT_BYTES, STDERR_BYTES, b"\nlast\n", b"e",
              b"more\n" * 10]
    log = b"runtime line before the stream\n" + _stream(chunks) + b"after the end\n"
    truth = {0: b"".join(chunks[0::2]), 1: b"".join(chunks[1::2])}
    lines = log.splitlines(keepends=True)
    for cut in range(1, len(lines)):
        sink = Collect(truth)
        decoder = StreamDecoder(sink)
        decoder.connect()                       # a connection that breaks mid-line
        decoder.feed(b"".join(lines[:cut]) + lines[cut][:3])
        decoder.disconnected()
        decoder.connect()                       # served again from the start
        decoder.feed(log)
        assert {k: bytes(v) for k, v in sink.files.items()} == truth, cut
        assert sink.messages[0] == b"runtime line before the stream\n"
        assert sink.messages[1:] in ([], [b"after the end\n"])
        # the head rotated away while disconnected: what is placed is placed right, and
        # the end of the files arrives
        rotated = Collect(truth)
        decoder = StreamDecoder(rotated)
        decoder.connect()
        decoder.feed(b"".join(lines[:3]))
        decoder.disconnected()
        decoder.connect()
        end = next(i for i, line in enumerate(lines) if line.startswith(MARK + b"end"))
        decoder.feed(b"".join(lines[min(max(cut, 3), end):]))
        assert decoder.complete and decoder.sizes == {0: len(truth[0]), 1: len(truth[1])}


# -- end to end ------------------------------------------------------------------------------

@pytest.mark.unshared
def test_sbatch_wait_writes_unshared_files_byte_exact(kube: KubeSlurm, hiding: Any) -> None:
    kube.script("bytes.sh", _unshared_script())
    done = kube.run("sbatch", "--wait", "bytes.sh", timeout=180)
    assert done.returncode == 0, done.stderr
    job_id = submitted_id(done.stdout)
    assert "node 0 copies its output files into its pod log" in done.stderr
    assert (kube.work / f"slurm-{job_id}.out").read_bytes() == STDOUT_BYTES
    chdir = CHDIR.format(kube.work).encode()
    assert (kube.work / f"err-{job_id}.txt").read_bytes() == chdir * 2 + STDERR_BYTES
    assert f"warning: job {job_id}:" not in done.stderr      # nothing lost or incomplete


@pytest.mark.unshared
def test_sbatch_wait_reads_a_node0_pod_the_api_server_did_not_list_in_time(
        kube: KubeSlurm, cluster: Any, hiding: Any) -> None:
    """The job's pods cannot be listed by job (503, as an API server under load) while it
    runs and for 3 s after its end: sbatch --wait, which never saw node 0's container
    running, asks again and writes the files whole instead of calling the pod gone."""
    if getattr(cluster, "faults", None) is None:
        pytest.skip("needs the emulated API server's faults")
    unlisted = cluster.faults.add(method="GET", path="/pods$", status=503, times=None,
                                  query=r"labelSelector=sbatch-k8s\.io/job-id=\d+")
    kube.script("bytes.sh", _unshared_script())
    waiting = kube.start("sbatch", "--wait", "bytes.sh")
    assert waiting.stdout is not None
    job_id = submitted_id(waiting.stdout.readline())
    wait_until(lambda: kube.run("squeue", "-h", "-t", "all", "-o", "%i %T").stdout.count(
        f"{job_id} COMPLETED") == 1, 120, "the job's end")
    threading.Timer(3.0, cluster.faults.clear).start()
    _, stderr = waiting.communicate(timeout=120)
    assert unlisted.hits > 0
    assert waiting.returncode == 0, stderr
    assert (kube.work / f"slurm-{job_id}.out").read_bytes() == STDOUT_BYTES
    assert f"warning: job {job_id}:" not in stderr, stderr


def _sattach(kube: KubeSlurm, *args: str) -> "subprocess.Popen[bytes]":
    return subprocess.Popen([sys.executable, str(BIN / "sattach"), *args], cwd=kube.work,
                            env=kube.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


class Reader:
    """A background reader of one pipe."""

    def __init__(self, pipe: Any) -> None:
        self.data = b""
        self._thread = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self._thread.start()

    def _read(self, pipe: Any) -> None:
        for chunk in iter(lambda: pipe.read1(65536), b""):
            self.data += chunk

    def join(self) -> bytes:
        self._thread.join(60)
        return self.data


def _running(kube: KubeSlurm, job_id: int) -> bool:
    return "R" in kube.run("squeue", "-h", "-j", str(job_id), "-o", "%t").stdout


@pytest.mark.unshared
@pytest.mark.test_kubelet_only
def test_sattach_follows_a_running_job_across_a_broken_connection(
        kube: KubeSlurm, hiding: Any) -> None:
    # the job waits between its halves until the test has seen the first one and broken
    # the log connections: scancel -b -s USR1 (the batch shell traps it) lets it go on
    kube.script("halves.sh", _unshared_script(
        "echo; echo first half\n"
        "trap 'go=1' USR1\ngo=0\nwhile [ $go = 0 ]; do sleep 0.2; done\n"
        "echo second half\n"))
    job_id = submitted_id(kube.run("sbatch", "halves.sh").stdout)
    wait_until(lambda: _running(kube, job_id), 120, f"job {job_id} running")
    attached = _sattach(kube, f"{job_id}.0")
    out, err = Reader(attached.stdout), Reader(attached.stderr)
    wait_until(lambda: b"first half\n" in out.data, 120, f"first half; got {out.data!r}")
    waiting = _sattach(kube, "--k8s-output", str(job_id))
    assert hiding.log_server.drop_streams() >= 1
    signalled = kube.run("scancel", "-b", "-s", "USR1", str(job_id))
    assert signalled.returncode == 0, signalled.stderr
    assert attached.wait(120) == 0, err.join()
    expected = STDOUT_BYTES + b"\nfirst half\nsecond half\n"
    assert out.join() == expected
    chdir = CHDIR.format(kube.work).encode()
    assert err.join() == chdir * 2 + STDERR_BYTES
    assert waiting.wait(120) == 0, waiting.stderr.read() if waiting.stderr else ""
    assert (kube.work / f"slurm-{job_id}.out").read_bytes() == expected
    # ended, its pods still there: sattach prints it all; --k8s-output writes it again
    (kube.work / f"slurm-{job_id}.out").unlink()
    again = subprocess.run([sys.executable, str(BIN / "sattach"), f"{job_id}.batch"],
                           cwd=kube.work, env=kube.env, capture_output=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert again.stdout == expected
    fetched = kube.run("sattach", "--k8s-output", str(job_id), timeout=120)
    assert fetched.returncode == 0, fetched.stderr
    assert f"sattach: wrote {kube.work}/slurm-{job_id}.out" in fetched.stderr
    assert (kube.work / f"slurm-{job_id}.out").read_bytes() == expected


def test_sattach_refuses_as_slurm_does(kube: KubeSlurm, kubelet: Any) -> None:
    unknown = kube.run("sattach", "99999.0")
    assert (unknown.returncode, unknown.stderr) == (
        1, "sattach: error: Could not get job step info: Invalid job id specified\n")
    no_step = kube.run("sattach", "12")
    assert (no_step.returncode, no_step.stderr) == (
        1, "sattach: error: Failed to parse stepid from command line options\n"
           "Usage: sattach [options] <jobid.stepid>\n")
    held = submitted_id(kube.run("sbatch", "--hold", "--wrap", "true").stdout)
    pending = kube.run("sattach", f"{held}.0")
    assert (pending.returncode, pending.stderr) == (
        1, "sattach: error: Could not get job step info: Job is pending execution\n")


@pytest.fixture
def shared(cluster: Any, tmp_path: Path) -> Iterator[KubeSlurm]:
    """Commands whose partition mounts a PersistentVolumeClaim at the working directory, and
    a test kubelet that maps that claim onto the working directory itself."""
    from tests.kubelet import TestKubelet

    config = CONFIG + (f'[[partitions.debug.volumes]]\nname = "home"\n'
                       f'pvc = "home"\nmount_path = "{tmp_path}/work"\n')
    slurm = KubeSlurm(tmp_path, cluster.kubeconfig, config=config)
    volumes = tmp_path / "volumes"
    (volumes / "pvc" / slurm.namespace).mkdir(parents=True)
    os.symlink(slurm.work, volumes / "pvc" / slurm.namespace / "home")
    if hasattr(cluster, "provide_claim"):      # a real scheduler wants the claim bound
        cluster.provide_claim("home", host_path=str(slurm.work))
    with TestKubelet(cluster.kubeconfig, nodes=1, volume_dir=str(volumes)):
        yield slurm
    slurm.cleanup()


def test_shared_volume_files_are_written_by_the_pods(shared: KubeSlurm) -> None:
    shared.script("plain.sh", "#!/bin/sh\necho hello from the pod\n")
    done = shared.run("sbatch", "--wait", "plain.sh", timeout=180)
    assert done.returncode == 0, done.stderr
    assert "pod log" not in done.stderr
    job_id = submitted_id(done.stdout)
    assert shared.read(f"slurm-{job_id}.out") == "hello from the pod\n"
    printed = shared.run("sattach", f"{job_id}.batch")
    assert (printed.returncode, printed.stdout) == (0, "hello from the pod\n")
    fetched = shared.run("sattach", "--k8s-output", str(job_id))
    assert fetched.returncode == 0
    assert "already in place" in fetched.stderr


# -- log rotation (issue 15, item 2) -----------------------------------------------------------

def _numbered(first: int, last: int) -> bytes:
    """Lines ``first`` to ``last - 1`` of 100 bytes each, as :func:`_numbered_writer` writes."""
    return b"".join(b"%08d %s\n" % (i, b"r" * 90) for i in range(first, last))


def _numbered_writer(first: int, last: int) -> str:
    return (f"python3 -c \"import sys; s=sys.stdout.buffer; "
            f"[s.write(b'%08d %s\\n' % (i, b'r' * 90)) for i in range({first}, {last})]; "
            f"s.flush()\"")


AWAIT_USR1 = "trap 'go=1' USR1\ngo=0\nwhile [ $go = 0 ]; do sleep 0.2; done\n"
#: The job's stdout file holds only what it writes (its stderr, slurmstepd's lines, apart).
ROTATION_HEADER = "#!/bin/sh\n#SBATCH --container-readonly -e err-%j.txt\n"


def test_sbatch_wait_reads_past_a_rotation_its_follow_stalled_at(kube: KubeSlurm,
                                                                 rotating: Any) -> None:
    # 1.2 MB, then quiet while the kubelet rotates (the follow, having read it all, waits
    # on the renamed file and gets nothing more), then the rest in the newest file
    kube.script("rotated.sh", f"{ROTATION_HEADER}"
                f"{_numbered_writer(0, 12000)}\nsleep 5\n{_numbered_writer(12000, 13000)}\n")
    done = kube.run("sbatch", "--wait", "rotated.sh", timeout=180)
    assert done.returncode == 0, done.stderr
    job_id = submitted_id(done.stdout)
    assert f"warning: job {job_id}:" not in done.stderr
    assert (kube.work / f"slurm-{job_id}.out").read_bytes() == _numbered(0, 13000)


def test_sattach_goes_on_after_a_rotation_while_the_job_runs(kube: KubeSlurm,
                                                             rotating: Any) -> None:
    kube.script("running.sh", f"{ROTATION_HEADER}"
                f"{_numbered_writer(0, 12000)}\nsleep 5\n{_numbered_writer(12000, 12100)}\n"
                f"{AWAIT_USR1}{_numbered_writer(12100, 12200)}\n")
    job_id = submitted_id(kube.run("sbatch", "running.sh").stdout)
    wait_until(lambda: _running(kube, job_id), 120, f"job {job_id} running")
    attached = _sattach(kube, f"{job_id}.0")
    out, err = Reader(attached.stdout), Reader(attached.stderr)
    # what the job wrote after the rotation comes while it runs: a stalled follow is left
    wait_until(lambda: out.data.endswith(_numbered(12099, 12100)), 90,
               f"the lines after the rotation; got {len(out.data)} bytes")
    signalled = kube.run("scancel", "-b", "-s", "USR1", str(job_id))
    assert signalled.returncode == 0, signalled.stderr
    assert attached.wait(120) == 0, err.join()
    assert out.join() == _numbered(0, 12200)


def _lost_bytes(stderr: str, job_id: int) -> int:
    found = re.search(rf"warning: job {job_id}: (\d+) bytes of its output files were lost",
                      stderr)
    assert found, stderr
    return int(found.group(1))


#: Room left below the rotation size before the job's last lines: they and what the runtime
#: writes until the job ends (``at`` records every 2 s, the ``end``) stay in the current file.
LAST_LINES_ROOM = 6 << 10



def _log_settled(kubelet: Any, namespace: str, pod: str, line: int, room: int = 0,
                 anchored: bool = False) -> bool:
    """Whether the pod's log has numbered ``line`` (in its current file or the rotated one)
    and the current file is ``room`` bytes below the rotation size: every rotation due has
    happened, and no other comes before the job writes more. ``anchored``: the current file
    also has an ``at`` record, which places the plain lines after it (a plain line first in
    a file may be the tail of one a rotation cut: a reader leaves it a hole)."""
    path = kubelet.log_path(namespace, pod)
    if path is None:
        return False
    try:
        current = Path(path).read_bytes()
    except OSError:
        return False
    found = b"%08d " % line in current
    for rotated in glob.glob(glob.escape(path) + ".*"):
        try:
            found = found or b"%08d " % line in Path(rotated).read_bytes()
        except OSError:                     # removed meanwhile: looked at again
            pass
    return (found and len(current) + room < kubelet.log_policy.max_size
            and (not anchored or MARK + b"at " in current))


@pytest.fixture
def go_dir() -> Iterator[Path]:
    """A directory for a job's go files that pods with a ``/tmp`` of their own see."""
    import shutil
    import tempfile

    made = tempfile.mkdtemp(prefix="sbatch-k8s-go-", dir="/var/tmp")
    try:
        yield Path(made)
    finally:
        shutil.rmtree(made, ignore_errors=True)


def test_bytes_rotated_away_unread_are_counted_and_fail_sbatch_wait(
        kube: KubeSlurm, cluster: Any, shredding: Any, go_dir: Path) -> None:
    if getattr(cluster, "faults", None) is None:
        pytest.skip("blocks the log with the emulated API server's faults")
    from sbatch_k8s.backends.kubernetes.api.kinds import POD

    # nobody can read node 0's log while the job writes 900 KB: the kubelet keeps only the
    # newest rotated file and serves only the current one. The job writes it in three parts,
    # each once the log has all of the one before and the kubelet has rotated it, then its
    # last lines, which stay in the current file after an ``at`` record that places them.
    go = go_dir
    kube.script("shredded.sh", f"{ROTATION_HEADER}"
                f"{_numbered_writer(0, 3000)}\n{until_exists(go / '1')}\n"
                f"{_numbered_writer(3000, 6000)}\n{until_exists(go / '2')}\n"
                f"{_numbered_writer(6000, 9000)}\n{until_exists(go / '3')}\n"
                f"{_numbered_writer(9000, 9010)}\n{AWAIT_USR1}")
    blocked = cluster.faults.add(method="GET", path="/log$", status=503, times=None)
    waiting = kube.start("sbatch", "--wait", "shredded.sh")
    try:
        assert waiting.stdout is not None
        job_id = submitted_id(waiting.stdout.readline())

        def node0() -> str:
            pods = kube.objects(POD, f"sbatch-k8s.io/job-id={job_id}")
            return pods[0]["metadata"]["name"] if pods else ""

        pod = wait_until(node0, 120, f"job {job_id}'s pod")

        def node0_log() -> str:
            return shredding.logs(kube.namespace, pod)

        for part, line in ((1, 2999), (2, 5999)):
            wait_until(lambda: _log_settled(shredding, kube.namespace, pod, line), 120,
                       f"part {part} of the output in the log, rotated")
            (go / str(part)).touch()
        wait_until(lambda: _log_settled(shredding, kube.namespace, pod, 8999, LAST_LINES_ROOM,
                                        anchored=True), 120,
                   "part 3 of the output in the log, rotated, the stream's place said again")
        (go / "3").touch()
        wait_until(lambda: "00009009 " in node0_log(), 120, "the job's last lines")
        assert blocked.hits > 0
        cluster.faults.clear()
        assert kube.run("scancel", "-b", "-s", "USR1", str(job_id)).returncode == 0
    finally:
        for part in "123":
            (go / part).touch()
        cluster.faults.clear()
    _, stderr = waiting.communicate(timeout=180)
    assert waiting.returncode == 1, stderr
    lost = _lost_bytes(stderr, job_id)
    rebuilt = (kube.work / f"slurm-{job_id}.out").read_bytes()
    errors = (kube.work / f"err-{job_id}.txt").read_bytes()   # slurmstepd's lines: early
    truth = _numbered(0, 9010)
    assert len(rebuilt) == len(truth) and rebuilt.count(0) > 500_000
    assert lost == rebuilt.count(0) + errors.count(0)
    assert all(a in (0, b) for a, b in zip(rebuilt, truth))       # holes, never wrong bytes
    assert rebuilt.endswith(_numbered(9000, 9010))
    # sattach --k8s-output says the same of what is left in the pod's log
    fetched = kube.run("sattach", "--k8s-output", str(job_id), timeout=120)
    assert fetched.returncode == 1
    assert "bytes of the output were lost" in fetched.stderr
