"""One step's tasks on one node: what a slurmstepd does for its step.

Started by srun's ``launch``: the tasks start (every output file opened first, once), their
output and exits stream back to srun (tasks ending together in one message, so srun prints
``tasks 0-3: …`` on one line), srun's stdin and signals come in. The step's time limit
(``srun -t``) is enforced here, as slurmd does when slurmctld says the step's time is up:
the step's first node writes ``*** STEP j.s ON node CANCELLED AT … DUE TO TIME LIMIT ***``
on the step's stderr, srun hears that the step timed out, the tasks get SIGCONT and SIGTERM,
and SIGKILL after KillWait (at least 5 s, as slurmd waits). When the job ends, the node's
agent ends the step the same way (:meth:`NodeStep.end`). Tasks never outlive their srun.
"""

from __future__ import annotations

import asyncio
import datetime
import os
from typing import Any, Dict, List, Optional

from sbatch_k8s.runtime.stepd.task_files import OutputFiles, resolve, working_directory
from sbatch_k8s.runtime.protocol import (
    KIND_JSON,
    KIND_STDERR,
    KIND_STDIN,
    KIND_STDIN_CLOSE,
    decode_json,
    encode_json,
    read_frame,
    write_frame,
)
from sbatch_k8s.runtime.accounting.gpu import visible_gpus
from sbatch_k8s.runtime.accounting.sampler import Figures, StepSampler, sample_every
from sbatch_k8s.runtime.stepd.oom import OomLedger, detected_line
from sbatch_k8s.runtime.stepd.tasks import (
    Task,
    exit_result,
    kill_leftovers,
    pause_all,
    resume_all,
    start_task,
    terminate,
    wait_exit,
    wait_output,
)

#: How long tasks get between SIGTERM and SIGKILL when their srun vanished.
ORPHAN_GRACE_S = 2.0
#: slurmd's least wait between SIGTERM and SIGKILL of a step past its time limit.
STEP_KILL_WAIT_MIN_S = 5.0
#: Task exits this close together are reported in one message.
EXIT_BATCH_S = 0.01
#: Output buffered towards srun before the tasks' pumps wait for it.
WRITE_BUFFER_BYTES = 8 << 20
#: After a task's own process has ended, how long its output pipes may stay open (held by
#: what it started) before its exit is reported anyway: a task is over when its process is.
EXIT_DRAIN_S = 1.0
#: Once every task here has ended and what they left running is killed, how long the last
#: output may take to arrive.
LEFTOVER_DRAIN_S = 5.0


def slurm_time(epoch: Optional[float] = None) -> str:
    """``2026-11-22T09:04:34`` as slurmstepd prints times."""
    moment = datetime.datetime.fromtimestamp(epoch if epoch is not None else
                                             datetime.datetime.now().timestamp())
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def cancel_line(entity: str, node: str, why: str = "") -> str:
    """slurmstepd's ``*** <entity> ON <node> CANCELLED AT <time>[ DUE TO <why>] ***`` line,
    ``entity`` being ``JOB j`` or ``STEP j.s``."""
    suffix = f" DUE TO {why}" if why else ""
    return f"slurmstepd: error: *** {entity} ON {node} CANCELLED AT {slurm_time()}{suffix} ***\n"


