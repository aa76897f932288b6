"""The node agent: the slurmd/slurmstepd of one node.

It accepts only authenticated connections (see :mod:`protocol`) and serves:

* ``launch`` — start a step's tasks on this node, stream their output, forward stdin and
  signals, report each exit; kill them if the launching srun disappears;
* ``control`` — the batch host's lifeline to this node: when it says ``shutdown`` or drops,
  the job is over (or node 0 is gone) and this node ends its tasks and exits;
* ``ping`` — "are you up";
* on node 0 only: ``step`` (a step's registration, held open for its life: id, CPUs, log;
  see :mod:`steps`), ``steps`` (the running ones) and ``cancel`` (``scancel`` of the job).
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any, Callable, Dict, List, Optional, Set

from sbatch_k8s.runtime.protocol import (
    KIND_JSON,
    KIND_STDIN,
    KIND_STDIN_CLOSE,
    ProtocolError,
    challenge_client,
    decode_json,
    encode_json,
    read_frame,
    write_frame,
)
from sbatch_k8s.runtime.node_files import OutputFiles, resolve, working_directory
from sbatch_k8s.runtime.steps import StepRegistry
from sbatch_k8s.runtime.tasks import (
    Task,
    pause_all,
    resume_all,
    start_task,
    terminate,
    wait_task,
)

#: How long tasks get between SIGTERM and SIGKILL when their srun vanished.
ORPHAN_GRACE_S = 2.0
#: Slurm's KillWait default: SIGTERM → SIGKILL when a job ends.
KILL_WAIT_S = 30.0
#: Task exits this close together are reported in one message.
EXIT_BATCH_S = 0.01
#: Output buffered towards srun before the tasks' pumps wait for it.
WRITE_BUFFER_BYTES = 8 << 20


def log(message: str) -> None:
    """One line on the agent's stderr (the pod log)."""
    sys.stderr.write(f"sbatch-k8s: {message}\n")
    sys.stderr.flush()


