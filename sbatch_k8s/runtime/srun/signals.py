"""How a running step ends early or hears a signal, with srun's and slurmstepd's lines.

* srun's own signals (``_srun_signal_mgr``): Ctrl-C reports the tasks' status (twice within
  a second aborts), SIGTERM/SIGQUIT abort the step ("forcing job termination"), SIGCONT is
  announced, the rest is forwarded to the tasks; once the tasks have ended, signals are
  ignored while the step is recorded;
* ``--kill-on-bad-exit`` and ``--wait``: the rest of the step is ended;
* ``scancel <job>.<step>``: a signal for the tasks, or the step's cancel;
* the job's end (node 0's "job complete"): srun says it waits for the step, once.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import Optional

from sbatch_k8s.runtime.srun.report import rank_ranges
from sbatch_k8s.runtime.srun.sessions import COMMAND, StepRun
from sbatch_k8s.runtime.stepd.node_step import cancel_line

FORWARDED_SIGNALS = (signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM)
#: Every signal srun handles while its step runs.
HANDLED_SIGNALS = (signal.SIGINT, signal.SIGCONT, signal.SIGTERM, signal.SIGQUIT) + \
    FORWARDED_SIGNALS


def _cancel_line(run: StepRun) -> str:
    node = run.sessions[0].name if run.sessions else "?"
    return cancel_line(f"STEP {run.job_id}.{run.step_id}", node)


def _aborted_line(run: StepRun, kill_wait_s: float) -> str:
    """srun's "Job step aborted" line: said once, however the abort came."""
    if run.abort_announced:
        return ""
    run.abort_announced = True
    return (f"{COMMAND}: Job step aborted: Waiting up to {int(kill_wait_s) + 2} seconds for "
            "job step to finish.\n")


def job_ending(run: StepRun, kill_wait_s: float) -> None:
    """Node 0 says the job is ending (its time limit, a cancel, a lost node): as srun on
    slurmctld's "job complete" message, say so and let the job's end take the tasks."""
    run.job_ended = True
    run.force_terminated = True
    sys.stderr.write(_aborted_line(run, kill_wait_s))
    sys.stderr.flush()


async def watch_policies(run: StepRun, kill_wait_s: float) -> None:
    """``--kill-on-bad-exit`` and ``--wait``: end the rest of the step early, with srun's
    and slurmstepd's messages."""
    step = f"StepId={run.job_id}.{run.step_id}"
    if run.request.kill_on_bad_exit:
        await run.bad_exit.wait()
        sys.stderr.write(f"{COMMAND}: Terminating {step}\n" + _cancel_line(run))
        run.cancelled_with = signal.SIGTERM
        run.signal_all(signal.SIGCONT)
        run.signal_all(signal.SIGTERM)
        await asyncio.sleep(kill_wait_s)
        run.signal_all(signal.SIGKILL)
        return
    if not run.request.wait_s:
        return
    await run.first_exit.wait()
    await asyncio.sleep(run.request.wait_s)
    lines = [f"{COMMAND}: First task exited {run.request.wait_s}s ago\n"]
    for session in run.sessions:
        for rank in session.ranks:
            result = session.exits.get(rank)
            status = "running" if result is None else (
                "exited" if not (result.get("status") or result.get("signal"))
                else "exited abnormally")
            lines.append(f"{COMMAND}: {step} task {rank}: {status}\n")
    lines.append(f"{COMMAND}: Terminating {step}\n")
    lines.append(_aborted_line(run, kill_wait_s))
    sys.stderr.write("".join(lines) + _cancel_line(run))
    run.force_terminated = True
    run.cancelled_with = signal.SIGKILL
    run.signal_all(signal.SIGKILL)


def cancel_step(run: StepRun, signum: Optional[int]) -> None:
    """``scancel`` of this step: a signal for its tasks, or (``signum`` None) the cancel as
    slurmstepd does it: the CANCELLED line and SIGKILL."""
    if signum is not None:
        run.signal_all(signum)
        return
    sys.stderr.write(_cancel_line(run))
    sys.stderr.flush()
    run.cancelled_with = signal.SIGKILL
    run.signal_all(signal.SIGKILL)


def _running_line(run: StepRun) -> str:
    running = [r for s in run.sessions for r in s.ranks if r not in s.exits]
    noun = "task" if len(running) == 1 else "tasks"
    return (f"{COMMAND}: StepId={run.job_id}.{run.step_id} {noun} "
            f"{rank_ranges(running) if running else ''}: running\n")


def _abort(run: StepRun, kill_wait_s: float, first: str = "") -> None:
    """srun ends the step itself (SIGTERM/SIGQUIT to srun, or Ctrl-C twice)."""
    sys.stderr.write(f"{first}{COMMAND}: forcing job termination\n"
                     + _aborted_line(run, kill_wait_s))
    sys.stderr.flush()
    run.force_terminated = True
    run.cancelled_with = signal.SIGKILL
    run.signal_all(signal.SIGKILL)


def install_signal_handlers(run: StepRun, loop: asyncio.AbstractEventLoop,
                             kill_wait_s: float) -> None:
    """Slurm's srun signal handling: Ctrl-C reports status (twice within a second aborts),
    SIGTERM/SIGQUIT abort the step, SIGCONT is announced and passed on, the rest is
    forwarded to the tasks."""
    def interrupt() -> None:
        now = loop.time()
        recent = bool(run.interrupts) and now - run.interrupts[-1] < 1.0
        run.interrupts.append(now)
        if run.request.quit_on_interrupt or run.request.disable_status or recent:
            sys.stderr.write(f"{COMMAND}: sending Ctrl-C to StepId={run.job_id}."
                             f"{run.step_id}\n")
            run.signal_all(signal.SIGINT)
            _abort(run, kill_wait_s)
            return
        sys.stderr.write(f"{COMMAND}: interrupt (one more within 1 sec to abort)\n"
                         + _running_line(run))
        sys.stderr.flush()

    def resumed() -> None:
        sys.stderr.write(f"{COMMAND}: got SIGCONT\n")
        run.signal_all(signal.SIGCONT)

    loop.add_signal_handler(signal.SIGINT, interrupt)
    loop.add_signal_handler(signal.SIGCONT, resumed)
    loop.add_signal_handler(signal.SIGTERM, _abort, run, kill_wait_s)
    loop.add_signal_handler(signal.SIGQUIT, _abort, run, kill_wait_s, f"{COMMAND}: Quit\n")
    for signum in FORWARDED_SIGNALS:
        loop.add_signal_handler(signum, run.signal_all, signum)


def ignore_signals(loop: asyncio.AbstractEventLoop) -> None:
    """The tasks have ended: like srun, whose signal thread is gone by then, take no more
    signals while the step is recorded (a late SIGTERM says nothing and stops nothing)."""
    for signum in HANDLED_SIGNALS:
        loop.remove_signal_handler(signum)
        signal.signal(signum, signal.SIG_IGN)
