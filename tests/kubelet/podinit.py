"""Inside a container's fresh mount and UTS namespace: set it up, then exec the command.

The test kubelet starts every container as
``unshare --mount --uts --propagation private python -I -S podinit.py SPEC.json FD``:
this script (standard library only, run by path so it needs no import path) joins the
container's memory cgroup when it has one, sets the hostname, bind-mounts the pod's volumes,
/etc/hosts, the termination-message file (and that cgroup) at their paths,
enters ``workingDir``, drops the capabilities the container drops (from the bounding set,
so that not even a root process regains them at the exec), takes the pod's user and groups,
sets no_new_privs for ``allowPrivilegeEscalation: false`` (setuid programs then gain
nothing) and execs ``command + args`` with the resolved environment. Not emulated: added
capabilities, seccomp and AppArmor profiles, a read-only root filesystem (there is no image
filesystem). Mounts are private to the namespace: nothing leaks to the machine and
nothing needs unmounting. (Mount points that do not exist are created on this machine, as
empty directories or files.)

On file descriptor ``FD`` (close-on-exec) this script first writes :data:`RUNNING` (so the
kubelet tells a failed ``unshare`` — nothing written — from a command that exec'd and already
ended), then, on a failure before the exec, the error, and the process exits 128 — what a
container runtime reports as ``StartError``; a successful exec closes it.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import pwd
import signal
import socket
import stat
import sys
from typing import Any, Dict, List

MS_RDONLY = 1
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
#: Linux capabilities by number (``capabilities.drop`` names them without ``CAP_``).
CAPABILITIES = (
    "CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID",
    "SETUID", "SETPCAP", "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN",
    "NET_RAW", "IPC_LOCK", "IPC_OWNER", "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE",
    "SYS_PACCT", "SYS_ADMIN", "SYS_BOOT", "SYS_NICE", "SYS_RESOURCE", "SYS_TIME",
    "SYS_TTY_CONFIG", "MKNOD", "LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP",
    "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG", "WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ",
    "PERFMON", "BPF", "CHECKPOINT_RESTORE")
START_ERROR_EXIT = 128
#: The first byte on the status descriptor: podinit runs (unshare worked).
RUNNING = b"."

_libc = ctypes.CDLL(None, use_errno=True)


class StartError(Exception):
    """The container cannot be started as specified."""


def die_with_parent(parent_pid: int) -> None:
    """Be killed when the kubelet that started us dies (again after every uid change)."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:
        os._exit(START_ERROR_EXIT)


def bind_mount(source: int, target: str, read_only: bool) -> None:
    """Bind the file or directory open as ``source`` (an ``O_PATH`` descriptor) at
    ``target``, creating the mount point like it (directory or file)."""
    if stat.S_ISDIR(os.fstat(source).st_mode):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.exists(target):
            open(target, "a").close()
    flags = MS_BIND | MS_REC
    origin = f"/proc/self/fd/{source}"
    if _libc.mount(origin.encode(), target.encode(), None, flags, None) != 0:
        error = ctypes.get_errno()
        raise StartError(f"mount {os.readlink(origin)} on {target}: {os.strerror(error)}")
    if read_only and _libc.mount(None, target.encode(), None,
                                 flags | MS_REMOUNT | MS_RDONLY, None) != 0:
        error = ctypes.get_errno()
        raise StartError(f"remount {target} read-only: {os.strerror(error)}")


def open_sources(mounts: List[Dict[str, Any]]) -> List[int]:
    """Every mount's source, opened before anything is mounted: a source under an earlier
    mount's target (this machine's /tmp/venv when the pod gets its own /tmp) is then still
    the machine's own, not what the mount put over it."""
    try:
        return [os.open(m["source"], os.O_PATH | os.O_CLOEXEC) for m in mounts]
    except OSError as error:
        raise StartError(f"mount source {error.filename}: {error.strerror}") from None


def enter_working_dir(path: str, mount_targets: List[str]) -> None:
    """``chdir`` to ``workingDir``; created when it lies in a volume, as a runtime creates it
    in the image (there is no image filesystem here to create it in otherwise)."""
    if not os.path.isdir(path):
        inside = any(path == t or path.startswith(t.rstrip("/") + "/") for t in mount_targets)
        if not inside:
            raise StartError(f"workingDir {path} does not exist on this machine and is not "
                             "in a volume (the test kubelet has no image filesystem)")
        os.makedirs(path, exist_ok=True)
    os.chdir(path)


