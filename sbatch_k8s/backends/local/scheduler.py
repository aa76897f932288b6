"""The local backend's scheduler: one process per state directory, only while there is work.

Any command that needs it starts it (:func:`~sbatch_k8s.backends.local.wakeup.ensure_scheduler`
after sbatch, scontrol release, scancel, squeue, sacct, sbatch --wait); an exclusive lock on
``scheduler.lock``, taken by the starting command and handed over, makes sure exactly one
runs. It reads the job database — the only
truth — and loops:

* it watches the running jobs' node processes (its children: woken by SIGCHLD; jobs taken
  over from a predecessor: looked at every :data:`WATCH_S`) and records each job's end
  (or puts it back to pending: a job ``scontrol requeue`` killed, and one that may be
  requeued that ended ``NODE_FAIL`` or ``PREEMPTED``, requeued then and there:
  :mod:`~sbatch_k8s.backends.local.requeue`);
* it looks at the pending jobs (:func:`~sbatch_k8s.backends.local.dispatch.look_once`) and
  launches those that may start — after news (a command's wake-up byte on
  ``scheduler.fifo``, a change to the database by another process, a job's end), when a
  begin time comes, and every :data:`LOOK_EVERY_S` in any case (``after:id+minutes``);
* it wakes the commands waiting for jobs to end.

When nothing runs and no pending job is free of a hold, it waits :data:`LINGER_S` and exits
(a held job needs a command to release it, and that command starts a scheduler again). Killed
(even with SIGKILL), it loses nothing: the next command starts a new one, which takes the
running jobs over (:func:`~sbatch_k8s.backends.local.supervisor.adopt_running`) and carries on
from the database.
"""

from __future__ import annotations

import fcntl
import os
import select
import signal
import sys
import time
import traceback
from typing import Dict, List, Optional

from sbatch_k8s import jobdb
from sbatch_k8s.backends.local.dispatch import look_once
from sbatch_k8s.backends.local.node_processes import ElementRun
from sbatch_k8s.backends.local.requeue import record_end
from sbatch_k8s.backends.local.supervisor import adopt_running, launch
from sbatch_k8s.backends.local.wakeup import (
    LOCK_FD_VARIABLE,
    SCHEDULER_FIFO,
    SCHEDULER_LOCK,
    has_work,
    make_fifo,
    wake_waiters,
)
from sbatch_k8s.paths import make_state_dir
from translators.config import ClusterConfig

#: How long an idle scheduler stays (the next sbatch of a loop finds it running).
LINGER_S = 2.0
#: The longest time between two looks at the pending jobs.
LOOK_EVERY_S = 5.0
#: How often jobs taken over from a predecessor (not our children) are looked at.
WATCH_S = 0.5
#: While a job's other nodes follow its node 0: how often to look.
FOLLOW_LOOK_S = 0.05
#: At most this share of the time goes into looks (10,000 pending jobs stay cheap).
LOOK_SHARE = 0.2