class Agent:
    """One node's agent. ``on_shutdown`` is called once when the job is over for this node."""

    def __init__(self, node_name: str, token: bytes, steps: Optional[StepRegistry],
                 on_shutdown: Callable[[int], None],
                 on_cancel: Optional[Callable[[Dict[str, Any]], None]] = None) -> None:
        self.node_name = node_name
        self.token = token
        self.is_batch_host = steps is not None
        self.steps = steps
        self.on_shutdown = on_shutdown
        self.on_cancel = on_cancel
        self.running: Dict[int, List[Task]] = {}
        #: The launch connections being served (their tasks' ends still to report).
        self.launches: Set["asyncio.Task[Any]"] = set()
        #: Node 0: each registered step's srun, reachable for ``scancel <job>.<step>``.
        self.step_channels: Dict[int, asyncio.StreamWriter] = {}
        self.controlled = asyncio.Event()
        #: Node names node 0 mistook this agent for (logged once each).
        self.refused: Set[str] = set()
        self.server: Optional[asyncio.AbstractServer] = None

    async def start(self, host: str, port: int) -> None:
        """Listen for connections."""
        self.server = await asyncio.start_server(self._serve, host, port, reuse_address=True,
                                                 limit=1 << 20)

    async def close(self) -> None:
        """Stop listening and end every task still running here."""
        if self.server is not None:
            self.server.close()
        await self.end_all_tasks(KILL_WAIT_S)

    async def end_all_tasks(self, grace_s: float) -> None:
        """SIGTERM, then SIGKILL after ``grace_s``, every task of every step on this node."""
        tasks = [t for step in self.running.values() for t in step]
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
            for task in step:
                task.signal(signum)

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
        self.on_shutdown(code)

    async def _step(self, message: Dict[str, Any], reader: asyncio.StreamReader,
                    writer: asyncio.StreamWriter) -> None:
        """Register a step for as long as this connection lives (see :mod:`steps`)."""
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
            writer.write(encode_json({"type": "busy", "reason": "Requested nodes are busy"}))
            await writer.drain()
            waiting = asyncio.ensure_future(self.steps.wait_for_room(holds))
            gone = asyncio.ensure_future(read_frame(reader))
            await asyncio.wait([waiting, gone], return_when=asyncio.FIRST_COMPLETED)
            if not waiting.done():
                waiting.cancel()
                return
            gone.cancel()
        step_id = self.steps.begin(message.get("info", {}), holds)
        result: Dict[str, Any] = {"state": "CANCELLED", "exit_code": 0, "signal": 9}
        try:
            writer.write(encode_json({"type": "step", "step_id": step_id}))
            await writer.drain()
            self.step_channels[step_id] = writer
            frame = await read_frame(reader)
            self.step_channels.pop(step_id, None)
            if frame is not None:
                request = decode_json(frame[2])
                if request.get("type") == "step_end":
                    result = request.get("result", result)
                    writer.write(encode_json({"type": "ok"}))
                    await writer.drain()
        finally:
            self.step_channels.pop(step_id, None)
            self.steps.end(step_id, result)

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
        step_id = int(message["step_id"])
        this = asyncio.current_task()
        if this is not None:
            self.launches.add(this)
            this.add_done_callback(self.launches.discard)
        lock = asyncio.Lock()
        tasks: List[Task] = []
        paused: List[bool] = [False]

        async def resume_when_drained() -> None:
            try:
                await writer.drain()
            except ConnectionError:
                return
            paused[0] = False
            resume_all(tasks)

        def sink(rank: int, kind: bytes, data: bytes) -> None:
            # One write per frame keeps frames whole; when srun falls behind, stop reading
            # the tasks' pipes (they block, as they would on a full terminal) until it drains.
            write_frame(writer, kind, rank, data)
            if not paused[0] and writer.transport.get_write_buffer_size() > WRITE_BUFFER_BYTES:
                paused[0] = True
                pause_all(tasks)
                asyncio.ensure_future(resume_when_drained())

        cwd, moved = working_directory(str(message["cwd"]))
        outputs = OutputFiles(bool(message.get("append")), message["cwd"] if moved else None)
        try:
            # Every file is opened before the first task starts (truncated once, shared).
            fds = [tuple(outputs.open(resolve(spec[key], cwd)) if spec.get(key) else None
                         for key in ("stdout_file", "stderr_file"))
                   for spec in message["tasks"]]
            for position, (spec, (out, err)) in enumerate(zip(message["tasks"], fds)):
                # slurmstepd's chdir message: once for the node, once for each task.
                notes = [moved + "\n"] * (2 if position == 0 else 1) if moved else []
                stdin_file = spec.get("stdin_file")
                tasks.append(await start_task(
                    spec["rank"], message["argv"], spec["env"], cwd, sink,
                    stdin_piped=bool(spec.get("stdin")), stdout_fd=out, stderr_fd=err,
                    stdin_file=resolve(stdin_file, cwd) if stdin_file else None,
                    notes=notes))
        except OSError as e:
            await terminate(tasks, ORPHAN_GRACE_S)
            writer.write(encode_json({"type": "launch_failed", "error": str(e)}))
            await writer.drain()
            return
        finally:
            outputs.close()
        self.running[step_id] = tasks
        writer.write(encode_json({"type": "started",
                                  "pids": {str(t.rank): t.pid for t in tasks}}))
        await writer.drain()
        inbound = asyncio.ensure_future(self._inbound(reader, tasks))
        ended: List[Dict[str, Any]] = []
        exits = [asyncio.ensure_future(self._report_exit(t, writer, lock, ended))
                 for t in tasks]
        try:
            done = asyncio.ensure_future(asyncio.gather(*exits))
            await asyncio.wait([done, inbound], return_when=asyncio.FIRST_COMPLETED)
            if not done.done():
                # srun went away: its tasks must not outlive it.
                await terminate(tasks, ORPHAN_GRACE_S)
                await asyncio.gather(done, return_exceptions=True)
            else:
                async with lock:
                    writer.write(encode_json({"type": "done"}))
                    await writer.drain()
        finally:
            inbound.cancel()
            self.running.pop(step_id, None)

    async def _report_exit(self, task: Task, writer: asyncio.StreamWriter,
                           lock: asyncio.Lock, ended: List[Dict[str, Any]]) -> None:
        """Report a task's end; tasks ending together go in one message, as slurmstepd
        reports them (so srun prints ``tasks 0-3: …`` on one line)."""
        ended.append(await wait_task(task))
        await asyncio.sleep(EXIT_BATCH_S)
        if not ended:
            return
        batch = list(ended)
        del ended[:]
        async with lock:
            writer.write(encode_json({"type": "exits", "results": batch}))
            await writer.drain()

    async def _inbound(self, reader: asyncio.StreamReader, tasks: List[Task]) -> None:
        """stdin data and signals from srun, until srun closes the connection."""
        by_rank = {t.rank: t for t in tasks}
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
                    for each in tasks:
                        each.signal(int(request["signal"]))