def hand_stdio_to(uid: Any, gid: Any) -> None:
    """Give the container's stdin/stdout/stderr (the log file here; pipes from the shim on a
    node) to its user, as runc does before the user takes over, so that the process can open
    ``/dev/stdout`` again; ``/dev/null`` stays as it is."""
    if uid is None:
        return
    null = os.stat(os.devnull)
    for fd in (0, 1, 2):
        info = os.fstat(fd)
        if stat.S_ISCHR(info.st_mode) and info.st_rdev == null.st_rdev:
            continue
        os.fchown(fd, int(uid), -1 if gid is None else int(gid))


def _prctl(option: int, value: int, what: str) -> None:
    if _libc.prctl(option, value, 0, 0, 0) != 0:
        raise StartError(f"{what}: {os.strerror(ctypes.get_errno())}")


def drop_capabilities(names: List[str]) -> None:
    """Remove ``names`` (or every capability for ``ALL``) from the bounding set; unknown
    names are an error, as a runtime refuses them."""
    if not names:
        return
    with open("/proc/sys/kernel/cap_last_cap") as f:
        last = int(f.read())
    wanted = set(n.upper().replace("CAP_", "", 1) for n in names)
    unknown = wanted - set(CAPABILITIES) - {"ALL"}
    if unknown:
        raise StartError(f"unknown capability {sorted(unknown)[0]!r}")
    for number, name in enumerate(CAPABILITIES[:last + 1]):
        if "ALL" in wanted or name in wanted:
            _prctl(PR_CAPBSET_DROP, number, f"drop capability {name}")


def become(uid: Any, gid: Any, groups: List[int]) -> None:
    """Take the pod's user, group and supplementary groups (``securityContext``)."""
    if uid is None and gid is None and not groups:
        return
    if gid is None:
        try:
            gid = pwd.getpwuid(int(uid)).pw_gid if uid is not None else 0
        except KeyError:
            gid = 0
    os.setgroups(sorted(set(int(g) for g in groups)))
    os.setgid(int(gid))
    if uid is not None:
        os.setuid(int(uid))


def join_cgroup(path: str) -> None:
    """Move this process (and so everything it execs and forks) into the container's memory
    cgroup (:mod:`tests.kubelet.memory_cgroups`)."""
    try:
        with open(os.path.join(path, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    except OSError as e:
        raise StartError(f"join memory cgroup {path}: {e.strerror}") from None


def start(spec: Dict[str, Any]) -> None:
    """Set the namespace up and exec the container's command (returns only by raising)."""
    die_with_parent(spec["parent_pid"])
    if spec.get("memory_cgroup"):
        join_cgroup(spec["memory_cgroup"])
    socket.sethostname(spec["hostname"])
    mounts = sorted(spec["mounts"], key=lambda m: m["target"].rstrip("/").count("/"))
    for mount, source in zip(mounts, open_sources(mounts)):
        bind_mount(source, mount["target"], mount["read_only"])
        os.close(source)
    enter_working_dir(spec["working_dir"], [m["target"] for m in mounts])
    hand_stdio_to(spec.get("uid"), spec.get("gid"))
    drop_capabilities(spec.get("drop_capabilities") or [])
    become(spec.get("uid"), spec.get("gid"), spec.get("groups") or [])
    if spec.get("no_new_privileges"):
        _prctl(PR_SET_NO_NEW_PRIVS, 1, "set no_new_privs")
    die_with_parent(spec["parent_pid"])
    argv = spec["argv"]
    try:
        os.execvpe(argv[0], argv, spec["env"])
    except OSError as e:
        why = "executable file not found in $PATH" if e.errno == errno.ENOENT \
            and "/" not in argv[0] else e.strerror
        raise StartError(f'exec: "{argv[0]}": {why}') from e


def main(argv: List[str]) -> None:
    """``podinit.py SPEC.json FD``."""
    with open(argv[1]) as f:
        spec = json.load(f)
    status_fd = int(argv[2])
    os.set_inheritable(status_fd, False)
    os.write(status_fd, RUNNING)
    try:
        start(spec)
    except (StartError, OSError) as e:
        os.write(status_fd, str(e).encode() or b"start error")
        os._exit(START_ERROR_EXIT)


if __name__ == "__main__":
    main(sys.argv)
