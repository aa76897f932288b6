"""One container as a local process in its own mount and UTS namespace.

:class:`ContainerProcess` starts ``unshare --mount --uts --propagation private`` around
:mod:`tests.kubelet.podinit` (which mounts, sets the hostname and execs the command), in a new
session so that the container's process group can be signalled as a whole, with stdout and
stderr appended to the container's log file. It reports a start error (exit 128 before the
exec) apart from the command's own exit, and stops the container as a kubelet does: SIGTERM
to the process group, a grace period, then SIGKILL to the group and every descendant.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from typing import Dict, List, NamedTuple, Optional, Set, Tuple

from tests.kubelet.podinit import RUNNING

PODINIT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "podinit.py")
START_TIMEOUT_S = 30.0


class Mount(NamedTuple):
    """A bind mount inside the container: ``source`` on this machine at ``target``."""

    source: str
    target: str
    read_only: bool


class ContainerSpec(NamedTuple):
    """Everything needed to start one container process."""

    name: str
    argv: List[str]
    env: Dict[str, str]
    hostname: str
    working_dir: str
    mounts: List[Mount]
    uid: Optional[int]
    gid: Optional[int]
    groups: List[int]
    log_path: str
    spec_path: str              # where the JSON spec for podinit is written
    no_new_privileges: bool = False         # allowPrivilegeEscalation: false
    drop_capabilities: Tuple[str, ...] = ()  # capabilities.drop (names, or ALL)
    memory_cgroup: Optional[str] = None      # the container's own (tests.kubelet.memory_cgroups)


def exit_code_of(returncode: int) -> int:
    """A container exit code: killed by signal N is 128 + N, as runtimes report it."""
    return 128 - returncode if returncode < 0 else returncode


def _mount_namespace(pid: int) -> Optional[int]:
    """The inode of ``pid``'s mount namespace, None when the process is gone."""
    try:
        return os.stat(f"/proc/{pid}/ns/mnt").st_ino
    except OSError:
        return None


def descendants(root_pid: int) -> Set[int]:
    """Every live process below ``root_pid`` (from /proc), including ones that left the
    process group with ``setsid``."""
    children: Dict[int, List[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found: Set[int] = set()
    pending = [root_pid]
    while pending:
        for child in children.get(pending.pop(), []):
            if child not in found:
                found.add(child)
                pending.append(child)
    return found


def _kill_all(pids: Set[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


class ContainerProcess:
    """A started container: its process, start outcome and exit."""

    def __init__(self, spec: ContainerSpec) -> None:
        self.spec = spec
        self.start_error: Optional[str] = None
        self.started_at = time.time()
        self._process = self._start()
        #: The container's own mount namespace, once podinit has run in it: every process
        #: in it belongs to the container, wherever it moved in the process tree. The open
        #: descriptor keeps the namespace's inode from being reused by a later container
        #: until the container is reaped.
        self._mount_ns_fd: Optional[int] = None
        if self.start_error is None:
            try:
                self._mount_ns_fd = os.open(f"/proc/{self._process.pid}/ns/mnt", os.O_RDONLY)
            except OSError:
                pass

    def _start(self) -> "subprocess.Popen[bytes]":
        spec = self.spec
        with open(spec.spec_path, "w") as f:
            json.dump({
                "parent_pid": os.getpid(), "hostname": spec.hostname,
                "mounts": [m._asdict() for m in spec.mounts],
                "working_dir": spec.working_dir, "uid": spec.uid, "gid": spec.gid,
                "groups": spec.groups, "argv": spec.argv, "env": spec.env,
                "no_new_privileges": spec.no_new_privileges,
                "drop_capabilities": list(spec.drop_capabilities),
                "memory_cgroup": spec.memory_cgroup,
            }, f)
        read_end, write_end = os.pipe()
        command = ["unshare", "--mount", "--uts", "--propagation", "private",
                   sys.executable, "-I", "-S", PODINIT, spec.spec_path, str(write_end)]
        try:
            with open(spec.log_path, "ab") as log:
                process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log,
                                           stderr=subprocess.STDOUT, pass_fds=(write_end,),
                                           start_new_session=True)
        finally:
            os.close(write_end)
        try:
            self.start_error = self._read_start_status(read_end, process)
        finally:
            os.close(read_end)
        self.started_at = time.time()
        return process

    @staticmethod
    def _read_start_status(read_end: int, process: "subprocess.Popen[bytes]") -> Optional[str]:
        """None when the exec happened (podinit's :data:`~tests.kubelet.podinit.RUNNING`
        alone, then the pipe closed); the error text otherwise."""
        deadline = time.monotonic() + START_TIMEOUT_S
        chunks: List[bytes] = []
        while time.monotonic() < deadline:
            ready, _, _ = select.select([read_end], [], [], 0.5)
            if not ready:
                continue
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        else:
            process.kill()
            return f"the container did not start within {START_TIMEOUT_S:.0f} s"
        text = b"".join(chunks).decode(errors="replace")  # RUNNING, then any error
        if not text:  # podinit never ran: unshare itself failed; its message is in the log
            try:
                code = process.wait(START_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                code = None
            return f"unshare failed with exit code {code}"
        return text[len(RUNNING):] or None

    @property
    def pid(self) -> int:
        """The container's main process (also its process group id)."""
        return self._process.pid

    def poll(self) -> Optional[int]:
        """The container's exit code once it has exited, else None."""
        code = self._process.poll()
        return None if code is None else exit_code_of(code)

    def wait(self, timeout_s: float) -> Optional[int]:
        """Wait at most ``timeout_s`` for the exit; the exit code or None."""
        try:
            return exit_code_of(self._process.wait(timeout_s))
        except subprocess.TimeoutExpired:
            return None

    def reap_leftovers(self) -> None:
        """Kill what an exited container left running (a runtime kills the whole container
        when its main process ends): its process group and every process in its mount
        namespace, such as a daemonised child reparented to init."""
        self.signal_group(signal.SIGKILL)
        self._kill_members()

    def members(self) -> Set[int]:
        """Live processes in the container's mount namespace (none once it was reaped, or
        when it never started in one of its own)."""
        if self._mount_ns_fd is None:
            return set()
        namespace = os.fstat(self._mount_ns_fd).st_ino
        if namespace == _mount_namespace(os.getpid()):
            return set()
        return {int(entry) for entry in os.listdir("/proc")
                if entry.isdigit() and _mount_namespace(int(entry)) == namespace}

    def _kill_members(self) -> None:
        """SIGKILL the namespace's processes (again, for children forked meanwhile), then let
        the namespace go."""
        for _ in range(5):
            members = self.members()
            if not members:
                break
            _kill_all(members)
            time.sleep(0.05)
        if self._mount_ns_fd is not None:
            os.close(self._mount_ns_fd)
            self._mount_ns_fd = None

    def signal_group(self, signum: int) -> None:
        """Send ``signum`` to the container's process group (if it still exists)."""
        try:
            os.killpg(self._process.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass

    def kill(self) -> None:
        """SIGKILL the process group and every descendant, then reap the main process."""
        stragglers = descendants(self._process.pid)
        self.signal_group(signal.SIGKILL)
        _kill_all(stragglers)
        self.wait(5.0)
        self._kill_members()

    def stop(self, grace_s: float) -> int:
        """SIGTERM, wait up to ``grace_s``, then SIGKILL; the exit code."""
        if self.poll() is None:
            self.signal_group(signal.SIGTERM)
            if self.wait(max(grace_s, 0.0)) is None:
                self.kill()
        self.signal_group(signal.SIGKILL)     # what the main process left behind
        code = self.poll()
        return 137 if code is None else code
