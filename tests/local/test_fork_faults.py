"""A served command's client always ends (issue 15, item 11).

The fork server (:mod:`sbatch_k8s.runtime.warm.fork_server`) runs the user commands (the command
server) and ``srun`` inside pods (node 0's step server). Its forked child can die without
reporting its exit: ``kill -9``, the OOM killer, a signal the client forwarded. These tests run
a real server process (a minimal subclass whose command sleeps, exits or ignores SIGTERM, as
its arguments say) and real clients, and fault them: the client must end with the command's
status, die by the signal it forwarded, or print one error line and exit 1 — never wait for
ever. The last test does it with ``sbatch --wait`` through the real command server.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Iterator, List

import pytest

from tests.kube.test_watch_cache import _server_pids
from tests.local.harness import REPO, LocalSlurm

#: A fork server whose command, ``probe``, does what its arguments say: ``exit N``, ``sleep``
#: (until killed, printing ``ready``), ``stubborn`` (as sleep, but ignores SIGTERM).
SERVER = """
import os, signal, sys, time
sys.path.insert(0, {root!r})
from sbatch_k8s.runtime.warm.fork_server import ForkServer, listen

class Probe(ForkServer):
    poll_s = 30.0          # ends must be reported at once, not at the next poll

    def run_command(self, command, argv):
        if argv[0] == "exit":
            return int(argv[1])
        if argv[0] == "stubborn":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("ready", os.getpid(), flush=True)
        while True:
            time.sleep(1)

Probe(listen(sys.argv[1])).serve()
"""
CLIENT = """
import sys
sys.path.insert(0, {root!r})
from sbatch_k8s.runtime.warm.fork_client import run_on_server
code = run_on_server(sys.argv[1], "probe", sys.argv[2:])
sys.exit(99 if code is None else code)
"""
#: The longest a client may take to end once its command's process is gone (generous: a
#: loaded machine is slow, a client that waits for ever never ends).
END_S = 60.0


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """A running probe server; its socket's path."""
    path = str(tmp_path / "probe.sock")
    process = subprocess.Popen([sys.executable, "-c", SERVER.format(root=str(REPO)), path])
    deadline = time.monotonic() + 60
    while not os.path.exists(path):
        assert time.monotonic() < deadline and process.poll() is None, "the server started"
        time.sleep(0.05)
    yield path
    os.kill(process.pid, signal.SIGCONT)
    process.kill()
    process.wait(10)


