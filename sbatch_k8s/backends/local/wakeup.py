"""Waking the local scheduler (starting it when there is none) and waking who waits for jobs.

Files in the state directory, all mode 0600:

``scheduler.lock``
    Held (``flock``) by the one scheduler of this state directory. The command that starts
    a scheduler takes it first and hands it over (an inherited descriptor), so a second
    command never starts a second scheduler while the first is still starting.
``scheduler.fifo``
    The scheduler reads it. A command that changed the job database writes one byte ("look
    again"). Opening it for writing without blocking fails (``ENXIO``) when no process reads
    it: then no scheduler listens, and the command starts one if there is work.
``waiters/<pid>-<n>``
    One FIFO per command waiting for jobs to end (``sbatch --wait``, ``srun`` outside a
    job); the scheduler writes a byte to each after jobs ended.

Wake-ups only save time: the database is the truth, every waiter also looks at it on a
timer, so a lost byte delays an answer by at most that timer, never changes it.
"""

from __future__ import annotations

import fcntl
import os
import select
import sqlite3
import sys
import time
from typing import Mapping, Optional

from sbatch_k8s import jobdb
from sbatch_k8s.paths import make_state_dir, state_dir

SCHEDULER_LOCK = "scheduler.lock"
SCHEDULER_FIFO = "scheduler.fifo"
SCHEDULER_LOG = "scheduler.log"
WAITERS = "waiters"
#: The variable that tells a starting scheduler which descriptor holds its lock.
LOCK_FD_VARIABLE = "SBATCHK8S_SCHEDULER_LOCK_FD"
#: How long a command waits for a scheduler on its way in or out before giving up (the
#: next command tries again; nothing is lost).
TAKEOVER_S = 10.0
#: What a scheduler has to do: jobs running, or pending ones nobody holds.
WORK_SQL = ("SELECT EXISTS(SELECT 1 FROM jobs WHERE state='RUNNING') OR "
            "EXISTS(SELECT 1 FROM jobs WHERE state='PENDING' AND hold=0)")


def make_fifo(path: str) -> None:
    """Create the FIFO ``path`` (owner only) unless it exists."""
    try:
        os.mkfifo(path, 0o600)
    except FileExistsError:
        pass


def poke(path: str) -> bool:
    """Write one wake-up byte into the FIFO ``path``; False when no process reads it."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        os.write(fd, b"!")
    except BlockingIOError:
        pass  # the pipe is full of wake-ups already
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def has_work(conn: sqlite3.Connection) -> bool:
    """Whether a scheduler is needed: a job runs, or a pending job is not held."""
    return bool(conn.execute(WORK_SQL).fetchone()[0])


def ensure_scheduler(environ: Mapping[str, str], nudge: bool = True,
                     conn: Optional[sqlite3.Connection] = None) -> None:
    """Make sure the scheduler of this state directory runs if there is work, and with
    ``nudge`` that it looks at the database again (call after committing a change)."""
    directory = state_dir(environ)
    fifo = os.path.join(directory, SCHEDULER_FIFO)
    if nudge and poke(fifo):
        return
    if not nudge and _listening(fifo):
        return
    if conn is not None:
        work = has_work(conn)
    else:
        with jobdb.opened(environ) as own:
            work = has_work(own)
    if work:
        _start_or_wake(environ, directory, fifo)


def _start_or_wake(environ: Mapping[str, str], directory: str, fifo: str) -> None:
    """Take the scheduler lock and start a scheduler holding it — or, when the lock is
    taken, wake the scheduler that holds it once it listens. A scheduler on its way out
    (no longer listening, lock still held) releases the lock in a moment; one on its way in
    (lock held, not listening yet) listens in a moment: both are waited for, so work
    committed before this call is always seen by some scheduler."""
    lock = os.open(os.path.join(directory, SCHEDULER_LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + TAKEOVER_S
    try:
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if poke(fifo) or time.monotonic() > deadline:
                    return
                time.sleep(0.005)
                continue
            start_scheduler(environ, lock)
            return
    finally:
        os.close(lock)  # the scheduler keeps its own copy, and with it the lock


def _listening(path: str) -> bool:
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        return True
    except OSError:
        return False


def start_scheduler(environ: Mapping[str, str], lock: int) -> None:
    """Start the scheduler process, handing it the scheduler lock (the descriptor
    ``lock``, locked) through :data:`LOCK_FD_VARIABLE`."""
    from sbatch_k8s.daemon import start_detached
    from sbatch_k8s.runtime.warm.fork_client import PACKAGE_ROOT

    directory = make_state_dir(environ)
    code = (f"import sys; sys.path.insert(0, {PACKAGE_ROOT!r}); "
            "from sbatch_k8s.backends.local.scheduler import main; main()")
    start_detached([sys.executable, "-c", code], os.path.join(directory, SCHEDULER_LOG),
                   dict(environ, **{LOCK_FD_VARIABLE: str(lock)}), pass_fds=(lock,))


class Waiter:
    """A FIFO of this process that the scheduler writes to when jobs end."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        directory = os.path.join(state_dir(environ), WAITERS)
        os.makedirs(directory, mode=0o700, exist_ok=True)
        name = f"{os.getpid()}-{id(self)}"
        # Made under a hidden name and renamed once open: the scheduler never finds it
        # without a reader and removes it as stale.
        hidden = os.path.join(directory, "." + name)
        make_fifo(hidden)
        self.fd = os.open(hidden, os.O_RDWR | os.O_NONBLOCK)
        self.path = os.path.join(directory, name)
        os.rename(hidden, self.path)

    def wait(self, timeout_s: float) -> bool:
        """Sleep until woken or ``timeout_s`` passed; True when woken."""
        try:
            ready, _, _ = select.select([self.fd], [], [], timeout_s)
        except InterruptedError:
            return False
        if not ready:
            return False
        try:
            while os.read(self.fd, 4096):
                pass
        except BlockingIOError:
            pass
        return True

    def close(self) -> None:
        try:
            os.unlink(self.path)
        except OSError:
            pass
        os.close(self.fd)


def wake_waiters(directory: str) -> None:
    """Write a byte to every waiter's FIFO; remove those nobody reads any more."""
    folder = os.path.join(directory, WAITERS)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if name.startswith("."):
            continue
        path = os.path.join(folder, name)
        if not poke(path):
            try:
                os.unlink(path)
            except OSError:
                pass
