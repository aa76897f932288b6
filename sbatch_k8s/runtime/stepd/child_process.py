"""A task's or batch script's end, reaped here with its resource usage.

asyncio's child watchers reap with ``waitpid`` and drop the rusage that ``wait4`` gives: the
exact user and system CPU of the process and every descendant it waited for, and its peak RSS
— what Slurm records for a task (``TotalCPU``, ``UserCPU``, ``SystemCPU``; ``MaxRSS`` at
least). So the step daemon and the batch host start their children with :mod:`subprocess`
(no watcher knows them) and one thread per child waits for it with ``os.wait4``. The
:class:`subprocess.Popen` object stays referenced until then, so its own clean-up never
reaps the child first.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import threading
from typing import NamedTuple, Optional


class Reaped(NamedTuple):
    """How a child ended: its return code (negative: the signal that ended it) and the
    rusage of it and its waited-for descendants (None when another waiter took it)."""

    returncode: int
    rusage: Optional["os.struct_rusage"]


def returncode(status: int) -> int:
    """A wait status as :attr:`subprocess.Popen.returncode` reads (``-signal`` when killed)."""
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    return status


def reap(popen: "subprocess.Popen[bytes]") -> "asyncio.Future[Reaped]":
    """A future of ``popen``'s end, set on the running loop by a thread that waits for it."""
    loop = asyncio.get_event_loop()
    future: "asyncio.Future[Reaped]" = loop.create_future()

    def settle(result: Reaped) -> None:
        popen.returncode = result.returncode
        if not future.done():
            future.set_result(result)

    def wait() -> None:
        try:
            _, status, rusage = os.wait4(popen.pid, 0)
            result = Reaped(returncode(status), rusage)
        except ChildProcessError:
            result = Reaped(255, None)
        try:
            loop.call_soon_threadsafe(settle, result)
        except RuntimeError:
            pass  # the loop has closed: nobody waits any more

    threading.Thread(target=wait, daemon=True, name=f"reap-{popen.pid}").start()
    return future
