"""The node agent: the slurmd of one node.

It accepts only authenticated connections (see :mod:`sbatch_k8s.runtime.protocol`) and serves:

* ``launch`` — one step's tasks on this node, served by a
  :class:`sbatch_k8s.runtime.stepd.node_step.NodeStep` (output,
  stdin, signals, exits, the step's time limit); they end if the launching srun disappears;
* ``control`` — the batch host's lifeline to this node: signals for every task, the end of
  the job for every step (``end_steps``), and ``shutdown``; when it says so or drops, the job
  is over (or node 0 is gone) and this node ends its tasks and exits;
* ``ping`` — "are you up";
* on node 0 only: ``step`` (a step's registration, held open for its life: id, CPUs and
  GPUs, log; see :mod:`sbatch_k8s.runtime.batch_host.step_registry`; the job's end reaches each srun
  over it), ``steps`` (the running ones) and ``cancel`` (``scancel`` of the job).
"""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import Any, Callable, Dict, List, Optional, Set

from sbatch_k8s.runtime.protocol import (
    ProtocolError,
    challenge_client,
    decode_json,
    encode_json,
    read_frame,
)
from sbatch_k8s.runtime.stepd.oom import OomLedger
from sbatch_k8s.runtime.stepd.node_step import NodeStep
from sbatch_k8s.runtime.batch_host.step_registry import StepRegistry
from sbatch_k8s.runtime.stepd.tasks import terminate

#: Slurm's KillWait default: SIGTERM → SIGKILL when a job ends.
KILL_WAIT_S = 30.0
#: How long node 0 waits for each srun to acknowledge that the job is ending.
ABORT_ACK_S = 2.0


def log(message: str) -> None:
    """One line on the agent's stderr (the pod log)."""
    sys.stderr.write(f"sbatch-k8s: {message}\n")
    sys.stderr.flush()


