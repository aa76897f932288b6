"""The batch host (node 0): run the batch script once, and end the job when it ends.

Before the script starts, every other node's agent must answer (bounded wait; on timeout one
error naming the missing nodes; see :mod:`node_links`). The script gets the batch
environment, its working directory (or ``/tmp`` with slurmstepd's message when that is
missing), stdin from ``--input`` or ``/dev/null``, stdout/stderr to the ``--output``/``--error``
files (also copied into the pod log when the job's files stay in the pods:
:mod:`sbatch_k8s.runtime.log_stream.tee`). The batch host enforces ``--time`` (SIGTERM, then SIGKILL
after KillWait, state TIMEOUT), sends ``--signal`` before the limit, carries out cancellation, and
ends the job when a node is lost. Ending the job goes as in Slurm: each running step's srun hears
the job is complete, slurmstepd's ``*** JOB … ***`` line, each step's ``*** STEP … ***`` line and
SIGCONT/SIGTERM to its tasks on every node, then the script; SIGKILL after KillWait (a lost node
ends the job ``NODE_FAIL``, reason ``NodeDown``, as slurmctld ends it; a node whose pod the cluster
stopped says so before it goes, and the job ends ``PREEMPTED``, exit code 0:0); the steps' sruns get
to report and record their steps before what the script left behind is killed. When the script ends,
every node is told to shut down and the job's state and exit code are the script's.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from parsers.step_usage import StepUsage
from parsers.values.acctg_freq import checked_interval
from sbatch_k8s.runtime.accounting.gpu import visible_gpus
from sbatch_k8s.runtime.accounting.sampler import StepSampler, sample_every
from sbatch_k8s.runtime.agent.service import Agent, log
from sbatch_k8s.runtime.stepd.child_process import reap
from sbatch_k8s.runtime.log_stream.frames import STDERR_KEY, STDOUT_KEY
from sbatch_k8s.runtime.log_stream.tee import OutputTee
from sbatch_k8s.runtime.stepd.task_files import output_flags
from sbatch_k8s.runtime.batch_host.node_links import NodeLink
from sbatch_k8s.runtime.batch_host.step_log import BATCH
from sbatch_k8s.runtime.stepd.oom import OOM_EXIT_SIGNAL, OOM_REASON, OUT_OF_MEMORY, OomLedger, \
    detected_line
from sbatch_k8s.runtime.stepd.node_step import cancel_line
from sbatch_k8s.runtime.batch_host.stop_judge import NODE_FAILURE_WHY, PREEMPTION_WHY, \
    REQUEUE_WHY, StopJudge

COMPLETED, FAILED, CANCELLED, TIMEOUT = "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"
NODE_FAIL, PREEMPTED = "NODE_FAIL", "PREEMPTED"
#: A node that leaves says why (:meth:`Agent.say_leaving`): the job's end and slurmstepd's
#: ``DUE TO`` for it, unless the whole job was being stopped (:mod:`stop_judge`). Saying
#: nothing is a lost node.
TERMINATED = "terminated"
LEFT_BECAUSE: Dict[Optional[str], Tuple[str, str]] = {
    TERMINATED: (PREEMPTED, PREEMPTION_WHY),
    None: (NODE_FAIL, NODE_FAILURE_WHY),
}
#: The reason each end the batch host decides records (the rest: None).
END_REASONS = {NODE_FAIL: "NodeDown", TIMEOUT: "TimeLimit"}
#: What srun adds to KillWait when it waits for an aborted step (``STEP_ABORT_TIME``).
STEP_ABORT_S = 2.0


class JobResult:
    """How the job ended: Slurm state, exit code and terminating signal of the script."""

    def __init__(self, state: str, exit_code: int, signal_number: int = 0,
                 reason: str = "None", system_comment: str = "") -> None:
        self.state = state
        self.exit_code = exit_code
        self.signal = signal_number
        self.reason = reason
        #: Why the batch step could not be launched (scontrol ``SystemComment=``).
        self.system_comment = system_comment
        #: The batch script's usage (:meth:`parsers.step_usage.StepUsage.to_json`), if it ran.
        self.usage: Optional[Dict[str, Any]] = None

    def as_dict(self) -> Dict[str, Any]:
        result: Dict[str, Any] = {"state": self.state, "exit_code": self.exit_code,
                                  "signal": self.signal, "reason": self.reason}
        if self.system_comment:
            result["system_comment"] = self.system_comment
        if self.usage is not None:
            result["usage"] = self.usage
        return result


class BatchHost:
    """Runs the script and owns the job's life on node 0."""

    def __init__(self, desc: Mapping[str, Any], names: Sequence[str], agent: Agent,
                 kill_wait_s: float, seconds_per_minute: float = 60.0) -> None:
        self.desc = desc
        self.seconds_per_minute = seconds_per_minute
        self.names = names
        self.agent = agent
        self.kill_wait_s = kill_wait_s
        self.links: List[NodeLink] = []
        self.process: Optional["subprocess.Popen[bytes]"] = None
        #: The batch script's accounting (the ``batch`` step's usage; :mod:`..accounting`).
        self.sampler = StepSampler(names[0] if names else "")
        self.ending: Optional[Tuple[str, str]] = None
        #: Set when the job is being ended (cancel, time limit, SIGTERM, a lost node).
        self.ending_set = asyncio.Event()
        self.stderr_path: Optional[str] = None
        self.finished = asyncio.Event()
        #: Copies the output files into the pod log, with the names clients write them at.
        self.tee: Optional[OutputTee] = None
        self.shown_as: Tuple[str, str] = ("", "")
        #: This node's cgroup OOM kills (pods; None where not counted) and the kills the
        #: batch step took when the script ended (:mod:`sbatch_k8s.runtime.stepd.oom`).
        self.oom: Optional[OomLedger] = agent.oom
        self.oom_kills = 0
        #: How the job ends when the cluster stops its pods (:mod:`stop_judge`; the node
        #: gives it the API server's question where the pod may ask).
        self.judge = StopJudge(desc.get("job_id"))

    def note(self, line: str) -> None:
        """Append one slurmstepd-style line to the batch script's stderr file."""
        if self.stderr_path:
            with open(self.stderr_path, "a") as f:
                f.write(line + "\n")

    def _signal_script(self, signum: int, group: bool = True) -> None:
        if self.process is None or self.process.returncode is not None:
            return
        try:
            if group:
                os.killpg(self.process.pid, signum)
            else:
                os.kill(self.process.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass

    async def signal_steps(self, signum: int) -> None:
        """Deliver ``signum`` to every task of every step on every node."""
        self.agent.signal_all(signum)
        await asyncio.gather(*(link.send({"type": "signal_all", "signal": signum})
                               for link in self.links))

    async def end_job(self, state: str, why: str) -> None:
        """Cancel/time-out/node-fail path: Slurm's message, SIGTERM, SIGKILL after KillWait."""
        if self.ending is not None:
            return
        self.ending = (state, why)
        self.ending_set.set()
        await self.agent.abort_steps()
        self.note(cancel_line(f"JOB {self.desc['job_id']}", self.names[0], why).rstrip("\n"))
        self.agent.end_steps(why)
        await asyncio.gather(*(link.send({"type": "end_steps", "why": why})
                               for link in self.links))
        self._signal_script(signal.SIGCONT)
        self._signal_script(signal.SIGTERM)
        try:
            await asyncio.wait_for(self._quiet(), self.kill_wait_s)
        except asyncio.TimeoutError:
            self._signal_script(signal.SIGKILL)
            await self.signal_steps(signal.SIGKILL)

    async def _quiet(self) -> None:
        """The script and every step have ended."""
        await self.finished.wait()
        await self.agent.steps_ended(self.kill_wait_s)

    def handle_cancel(self, request: Mapping[str, Any]) -> None:
        """``scancel`` of this job: a signal to steps/batch, or the whole job (``requeue``:
        for ``scontrol requeue``, slurmstepd's line then says so)."""
        signum = request.get("signal")
        if request.get("requeue"):
            asyncio.ensure_future(self.end_job(CANCELLED, REQUEUE_WHY))
            return
        if request.get("step") is not None:
            self.agent.cancel_step(int(request["step"]), signum)
            return
        if signum is None:
            asyncio.ensure_future(self.end_job(CANCELLED, ""))
            return
        signum = int(signum)
        if request.get("batch") or request.get("full"):
            self._signal_script(signum, group=bool(request.get("full")))
        if not request.get("batch"):
            asyncio.ensure_future(self.signal_steps(signum))

    async def stopped(self) -> None:
        """This pod got SIGTERM: the end :class:`~stop_judge.StopJudge` makes of it."""
        if self.ending is None:
            end = await self.judge.own_stop(bool(self.links))
            await self.end_job(*end)

    async def _watch_links(self) -> None:
        lost = await asyncio.gather(*(self._lost(link) for link in self.links))
        del lost

    async def _lost(self, link: NodeLink) -> None:
        why = await link.wait_closed()
        if why == TERMINATED and not self.finished.is_set():
            end = await self.judge.peer_stop(link.name)
            if end is not None:
                await self.end_job(*end)
            return
        if not self.finished.is_set():
            state, due_to = LEFT_BECAUSE.get(why, LEFT_BECAUSE[None])
            said = f" ({why})" if why else ""
            log(f"node {link.name} is gone{said}: ending job {self.desc['job_id']}")
            await self.end_job(state, due_to)

    async def _time_limit(self, started: float) -> None:
        limit_min = int(self.desc.get("time_limit_min") or 0)
        if limit_min <= 0:
            return
        loop = asyncio.get_event_loop()
        scale = self.seconds_per_minute / 60.0
        end = started + limit_min * self.seconds_per_minute
        sig = self.desc.get("signal")
        if sig:
            await asyncio.sleep(max(0.0, end - sig["seconds_before_end"] * scale - loop.time()))
            if sig.get("batch_only"):
                self._signal_script(int(sig["number"]), group=False)
            else:
                await self.signal_steps(int(sig["number"]))
        await asyncio.sleep(max(0.0, end - loop.time()))
        await self.end_job(TIMEOUT, "TIME LIMIT")

    async def run(self, argv: Sequence[str], env: Mapping[str, str], cwd: str,
                  stdin_path: str, stdout_path: str, stderr_path: str,
                  append: bool, notes: Sequence[str] = ()) -> JobResult:
        """Run the script to its end; the job's result. ``notes`` are slurmstepd's lines
        for the script's stderr before it starts. OSError when a file cannot be opened. A job
        ended before its script started (SIGTERM while nodes were awaited) runs nothing."""
        if self.ending is not None:
            return self._result(0)
        self.stderr_path = stderr_path
        # Always O_APPEND (after truncating, unless --open-mode=append): the script, its
        # steps and our slurmstepd-style lines then never overwrite each other.
        flags = output_flags(append)
        fds: List[int] = []
        try:
            fds.append(os.open(stdin_path, os.O_RDONLY))
            fds.append(os.open(stdout_path, flags, 0o644))
            same = os.path.normpath(stderr_path) == os.path.normpath(stdout_path)
            fds.append(fds[1] if same else os.open(stderr_path, flags, 0o644))
            if self.tee is not None:
                self.tee.add_file(STDOUT_KEY, stdout_path, append, self.shown_as[0])
                if not same:
                    self.tee.add_file(STDERR_KEY, stderr_path, append, self.shown_as[1])
            for note in notes:
                os.write(fds[2], (note + "\n").encode())
            oom_base = self.oom.count() if self.oom is not None else 0
            wrapper = ["/bin/sh", "-c", 'SLURM_TASK_PID=$$; export SLURM_TASK_PID; exec "$0" "$@"']
            self.process = subprocess.Popen(
                [*wrapper, *argv], env=dict(env), cwd=cwd, stdin=fds[0], stdout=fds[1],
                stderr=fds[2], start_new_session=True)
        finally:
            for fd in set(fds):
                os.close(fd)
        loop = asyncio.get_event_loop()
        self.sampler.add_task(0, self.process.pid, visible_gpus(env))
        watchers = [asyncio.ensure_future(self._time_limit(loop.time())),
                    asyncio.ensure_future(self._watch_links()),
                    asyncio.ensure_future(sample_every(
                        self.sampler, checked_interval(self.desc.get("acctg_freq")),
                        self._report_usage))]
        end = await reap(self.process)
        code = end.returncode
        self.sampler.end_task(0, end.rusage)
        self.finished.set()
        if self.ending is not None:
            # The steps' sruns are ending their steps too: let them report and record them.
            await self.agent.steps_ended(self.kill_wait_s + STEP_ABORT_S)
        # Like Slurm's process tracking: whatever the script left running (a background
        # srun, a daemon) ends with the batch step.
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.oom is not None:
            self.oom_kills = self.oom.take(oom_base)
            if self.oom_kills:
                self.note(detected_line(self.oom_kills,
                                        f"{self.desc['job_id']}.batch").rstrip("\n"))
        for watcher in watchers:
            watcher.cancel()
        return self._result(code)

    def _report_usage(self, figures: List[Dict[str, Any]]) -> None:
        """The script's usage so far, to the step registry (``sstat -j JOB.batch``)."""
        usage = StepUsage.from_tasks(figures)
        if usage is not None and self.agent.steps is not None:
            self.agent.steps.update_usage(BATCH, usage.to_json())

    def _result(self, code: int) -> JobResult:
        result = self._end(code)
        usage = StepUsage.from_tasks(self.sampler.figures())
        if usage is not None:
            result.usage = usage.to_json()
        return result

    def _end(self, code: int) -> JobResult:
        exit_code, signum = (0, -code) if code < 0 else (code, 0)
        if self.ending is not None:
            state = self.ending[0]
            if state == PREEMPTED:
                # The cluster's end, recorded alike whether or not this report survives
                # node 0's pod (the Job controller deletes it when the disruption failed
                # the Job first): no exit code of the script.
                return JobResult(state, 0, 0, "None")
            return JobResult(state, exit_code, signum, END_REASONS.get(state, "None"))
        if self.oom_kills:
            # slurmctld: a batch step with an OOM kill ends the job OUT_OF_MEMORY (0:125).
            return JobResult(OUT_OF_MEMORY, 0, OOM_EXIT_SIGNAL, OOM_REASON)
        if code == 0:
            return JobResult(COMPLETED, 0)
        # slurmctld's job_complete: a script killed by a signal (not by a cancel) is a
        # FAILED job with reason JobLaunchFailure; a non-zero exit, NonZeroExitCode.
        return JobResult(FAILED, exit_code, signum,
                         "JobLaunchFailure" if signum else "NonZeroExitCode")

    async def shutdown_nodes(self, code: int) -> None:
        """Tell every other node the job is over."""
        await asyncio.gather(*(link.send({"type": "shutdown", "code": code})
                               for link in self.links))
        for link in self.links:
            link.writer.close()

