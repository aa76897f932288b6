"""``srun`` inside an allocation: create a step and fan its tasks out to the node agents.

1. Options: srun's own table; the job's ``SLURM_*`` variables are its input environment.
2. Layout: the step's nodes and each node's ranks (block/cyclic/plane/arbitrary).
3. Step id from node 0; one authenticated connection per node; ``launch`` with each task's
   environment; output streamed back, line-buffered per task, ``--label`` prefixed; stdin
   broadcast (Slurm's default ``--input=all``) or sent to one task; signals forwarded.
4. Exit: the highest task exit code, 128+signal for a signalled task, 1 for launch failures;
   Slurm's ``srun: error: <node>: task <n>: Exited with exit code <c>`` lines.
5. Ends from outside: a node says the step's time limit passed (the step is then TIMEOUT);
   node 0 says the job is ending (srun says it waits for the step, as on slurmctld's "job
   complete" message, and the step is CANCELLED as the job's end left it).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from parsers.errors import SlurmInputError
from sbatch_k8s.runtime.output import OutputRouter
from sbatch_k8s.runtime.protocol import (
    KIND_JSON,
    KIND_STDIN,
    KIND_STDIN_CLOSE,
    KIND_STDERR,
    KIND_STDOUT,
    ProtocolError,
    authenticate,
    decode_json,
    encode_frame,
    encode_json,
    take_over,
    read_frame,
)
from sbatch_k8s.runtime.step_report import failure_lines, step_exit_code
from sbatch_k8s.runtime.stepd import cancel_line

COMMAND = "srun"
FORWARDED_SIGNALS = (signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM)
#: Every signal srun handles while its step runs.
HANDLED_SIGNALS = (signal.SIGINT, signal.SIGCONT, signal.SIGTERM, signal.SIGQUIT) + \
    FORWARDED_SIGNALS


def warn(message: str) -> None:
    """``srun: warning: …`` on stderr."""
    sys.stderr.write(f"{COMMAND}: warning: {message}\n")
    sys.stderr.flush()


def error(message: str) -> None:
    """``srun: error: …`` on stderr."""
    sys.stderr.write(f"{COMMAND}: error: {message}\n")
    sys.stderr.flush()


def node_addresses(environ: Mapping[str, str]) -> Tuple[List[str], List[str]]:
    """Node names and agent addresses of the job, from the runtime's variable."""
    pairs = [item.split("=", 1) for item in environ["SBATCH_K8S_NODE_ADDRS"].split(";") if item]
    return [p[0] for p in pairs], [p[1] for p in pairs]


async def open_agent(address: str, port: int, token: bytes) -> Tuple[
        asyncio.StreamReader, asyncio.StreamWriter]:
    """An authenticated connection to the agent at ``address``."""
    reader, writer = await asyncio.open_connection(address, port, limit=8 << 20)
    await authenticate(reader, writer, token)
    return reader, writer


async def ask(address: str, port: int, token: bytes, message: Dict[str, Any]) -> Dict[str, Any]:
    """One request/response exchange with an agent."""
    reader, writer = await open_agent(address, port, token)
    try:
        writer.write(encode_json(message))
        await writer.drain()
        frame = await read_frame(reader)
        if frame is None:
            raise ProtocolError("the agent closed the connection")
        return decode_json(frame[2])
    finally:
        writer.close()


