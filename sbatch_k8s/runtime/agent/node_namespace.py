"""A local node's own hostname and node directory: its own UTS and mount namespace.

A pod has its own hostname and its own ``/tmp/sbatch-k8s``; a local node process shares the
machine's unless it makes them its own. At its start (before it starts any process, while it
has one thread) a local node unshares its UTS and mount namespaces — as root directly, else
inside a new user namespace that maps only its own uid and gid to themselves, so its
processes keep who they are — then

- sets the hostname to its node name (``127.0.0.2``…, ``SLURMD_NODENAME``), which resolves to
  the node's address as it is one (``hostname``, ``$(hostname)`` as a rendezvous endpoint);
- makes every mount private (nothing it mounts reaches the machine, and it needs no unmount)
  and binds its spool directory over :data:`NODE_DIR`, the path a pod's spool has, where
  :mod:`sbatch_k8s.runtime.agent.node_file` finds the job's node file by job id alone.

Where neither root nor unprivileged user namespaces are available, :func:`enter` returns the
reason and the node goes on sharing the machine's hostname and ``/tmp/sbatch-k8s`` (the README
says what that costs). Linux only; standard library (``ctypes``, ``socket.sethostname``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import socket
from typing import Callable, Optional

from sbatch_k8s.runtime.agent.node_file import NODE_DIR

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWUSER = 0x10000000
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18


class NamespaceError(Exception):
    """A namespace step failed; ``str()`` says which and why."""


def _libc() -> "ctypes.CDLL":
    return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)


def _call(result: int, what: str) -> None:
    if result != 0:
        raise NamespaceError(f"{what}: {os.strerror(ctypes.get_errno())}")


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _unshare(libc: "ctypes.CDLL") -> None:
    """New UTS and mount namespaces; in a user namespace of our own unless we are root (or
    root's unshare was refused, as in a container without CAP_SYS_ADMIN)."""
    if os.geteuid() == 0 and libc.unshare(CLONE_NEWNS | CLONE_NEWUTS) == 0:
        return
    uid, gid = os.geteuid(), os.getegid()
    _call(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWUTS), "unshare")
    try:
        _write("/proc/self/setgroups", "deny")
    except FileNotFoundError:
        pass
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")


def _bind_node_dir(libc: "ctypes.CDLL", spool: str) -> None:
    _call(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "make mounts private")
    if not os.path.isdir(NODE_DIR):
        os.makedirs(NODE_DIR, exist_ok=True)
    _call(libc.mount(spool.encode(), NODE_DIR.encode(), None, MS_BIND | MS_REC, None),
          f"bind {spool} on {NODE_DIR}")


def enter(hostname: str, spool: str) -> Optional[str]:
    """Make this process a node of its own: hostname ``hostname``, ``spool`` at
    :data:`NODE_DIR`. None when done, else why not (nothing is half-done that matters: a
    failure after the unshare leaves this process alone in namespaces like the machine's)."""
    try:
        libc = _libc()
        _unshare(libc)
        socket.sethostname(hostname)
        _bind_node_dir(libc, spool)
    except (NamespaceError, OSError, AttributeError) as e:
        return str(e)
    return None


def own_node(node_name: str, spool: str, log: Callable[[str], None]) -> None:
    """A local node takes its own hostname and node dir (:func:`enter`), or says in its log
    why it shares the machine's."""
    why_not = enter(node_name, spool)
    if why_not:
        log(f"warning: node {node_name} shares this machine's hostname and {NODE_DIR}: "
            f"{why_not}")