class Agent:
    """One node's agent. ``on_shutdown`` is called once when the job is over for this node."""

    def __init__(self, node_name: str, token: bytes, steps: Optional[StepRegistry],
                 on_shutdown: Callable[[int], None],
                 on_cancel: Optional[Callable[[Dict[str, Any]], None]] = None,
                 kill_wait_s: float = KILL_WAIT_S, oom: Optional[OomLedger] = None) -> None:
        self.node_name = node_name
        #: The node's cgroup OOM kills (pods), shared by the steps run here.
        self.oom = oom
        self.kill_wait_s = kill_wait_s
        self.token = token
        self.is_batch_host = steps is not None
        self.steps = steps
        self.on_shutdown = on_shutdown
        self.on_cancel = on_cancel
        #: The steps with tasks on this node, by step id.
        self.running: Dict[int, NodeStep] = {}
        #: The launch connections being served (their tasks' ends still to report).
        self.launches: Set["asyncio.Task[Any]"] = set()
        #: Node 0: each registered step's srun, reachable for ``scancel <job>.<step>``.
        self.step_channels: Dict[int, asyncio.StreamWriter] = {}
        #: Node 0: set when a step's srun has acknowledged that the job is ending.
        self.aborting: Dict[int, asyncio.Event] = {}
        self.controlled = asyncio.Event()
        #: The control connection node 0 opened to this node (see :meth:`say_leaving`).
        self.control_writer: Optional[asyncio.StreamWriter] = None
        #: Node names node 0 mistook this agent for (logged once each).
        self.refused: Set[str] = set()
        self.server: Optional[asyncio.AbstractServer] = None

    async def start(self, host: str, port: int) -> None:
        """Listen for connections."""
        self.server = await asyncio.start_server(self._serve, host, port, reuse_address=True,
                                                 limit=1 << 20)

    async def say_leaving(self, why: str) -> None:
        """Tell node 0 why this node goes before its end is seen (``terminated``: the cluster
        stopped it with a signal — a pod evicted or preempted — not a crash or a lost machine,
        which say nothing)."""
        if self.control_writer is None:
            return
        try:
            self.control_writer.write(encode_json({"type": "leaving", "why": why}))
            await self.control_writer.drain()
        except (ConnectionError, RuntimeError):
            pass

    async def close(self) -> None:
        """Stop listening and end every task still running here."""
        if self.server is not None:
            self.server.close()
        await self.end_all_tasks(self.kill_wait_s)

    async def end_all_tasks(self, grace_s: float) -> None:
        """SIGTERM, then SIGKILL after ``grace_s``, every task of every step on this node."""
        tasks = [t for step in self.running.values() for t in step.tasks]
        await terminate(tasks, grace_s)

    async def finish_launches(self, timeout_s: float) -> None:
        """Give the launches still being served up to ``timeout_s`` to report their tasks'
        last output and exits to their sruns."""
        pending = [launch for launch in self.launches if not launch.done()]
        if pending:
            await asyncio.wait(pending, timeout=timeout_s)

    def signal_all(self, signum: int) -> None:
        """Deliver ``signum`` to every task of every step on this node."""
        for step in self.running.values():
            step.signal(signum)

    def end_steps(self, why: str) -> None:
        """The job is ending (``why``: ``TIME LIMIT``, or "" for a cancel): as slurmd does
        for each step here, the step's cancel line from its first node, then SIGCONT and
        SIGTERM to its tasks (SIGKILL is the batch host's, after KillWait)."""
        for step in self.running.values():
            step.notice(why)
            step.signal(signal.SIGCONT)
            step.signal(signal.SIGTERM)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        try:
            await challenge_client(reader, writer, self.token)
            frame = await read_frame(reader)
            if frame is None:
                return
            message = decode_json(frame[2])
            handler = self._handlers().get(message["type"])
            if handler is None:
                raise ProtocolError(f"unknown request {message['type']!r}")
            await handler(message, reader, writer)
        except (ProtocolError, asyncio.TimeoutError) as e:
            log(f"rejected a connection from {peer[0] if peer else '?'}: {e}")
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    def _handlers(self) -> Dict[str, Callable[..., Any]]:
        handlers = {"launch": self._launch, "control": self._control, "ping": self._ping,
                    "signal_all": self._signal_all}
        if self.is_batch_host:
            handlers.update(step=self._step, steps=self._list_steps, cancel=self._cancel)
        return handlers

    async def _ping(self, message: Dict[str, Any], reader: asyncio.StreamReader,
                    writer: asyncio.StreamWriter) -> None:
        writer.write(encode_json({"type": "pong", "node": self.node_name}))
        await writer.drain()

    async def _signal_all(self, message: Dict[str, Any], reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        self.signal_all(int(message["signal"]))
        writer.write(encode_json({"type": "ok"}))
        await writer.drain()

    async def _control(self, message: Dict[str, Any], reader: asyncio.StreamReader,
                       writer: asyncio.StreamWriter) -> None:
        wanted = message.get("node")
        if wanted is not None and wanted != self.node_name:
            # Node 0 took this agent for another node: say who is here, serve no control.
            if wanted not in self.refused:
                self.refused.add(wanted)
                log(f"refused node 0's control connection for {wanted!r}: this node is "
                    f"{self.node_name!r}")
            writer.write(encode_json({"type": "not_me", "node": self.node_name}))
            await writer.drain()
            return
        self.controlled.set()
        self.control_writer = writer
        writer.write(encode_json({"type": "ready", "node": self.node_name}))
        await writer.drain()
        code = 1
        while True:
            frame = await read_frame(reader)
            if frame is None:
                break
            request = decode_json(frame[2])
            if request["type"] == "shutdown":
                code = int(request.get("code", 0))
                break
            if request["type"] == "signal_all":
                self.signal_all(int(request["signal"]))
            elif request["type"] == "end_steps":
                self.end_steps(str(request.get("why") or ""))
        self.on_shutdown(code)

    async def _step(self, message: Dict[str, Any], reader: asyncio.StreamReader,
                    writer: asyncio.StreamWriter) -> None:
        """Register a step for as long as this connection lives (see
        :mod:`sbatch_k8s.runtime.batch_host.step_registry`)."""
        assert self.steps is not None
        holds = [list(h) for h in message.get("holds", [])]
        if not self.steps.possible(holds):
            writer.write(encode_json({"type": "refused", "reason":
                                      "More processors requested than permitted"}))
            await writer.drain()
            return
        if not self.steps.fits(holds):
            if message.get("immediate"):
                writer.write(encode_json({"type": "refused", "reason":
                                          "Requested nodes are busy"}))
                await writer.drain()
                return
            if not await self._wait_for_room(holds, reader, writer):
                return
        step_id, gpus = self.steps.begin(message.get("info", {}), holds,
                                         message.get("shared_gpus") or [])
        result: Dict[str, Any] = {"state": "CANCELLED", "exit_code": 0, "signal": 9}
        try:
            writer.write(encode_json({"type": "step", "step_id": step_id, "gpu_ids": gpus}))
            await writer.drain()
            self.step_channels[step_id] = writer
            self.aborting[step_id] = asyncio.Event()
            while True:
                frame = await read_frame(reader)
                request = decode_json(frame[2]) if frame is not None else {}
                if request.get("type") == "aborting":
                    self.aborting[step_id].set()
                    continue
                if request.get("type") == "usage":
                    self.steps.update_usage(step_id, request.get("usage"))
                    continue
                self.step_channels.pop(step_id, None)
                if request.get("type") == "step_end":
                    result = request.get("result", result)
                    writer.write(encode_json({"type": "ok"}))
                    await writer.drain()
                break
        finally:
            self.step_channels.pop(step_id, None)
            self.aborting.pop(step_id, None)
            self.steps.end(step_id, result)

    async def abort_steps(self) -> None:
        """The job is ending: tell every step's srun (as slurmctld's "job complete" message
        does, srun then says it waits for the step to finish) and give them
        :data:`ABORT_ACK_S` to say they heard."""
        acks = []
        for step_id, writer in list(self.step_channels.items()):
            writer.write(encode_json({"type": "job_complete"}))
            acks.append(self.aborting[step_id].wait())
        if acks:
            await asyncio.wait([asyncio.ensure_future(a) for a in acks], timeout=ABORT_ACK_S)

    async def steps_ended(self, timeout_s: float) -> None:
        """Wait up to ``timeout_s`` for every registered step to have recorded its end."""
        if self.steps is not None:
            await self.steps.wait_until_idle(timeout_s)

    async def _wait_for_room(self, holds: List[List[int]], reader: asyncio.StreamReader,
                             writer: asyncio.StreamWriter) -> bool:
        """Keep a step waiting until it fits (True) or its srun goes away (False). As
        slurmctld wakes pending steps whenever a step ends, srun hears "busy" again after
        each step's end that still leaves no room."""
        assert self.steps is not None
        busy = {"type": "busy", "reason": "Requested nodes are busy"}
        writer.write(encode_json(busy))
        await writer.drain()
        gone = asyncio.ensure_future(read_frame(reader))
        while True:
            changed = asyncio.ensure_future(self.steps.next_change())
            await asyncio.wait([changed, gone], return_when=asyncio.FIRST_COMPLETED)
            if gone.done():
                changed.cancel()
                return False
            if self.steps.fits(holds):
                break
            writer.write(encode_json(busy))
            await writer.drain()
        # Only one reader at a time: the watch on srun must be over before the next read.
        gone.cancel()
        await asyncio.gather(gone, return_exceptions=True)
        return True

    def cancel_step(self, step_id: int, signum: Optional[int]) -> bool:
        """Ask the srun of step ``step_id`` to cancel it (``signum`` None) or signal its
        tasks; False when no such step runs."""
        writer = self.step_channels.get(step_id)
        if writer is None:
            return False
        writer.write(encode_json({"type": "cancel", "signal": signum}))
        return True

    async def _list_steps(self, message: Dict[str, Any], reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        assert self.steps is not None
        writer.write(encode_json({"type": "steps", "running": self.steps.listing()}))
        await writer.drain()

    async def _cancel(self, message: Dict[str, Any], reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> None:
        if self.on_cancel is not None:
            self.on_cancel(message)
        writer.write(encode_json({"type": "ok"}))
        await writer.drain()

    async def _launch(self, message: Dict[str, Any], reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> None:
        """Serve one step's tasks on this node (see :mod:`sbatch_k8s.runtime.stepd.node_step`)."""
        this = asyncio.current_task()
        if this is not None:
            self.launches.add(this)
            this.add_done_callback(self.launches.discard)
        step = NodeStep(message, self.node_name, self.kill_wait_s, writer, self.oom)
        if not await step.start(message):
            return
        self.running[step.step_id] = step
        try:
            await step.serve(reader)
        finally:
            self.running.pop(step.step_id, None)