class Scheduler:
    """The loop described in the module docstring."""

    def __init__(self, environ: Dict[str, str], directory: str) -> None:
        self.environ = environ
        self.directory = directory
        self.conn = jobdb.connect(environ)
        self.config_stamp: Optional[float] = None
        self.config = self._load_config()
        self.fifo_path = os.path.join(directory, SCHEDULER_FIFO)
        make_fifo(self.fifo_path)
        self.fifo: Optional[int] = os.open(self.fifo_path, os.O_RDWR | os.O_NONBLOCK)
        self.signals, wakeup = os.pipe()
        os.set_blocking(self.signals, False)
        os.set_blocking(wakeup, False)
        signal.set_wakeup_fd(wakeup, warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda _s, _f: None)
        self.runs: Dict[int, ElementRun] = {}
        self.version: Optional[int] = None
        self.next_look = 0.0
        self.look_deadline: Optional[float] = None

    def _load_config(self) -> ClusterConfig:
        """The configuration, read again when its file changed (capacity edits apply)."""
        from sbatch_k8s.config_file import find_config_file, load_config

        path = find_config_file(self.environ)
        try:
            stamp = os.stat(path).st_mtime if path else 0.0
        except OSError:
            stamp = 0.0
        if stamp == self.config_stamp:
            return self.config
        try:
            config = load_config(self.environ)[0]
        except Exception as e:  # keep the last good configuration; say why
            sys.stderr.write(f"scheduler: configuration not reloaded: {e}\n")
            if self.config_stamp is not None:
                return self.config
            raise
        self.config_stamp = stamp
        return config

    def _data_version(self) -> int:
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def _watch(self, now: float) -> bool:
        """Record the jobs that ended; True when one did."""
        ended = [job_id for job_id, run in self.runs.items() if run.poll(now)]
        for job_id in ended:
            record_end(self.conn, self.runs.pop(job_id))
        return bool(ended)

    def _look(self, now: float) -> None:
        """Start what may start; remember when to look again."""
        self.config = self._load_config()
        self.version = self._data_version()
        begun = time.monotonic()
        look = look_once(self.conn, self.config.local)
        for row, gpu_ids in look.started:
            try:
                self.runs[row["job_id"]] = launch(self.conn, self.environ, row, gpu_ids)
            except Exception as e:  # a job that cannot start fails; the others go on
                sys.stderr.write(f"scheduler: job {row['job_id']} failed to launch: {e}\n")
                jobdb.update_job(self.conn, row["job_id"], state="FAILED",
                                 reason="JobLaunchFailure", exit_code=1, end_time=time.time())
                look.cancelled.append(row["job_id"])
        if look.cancelled:
            wake_waiters(self.directory)
        spent = time.monotonic() - begun
        self.next_look = now + spent / LOOK_SHARE
        self.look_deadline = look.next_due

    def _timeout(self, now: float, last_look: float, news: bool) -> float:
        """How long to sleep: until the next look is due (no sooner than the look share
        allows), or sooner to watch running jobs."""
        look_at = now if news else last_look + LOOK_EVERY_S
        if self.look_deadline is not None:
            look_at = min(look_at, self.look_deadline)
        timeout = max(look_at, self.next_look) - now
        if any(run.node0_end is not None for run in self.runs.values()):
            timeout = min(timeout, FOLLOW_LOOK_S)
        elif any(run.adopted for run in self.runs.values()):
            timeout = min(timeout, WATCH_S)
        return max(timeout, 0.0)

    def _sleep(self, timeout: float) -> bool:
        """Wait for a wake-up byte, a signal or the timeout; True when a command woke us."""
        watched: List[int] = [self.signals] + ([self.fifo] if self.fifo is not None else [])
        try:
            ready, _, _ = select.select(watched, [], [], timeout)
        except InterruptedError:
            return False
        for fd in ready:
            try:
                while os.read(fd, 4096):
                    pass
            except BlockingIOError:
                pass
        return self.fifo in ready

    def _may_exit(self) -> bool:
        """Stop listening, then make sure no work came in meanwhile; True to exit."""
        if self.fifo is not None:
            os.close(self.fifo)
            self.fifo = None
        if not has_work(self.conn):
            return True
        self.fifo = os.open(self.fifo_path, os.O_RDWR | os.O_NONBLOCK)
        return False

    def run(self) -> None:
        """Schedule until idle for :data:`LINGER_S`."""
        self.runs = adopt_running(self.conn, self.environ)
        last_look, idle_since, news = 0.0, None, True
        while True:
            now = time.time()
            ended = self._watch(now)
            if ended:
                wake_waiters(self.directory)
            due = self.look_deadline is not None and now >= self.look_deadline
            news = news or ended or due or self._data_version() != self.version
            if (news or now >= last_look + LOOK_EVERY_S) and now >= self.next_look:
                self._look(now)
                last_look, news = now, False
            if self.runs or has_work(self.conn):
                idle_since = None
            elif idle_since is None:
                idle_since = now
            elif now - idle_since >= LINGER_S and self._may_exit():
                return
            timeout = self._timeout(now, last_look, news)
            if idle_since is not None:
                timeout = min(timeout, max(0.0, idle_since + LINGER_S - now))
            news = self._sleep(timeout) or news


def _held_lock(environ: Dict[str, str], directory: str) -> Optional[int]:
    """The scheduler lock handed over by the starting command (:data:`LOCK_FD_VARIABLE`),
    else taken here; None when another scheduler holds it."""
    handed = environ.pop(LOCK_FD_VARIABLE, "")
    fd = int(handed) if handed.isdigit() else os.open(
        os.path.join(directory, SCHEDULER_LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a no-op on a handed-over lock
    except OSError:
        os.close(fd)
        return None
    os.set_inheritable(fd, False)
    return fd


def main() -> None:
    """``python -c '… scheduler import main; main()'``, started detached by a command."""
    environ = dict(os.environ)
    directory = make_state_dir(environ)
    lock = _held_lock(environ, directory)
    if lock is None:
        return
    os.chdir(directory)  # never keep the starting command's working directory busy
    try:
        Scheduler(environ, directory).run()
    except Exception:  # the log says why; the next command starts a new scheduler
        traceback.print_exc()
        raise SystemExit(1)