def _client(path: str, *argv: str) -> "subprocess.Popen[str]":
    return subprocess.Popen([sys.executable, "-c", CLIENT.format(root=str(REPO)), path, *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _served_pid(client: "subprocess.Popen[str]") -> int:
    """The pid of the served command (it prints ``ready <pid>`` on the client's stdout),
    once the client forwards signals: it sets its handlers after the server's go-ahead, as
    the command starts, so a loaded machine may show ``ready`` first."""
    assert client.stdout is not None
    words = client.stdout.readline().split()
    assert words[:1] == ["ready"], words
    _until(lambda: client.poll() is not None or _catches(client.pid, signal.SIGTERM),
           "the client handles SIGTERM")
    return int(words[1])


def _catches(pid: int, signum: int) -> bool:
    """Whether ``pid`` has a handler for ``signum`` (its SigCgt mask in /proc)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            caught = next(line for line in f if line.startswith("SigCgt:"))
    except (OSError, StopIteration):
        return False
    return bool(int(caught.split()[1], 16) & (1 << (signum - 1)))


def _ended(client: "subprocess.Popen[str]") -> List[str]:
    """The client's exit status and stderr lines, once it has ended (within END_S)."""
    _, err = client.communicate(timeout=END_S)
    return [str(client.returncode)] + err.splitlines()


def test_an_exit_code_comes_back(server: str) -> None:
    assert _ended(_client(server, "exit", "7")) == ["7"]


def test_a_command_killed_behind_the_clients_back_is_an_error(server: str) -> None:
    client = _client(server, "sleep")
    os.kill(_served_pid(client), signal.SIGKILL)
    assert _ended(client) == ["1", "probe: error: the command's process on the command server "
                                   "was killed by signal 9 (Killed)"]


def test_a_forwarded_signal_that_kills_the_command_kills_the_client(server: str) -> None:
    client = _client(server, "sleep")
    _served_pid(client)
    client.send_signal(signal.SIGTERM)
    assert _ended(client) == [str(-signal.SIGTERM)]


def test_sigterm_to_a_command_that_died_meanwhile_still_ends_the_client(server: str) -> None:
    """The second SIGTERM reaches the client after its command died and before the client
    has read of that end: the client is stopped meanwhile (else a loaded machine may let the
    server's word come first, and the SIGTERM kill a client already exiting). On SIGCONT it
    takes the SIGTERM before it reads on."""
    client = _client(server, "stubborn")
    pid = _served_pid(client)
    client.send_signal(signal.SIGTERM)      # forwarded, ignored there
    time.sleep(0.5)
    assert client.poll() is None
    client.send_signal(signal.SIGSTOP)
    _until(lambda: _state(client.pid) == "T", "the client stopped")
    os.kill(pid, signal.SIGKILL)
    _until(lambda: not os.path.exists(f"/proc/{pid}"), "the command dead and reaped")
    client.send_signal(signal.SIGTERM)      # forwarded to a dead process
    client.send_signal(signal.SIGCONT)      # (forwarded too: no effect there)
    assert _ended(client) == ["1", "probe: error: the command's process on the command server "
                                   "was killed by signal 9 (Killed)"]


def test_a_server_that_cannot_report_does_not_keep_the_client(server: str) -> None:
    client = _client(server, "sleep")
    pid = _served_pid(client)
    server_pid = _parent(pid)
    os.kill(server_pid, signal.SIGSTOP)     # stopped: reaps nothing, reports nothing
    try:
        os.kill(pid, signal.SIGKILL)
        assert _ended(client) == ["1", "probe: error: the command server ended without the "
                                       "exit status of this command (its process is gone)"]
    finally:
        os.kill(server_pid, signal.SIGCONT)


def _parent(pid: int) -> int:
    """The parent of ``pid`` (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except OSError:
        return 0


def _state(pid: int) -> str:
    """The state letter of ``pid`` (``T``: stopped; "" when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return ""


def _until(predicate: Callable[[], bool], what: str, timeout: float = 60) -> None:
    """Poll ``predicate`` until true; AssertionError naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"not within {timeout} s: {what}"
        time.sleep(0.02)


def _children(pid: int) -> List[int]:
    return [int(e) for e in os.listdir("/proc") if e.isdigit() and _parent(int(e)) == pid]


def test_sbatch_wait_ends_when_its_served_process_is_killed(slurm: LocalSlurm) -> None:
    """``sbatch --wait``'s process on the command server, killed: the client says so in one
    line and exits 1 (it waited for the job before)."""
    slurm.run("squeue")                       # starts the command server
    slurm.wait_for(lambda: (slurm.state / "server.sock").exists(), timeout=60)
    # One server process once it listens (a child it forked shows its command line until
    # it is gone, however long a loaded machine takes).
    slurm.wait_for(lambda: len(_server_pids(slurm)) == 1, timeout=60)  # type: ignore[arg-type]
    server_pid, = _server_pids(slurm)   # type: ignore[arg-type]  # it reads .state only
    before = set(_children(server_pid))
    waiting = slurm.start("sbatch", "--wait", "--wrap", "sleep 300")
    assert waiting.stdout is not None
    submitted = waiting.stdout.readline()
    assert submitted.startswith("Submitted batch job "), submitted

    def served() -> List[int]:
        return [pid for pid in _children(server_pid) if pid not in before]

    slurm.wait_for(lambda: len(served()) == 1, timeout=60)
    killed, = served()
    os.kill(killed, signal.SIGKILL)
    _, err = waiting.communicate(timeout=END_S)
    assert (waiting.returncode, err) == (1, "sbatch: error: the command's process on the "
                                            "command server was killed by signal 9 (Killed)\n")
    assert slurm.run("scancel", submitted.split()[-1]).returncode == 0