class NodeSession:
    """srun's connection to one node of the step."""

    def __init__(self, name: str, ranks: Sequence[int], reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.name = name
        self.ranks = list(ranks)
        self.reader = reader
        self.writer = writer
        self.exits: Dict[int, Dict[str, Any]] = {}
        self.lost = False

    def send(self, frame: bytes) -> None:
        try:
            self.writer.write(frame)
        except (ConnectionError, RuntimeError):
            pass

    def signal(self, signum: int) -> None:
        self.send(encode_json({"type": "signal", "signal": signum}))


class StepRun:
    """One step from launch to exit code."""

    def __init__(self, step_id: int, job_id: int, request: Any, names: List[str],
                 router: OutputRouter, stdin_fd: int = 0) -> None:
        self.step_id = step_id
        #: Where the tasks' stdin comes from: srun's own, or the ``-i`` file it opened.
        self.stdin_fd = stdin_fd
        self.job_id = job_id
        self.request = request
        self.names = names
        self.router = router
        self.sessions: List[NodeSession] = []
        self.first_exit = asyncio.Event()
        self.bad_exit = asyncio.Event()
        self.interrupts: List[float] = []
        self.force_terminated = False
        #: The signal srun ended the step with (``-K``, ``-W``, an abort): then the step log
        #: records it CANCELLED with that signal, as slurmctld does.
        self.cancelled_with = 0
        #: A node ended the step at its time limit (``srun -t``): the step is TIMEOUT.
        self.timed_out = False
        #: Node 0 said the job is ending: the step is CANCELLED with its tasks' end.
        self.job_ended = False
        #: "Job step aborted: Waiting up to …" was said (once, as srun says it).
        self.abort_announced = False

    def signal_all(self, signum: int) -> None:
        for session in self.sessions:
            session.signal(signum)

    def _on_frame(self, session: NodeSession, kind: bytes, rank: int, payload: bytes) -> None:
        if kind in (KIND_STDOUT, KIND_STDERR):
            self.router.feed(rank, kind, payload)
            return
        if kind != KIND_JSON:
            return
        try:
            message = decode_json(payload)
        except ProtocolError:
            session.writer.close()
            return
        if message["type"] == "exits":
            self._exited(session, message["results"])
        elif message["type"] == "done":
            session.writer.close()
        elif message["type"] == "time_limit":
            self.timed_out = True
        elif message["type"] == "launch_failed":
            error(f"{session.name}: launch failed: {message.get('error')}")
            for r in session.ranks:
                session.exits[r] = {"rank": r, "status": 1, "signal": 0}
            session.writer.close()

    async def pump(self, session: NodeSession) -> None:
        """Receive one node's frames until its tasks are done (or the node is lost)."""
        receiver = take_over(session.reader, session.writer,
                             lambda kind, rank, payload: self._on_frame(session, kind, rank,
                                                                        payload))
        await receiver.closed
        missing = [r for r in session.ranks if r not in session.exits]
        if missing:
            session.lost = True
            error(f"Node failure on {session.name}")
            self._exited(session, [{"rank": r, "status": 0, "signal": signal.SIGKILL}
                                   for r in missing])

    def _exited(self, session: NodeSession, results: List[Dict[str, Any]]) -> None:
        """Tasks of one node ended (together): flush their output, report failures."""
        for result in results:
            rank = int(result["rank"])
            session.exits[rank] = result
            self.router.finish(rank)
        for name, line in failure_lines([(session.name, r) for r in results]):
            error(f"{name}: {line}")
        self.first_exit.set()
        if any(r.get("status") or r.get("signal") for r in results):
            self.bad_exit.set()

    def results(self) -> List[Tuple[str, Dict[str, Any]]]:
        return [(s.name, s.exits[r]) for s in self.sessions for r in sorted(s.exits)]


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


async def _watch_policies(run: StepRun, kill_wait_s: float) -> None:
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
    from sbatch_k8s.runtime.step_report import rank_ranges

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


def _install_signal_handlers(run: StepRun, loop: asyncio.AbstractEventLoop,
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


def _ignore_signals(loop: asyncio.AbstractEventLoop) -> None:
    """The tasks have ended: like srun, whose signal thread is gone by then, take no more
    signals while the step is recorded (a late SIGTERM says nothing and stops nothing)."""
    for signum in HANDLED_SIGNALS:
        loop.remove_signal_handler(signum)
        signal.signal(signum, signal.SIG_IGN)


async def _stdin_to_tasks(run: StepRun, targets: List[Tuple[NodeSession, int]]) -> None:
    """Forward srun's stdin to ``targets`` (every task by default), then close theirs.

    A reader thread serves every kind of stdin (terminal, pipe, file, /dev/null) alike."""
    loop = asyncio.get_event_loop()
    queue: "asyncio.Queue[bytes]" = asyncio.Queue()

    def reader() -> None:
        try:
            while True:
                data = os.read(run.stdin_fd, 65536)
                loop.call_soon_threadsafe(queue.put_nowait, data)
                if not data:
                    return
        except OSError:
            loop.call_soon_threadsafe(queue.put_nowait, b"")

    if targets:
        threading.Thread(target=reader, name="srun-stdin", daemon=True).start()
        while True:
            data = await queue.get()
            if not data:
                break
            for session, rank in targets:
                session.send(encode_frame(KIND_STDIN, rank, data))
    for session, rank in targets:
        session.send(encode_frame(KIND_STDIN_CLOSE, rank, b""))


def stdin_targets(run: StepRun, request: Any) -> List[Tuple[NodeSession, int]]:
    """Which tasks read srun's stdin: all (default), one (``-i <task>``) or none."""
    from parsers.values.filename import parse_step_io

    spec = parse_step_io(request.input) if request.input else None
    pairs = [(s, r) for s in run.sessions for r in s.ranks]
    if spec is None or spec.kind in ("all", "pattern"):
        return pairs
    if spec.kind == "task":
        return [(s, r) for s, r in pairs if r == spec.task_id]
    return []


async def launch_step(run: StepRun, layout: Any, task_envs: Dict[int, Dict[str, str]],
                      addresses: List[str], port: int, token: bytes, cwd: str,
                      io_files: Dict[int, Dict[str, Optional[str]]], stdin_ranks: set,
                      kill_wait_s: float = 30.0, time_limit_s: Optional[float] = None) -> int:
    """Connect, launch, stream, and return the step's exit code. ``time_limit_s`` is the
    step's time limit (``-t``), which each node enforces."""
    loop = asyncio.get_event_loop()
    opened = await asyncio.gather(*(open_agent(addresses[i], port, token)
                                    for i in layout.node_indices), return_exceptions=True)
    for position, (node_index, ranks, conn) in enumerate(zip(layout.node_indices, layout.ranks,
                                                             opened)):
        if isinstance(conn, BaseException):
            for other in opened:
                if not isinstance(other, BaseException):
                    other[1].close()
            raise SlurmInputError(f"Unable to create step for job {run.job_id}: cannot reach "
                                  f"node {run.names[node_index]} ({conn})", exit_code=1)
        session = NodeSession(run.names[node_index], ranks, conn[0], conn[1])
        tasks = [dict(rank=r, env=task_envs[r], stdin=r in stdin_ranks, **io_files[r])
                 for r in ranks]
        session.send(encode_json({"type": "launch", "step_id": run.step_id,
                                  "job_id": run.job_id, "node_position": position,
                                  "time_limit_s": time_limit_s,
                                  "argv": list(run.request.command), "cwd": cwd,
                                  "append": run.request.open_mode == "append",
                                  "tasks": tasks}))
        run.sessions.append(session)
    _install_signal_handlers(run, loop, kill_wait_s)
    pumps = [asyncio.ensure_future(run.pump(s)) for s in run.sessions]
    feeders = [asyncio.ensure_future(_stdin_to_tasks(run, [
        (s, r) for s, r in stdin_targets(run, run.request) if r in stdin_ranks]))]
    policies = asyncio.ensure_future(_watch_policies(run, kill_wait_s))
    await asyncio.gather(*pumps)
    _ignore_signals(loop)
    for extra in feeders + [policies]:
        extra.cancel()
    for session in run.sessions:
        session.writer.close()
    if not run.force_terminated and any(
            r.get("signal") in (signal.SIGTERM, signal.SIGKILL) for _, r in run.results()):
        sys.stderr.write(f"{COMMAND}: Force Terminated StepId={run.job_id}.{run.step_id}\n")
    return step_exit_code(run.results())
