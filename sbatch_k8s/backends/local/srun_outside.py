"""srun outside an allocation on the local backend: create a job for the step and stream it.

As Slurm's srun does, it first obtains an allocation with the same options, then runs the step
in it: here the job's batch script is ``srun <the same arguments>`` with its stdin fed from a
FIFO and its output files followed until the job ends; the exit code is the step's. Ctrl-C is
passed to that inner srun (twice within a second aborts, as in Slurm).
"""

from __future__ import annotations

import os
import signal
import time
from typing import IO, Callable, List, Mapping, Optional, Sequence

from parsers.jobspec import BatchScript
from parsers.sbatch_input import build_job, split_command_line
from sbatch_k8s.backends.base import SRUN_COMMAND, OutputSink
from translators.config import ClusterConfig

FOLLOW_INTERVAL_S = 0.02
#: How often the job's state is read without a wake-up from the scheduler.
CHECK_INTERVAL_S = 0.5


def allocation_argv(argv: Sequence[str], job_dir_hint: str) -> List[str]:
    """sbatch arguments for the job an outside srun creates (:mod:`sbatch_k8s.srun_job`),
    with output into files we follow and stdin from our FIFO. Its job is no batch job
    (created with :data:`~sbatch_k8s.backends.base.SRUN_COMMAND`): never requeued, as
    slurmctld requeues batch jobs only — a lost node ends it ``NODE_FAIL``, and srun with it."""
    from sbatch_k8s.srun_job import allocation_options, step_command

    name, words = allocation_options(argv)
    return (["--job-name", name] + words +
            ["--output", os.path.join(job_dir_hint, "srun.out"),
             "--error", os.path.join(job_dir_hint, "srun.err"),
             "--input", os.path.join(job_dir_hint, "srun.in"),
             "--wrap", step_command(argv)])


class Follower:
    """Copies what a growing file receives to one of the command's streams (``write``)."""

    def __init__(self, path: str, write: Callable[[bytes], None]) -> None:
        self.path = path
        self.write = write
        self.handle: Optional[IO[bytes]] = None

    def pump(self) -> None:
        if self.handle is None:
            try:
                self.handle = open(self.path, "rb")
            except OSError:
                return
        data = self.handle.read()
        if data:
            self.write(data)


def run_outside(argv: List[str], config: ClusterConfig, environ: Mapping[str, str],
                sink: OutputSink) -> int:
    """srun's exit code for a step run in a job of its own, its output copied to ``sink``."""
    from parsers.jobspec import SubmitOptions
    from sbatch_k8s.backends.local.capacity import local_shape
    from sbatch_k8s.backends.local.submit import create_job
    from sbatch_k8s.submission_plan import plan_submission
    from sbatch_k8s.paths import state_dir

    spool = os.path.join(state_dir(environ), "srun", str(os.getpid()))
    os.makedirs(spool, mode=0o700, exist_ok=True)
    fifo = os.path.join(spool, "srun.in")
    os.mkfifo(fifo, 0o600)
    command_line = split_command_line(allocation_argv(argv, spool))
    wrap = command_line.value_of("wrap") or ""
    script = BatchScript(f"#!/bin/sh\n# created by srun outside an allocation\n{wrap}\n", None,
                         (), "wrap")
    job, _ = build_job(command_line, environ, script)
    shape = local_shape(config.local)
    job_id = create_job(plan_submission(job, SubmitOptions(), config, environ, shape,
                                        SRUN_COMMAND), environ).job_ids[0]
    return _follow(job_id, spool, fifo, environ, sink)


def _follow(job_id: int, spool: str, fifo: str, environ: Mapping[str, str],
            sink: OutputSink) -> int:
    import threading

    from sbatch_k8s import jobdb
    from sbatch_k8s.backends.local.cancel import signal_batch_shell
    from sbatch_k8s.backends.local.waiting import unfinished
    from sbatch_k8s.backends.local.wakeup import Waiter, ensure_scheduler

    def feed_stdin() -> None:
        # Opened only now, in this process alone: the job sees end-of-file when our stdin
        # ends (a scheduler this process starts later never keeps a copy: it is exec'd).
        stdin_pipe = os.open(fifo, os.O_WRONLY)
        try:
            while True:
                data = os.read(0, 65536)
                if not data:
                    break
                os.write(stdin_pipe, data)
        except OSError:
            pass
        os.close(stdin_pipe)

    threading.Thread(target=feed_stdin, daemon=True).start()
    last_interrupt = [0.0]

    def interrupt(signum: int, _frame: object) -> None:
        signal_batch_shell(environ, job_id, signum)
        last_interrupt[0] = time.time()

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, interrupt)
    followers = [Follower(os.path.join(spool, "srun.out"), sink.write_out),
                 Follower(os.path.join(spool, "srun.err"), sink.write_err)]
    with jobdb.opened(environ) as conn:
        waiter = Waiter(environ)
        checked = 0.0
        try:
            while True:
                for follower in followers:
                    follower.pump()
                if waiter.wait(FOLLOW_INTERVAL_S) or time.time() - checked > CHECK_INTERVAL_S:
                    checked = time.time()
                    if not unfinished(conn, job_id):
                        break
                    ensure_scheduler(environ, nudge=False, conn=conn)
        finally:
            waiter.close()
        for follower in followers:
            follower.pump()
        row = jobdb.get_job(conn, job_id)
        if row is None:
            return 1
        if row["exit_signal"]:
            return 128 + int(row["exit_signal"])
        return int(row["exit_code"] or 0)