class NodeStep:
    """The tasks of one step on this node, and the connection to their srun."""

    def __init__(self, message: Dict[str, Any], node_name: str, kill_wait_s: float,
                 writer: asyncio.StreamWriter, oom: Optional[OomLedger] = None) -> None:
        self.step_id = int(message["step_id"])
        self.job_id = message.get("job_id", "?")
        #: This node's place among the step's nodes: the first one speaks for the step.
        self.position = int(message.get("node_position", 0))
        limit = message.get("time_limit_s")
        self.time_limit_s: Optional[float] = float(limit) if limit else None
        self.node_name = node_name
        self.kill_wait_s = kill_wait_s
        self.writer = writer
        self.tasks: List[Task] = []
        #: slurmstepd's stderr: the first task's stderr file when it has one.
        self.stderr_fd: Optional[int] = None
        #: Whether the step's cancel line was written (once, as slurmstepd's ``msg_sent``).
        self.noticed = False
        self.lock = asyncio.Lock()
        self.paused = False
        #: The node's OOM kills (None: not counted here), the count when the step started,
        #: and whether the step had any.
        self.oom_ledger = oom
        self.oom_base = oom.count() if oom is not None else 0
        self.oom = False
        #: The tasks' accounting (jobacct_gather): sampled every ``acctg_interval_s`` (srun
        #: hears the figures, for sstat), closed by each task's rusage (its exit carries them).
        self.sampler = StepSampler(node_name)
        self.acctg_interval_s = float(message.get("acctg_interval_s") or 0)

    # -- slurmstepd's own lines -------------------------------------------------------------

    def note(self, line: str) -> None:
        """A line on slurmstepd's stderr, which is the step's first task's stderr here."""
        if not self.tasks:
            return
        if self.stderr_fd is not None:
            try:
                os.write(self.stderr_fd, line.encode())
            except OSError:
                pass
            return
        self.sink(self.tasks[0].rank, KIND_STDERR, line.encode())

    def notice(self, why: str) -> None:
        """The step's cancel line, from its first node, once, while tasks run."""
        if self.position == 0 and not self.noticed and any(t.running for t in self.tasks):
            self.noticed = True
            self.note(cancel_line(f"STEP {self.job_id}.{self.step_id}", self.node_name, why))

    def signal(self, signum: int) -> None:
        """Deliver ``signum`` to every task of the step here."""
        for task in self.tasks:
            task.signal(signum)

    async def end(self, why: str, grace_s: float) -> None:
        """End the step here: the cancel line, SIGCONT and SIGTERM, SIGKILL after
        ``grace_s``."""
        self.notice(why)
        await terminate(self.tasks, grace_s)

    # -- output towards srun ----------------------------------------------------------------

    def sink(self, rank: int, kind: bytes, data: bytes) -> None:
        """One frame to srun. One write per frame keeps frames whole; when srun falls
        behind, the tasks' pipes are not read (they block, as on a full terminal) until it
        drains."""
        write_frame(self.writer, kind, rank, data)
        transport = self.writer.transport
        if not self.paused and transport.get_write_buffer_size() > WRITE_BUFFER_BYTES:
            self.paused = True
            pause_all(self.tasks)
            asyncio.ensure_future(self._resume_when_drained())

    async def _resume_when_drained(self) -> None:
        try:
            await self.writer.drain()
        except ConnectionError:
            return
        self.paused = False
        resume_all(self.tasks)

    async def send(self, message: Dict[str, Any]) -> None:
        async with self.lock:
            self.writer.write(encode_json(message))
            await self.writer.drain()

    # -- the step's life --------------------------------------------------------------------

    async def start(self, message: Dict[str, Any]) -> bool:
        """Start the tasks; False (srun told why) when a file or program cannot be opened."""
        cwd, moved = working_directory(str(message["cwd"]))
        outputs = OutputFiles(bool(message.get("append")), message["cwd"] if moved else None)
        try:
            # Every file is opened before the first task starts (truncated once, shared).
            fds = [tuple(outputs.open(resolve(spec[key], cwd)) if spec.get(key) else None
                         for key in ("stdout_file", "stderr_file"))
                   for spec in message["tasks"]]
            if fds and fds[0][1] is not None:
                self.stderr_fd = os.dup(fds[0][1])
            for position, (spec, (out, err)) in enumerate(zip(message["tasks"], fds)):
                # slurmstepd's chdir message: once for the node, once for each task.
                notes = [moved + "\n"] * (2 if position == 0 else 1) if moved else []
                stdin_file = spec.get("stdin_file")
                self.tasks.append(await start_task(
                    spec["rank"], message["argv"], spec["env"], cwd, self.sink,
                    stdin_piped=bool(spec.get("stdin")), stdout_fd=out, stderr_fd=err,
                    stdin_file=resolve(stdin_file, cwd) if stdin_file else None,
                    notes=notes))
                self.sampler.add_task(self.tasks[-1].rank, self.tasks[-1].pid,
                                      visible_gpus(spec["env"]))
        except OSError as e:
            await terminate(self.tasks, ORPHAN_GRACE_S)
            await self.send({"type": "launch_failed", "error": str(e)})
            self.close()
            return False
        finally:
            outputs.close()
        await self.send({"type": "started", "pids": {str(t.rank): t.pid for t in self.tasks}})
        return True

    async def serve(self, reader: asyncio.StreamReader) -> None:
        """Until every task has ended and srun knows (or srun has gone: then its tasks end)."""
        inbound = asyncio.ensure_future(self._inbound(reader))
        limit = asyncio.ensure_future(self._time_limit()) if self.time_limit_s else None
        sampling = asyncio.ensure_future(sample_every(self.sampler, self.acctg_interval_s,
                                                      self._report_usage))
        ended: List[Dict[str, Any]] = []
        done = asyncio.ensure_future(asyncio.gather(*(self._report_exit(t, ended)
                                                      for t in self.tasks)))
        try:
            await asyncio.wait([done, inbound], return_when=asyncio.FIRST_COMPLETED)
            if not done.done():
                # srun went away: its tasks must not outlive it.
                await terminate(self.tasks, ORPHAN_GRACE_S)
                await asyncio.gather(done, return_exceptions=True)
                await self._end_leftovers()
            else:
                await self._end_leftovers()
                await self.send({"type": "done"})
        finally:
            inbound.cancel()
            sampling.cancel()
            if limit is not None:
                limit.cancel()
            self.close()

    async def _end_leftovers(self) -> None:
        """Every task here has ended: kill what they left running (it may hold their
        output pipes), let the last output arrive, and close the pipes."""
        kill_leftovers(self.tasks)
        await asyncio.gather(*(wait_output(t, LEFTOVER_DRAIN_S) for t in self.tasks))
        for task in self.tasks:
            task.close()

    def close(self) -> None:
        if self.stderr_fd is not None:
            os.close(self.stderr_fd)
            self.stderr_fd = None

    def _report_usage(self, figures: Figures) -> None:
        """The tasks' figures so far, to srun (``sstat``)."""
        asyncio.ensure_future(self._send_quietly({"type": "usage", "tasks": figures}))

    async def _send_quietly(self, message: Dict[str, Any]) -> None:
        try:
            await self.send(message)
        except ConnectionError:
            pass

    async def _time_limit(self) -> None:
        """``srun -t``: at the limit, srun hears the step timed out; the step ends."""
        assert self.time_limit_s is not None
        await asyncio.sleep(self.time_limit_s)
        try:
            await self.send({"type": "time_limit"})
        except ConnectionError:
            pass
        await self.end("TIME LIMIT", max(self.kill_wait_s, STEP_KILL_WAIT_MIN_S))

    def _check_oom(self) -> None:
        """At each task end here (slurmstepd looks at the first; a later kill is this
        step's too): the cgroup's OOM kills since the step started that no other step took
        make this and every later task exit of the step here an out-of-memory end, after
        slurmstepd's line (once)."""
        if self.oom_ledger is None:
            return
        kills = self.oom_ledger.take(self.oom_base)
        if kills and not self.oom:
            self.oom = True
            self.note(detected_line(kills, f"{self.job_id}.{self.step_id}"))

    async def _report_exit(self, task: Task, ended: List[Dict[str, Any]]) -> None:
        """Report a task's end; tasks ending together go in one message. The task is over
        when its own process is: what it started may keep its output pipes open for
        :data:`EXIT_DRAIN_S`, then the exit is reported anyway (those processes are killed
        when the step's last task here ends)."""
        code = await wait_exit(task)
        usage = self.sampler.end_task(task.rank, task.rusage)
        self._check_oom()
        await wait_output(task, EXIT_DRAIN_S)
        result = exit_result(task, code)
        result["usage"] = usage.figures()
        if self.oom:
            result["oom"] = True
        ended.append(result)
        await asyncio.sleep(EXIT_BATCH_S)
        if not ended:
            return
        batch = list(ended)
        del ended[:]
        await self.send({"type": "exits", "results": batch})

    async def _inbound(self, reader: asyncio.StreamReader) -> None:
        """stdin data and signals from srun, until srun closes the connection."""
        by_rank = {t.rank: t for t in self.tasks}
        while True:
            frame = await read_frame(reader)
            if frame is None:
                return
            kind, rank, payload = frame
            task = by_rank.get(rank)
            if kind == KIND_STDIN and task is not None:
                task.write_stdin(payload)
            elif kind == KIND_STDIN_CLOSE and task is not None:
                task.close_stdin()
            elif kind == KIND_JSON:
                request = decode_json(payload)
                if request["type"] == "signal":
                    self.signal(int(request["signal"]))
