"""``srun`` inside an allocation: create a step and fan its tasks out to the node agents.

1. Options: srun's own table; the job's ``SLURM_*`` variables are its input environment.
2. Layout: the step's nodes and each node's ranks (block/cyclic/plane/arbitrary).
3. Step id from node 0; one authenticated connection per node; ``launch`` with each task's
   environment; output streamed back, line-buffered per task, ``--label`` prefixed; stdin
   broadcast (Slurm's default ``--input=all``) or sent to one task; signals forwarded.
4. Exit: the highest task exit code, 128+signal for a signalled task, 1 for launch failures;
   Slurm's ``srun: error: <node>: task <n>: Exited with exit code <c>`` lines
   (:mod:`sessions` follows the running step).
5. Ends from outside (:mod:`signals`): srun's own signals, ``-K``/``-W``, ``scancel``
   of the step, a node saying the step's time limit passed (the step is then TIMEOUT), node 0
   saying the job is ending (srun says it waits for the step, as on slurmctld's "job
   complete" message, and the step is CANCELLED as the job's end left it).

This module connects, launches, forwards stdin and waits; the runtime's ``srun`` command
(:mod:`step`) prepares the request.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from typing import Any, Dict, List, Mapping, Optional, Tuple

from parsers.input_errors import SlurmInputError
from sbatch_k8s.runtime.protocol import (
    KIND_STDIN,
    KIND_STDIN_CLOSE,
    ProtocolError,
    authenticate,
    decode_json,
    encode_frame,
    encode_json,
    read_frame,
)
from sbatch_k8s.runtime.srun.signals import ignore_signals, install_signal_handlers, \
    watch_policies
from sbatch_k8s.runtime.srun.report import step_exit_code
from sbatch_k8s.runtime.srun.sessions import COMMAND, NodeSession, StepRun


def node_addresses(environ: Mapping[str, str]) -> Tuple[List[str], List[str]]:
    """Node names and agent addresses of the job, from the runtime's variable."""
    pairs = [item.split("=", 1) for item in environ["SBATCHK8S_NODE_ADDRS"].split(";") if item]
    return [p[0] for p in pairs], [p[1] for p in pairs]


#: How long srun keeps trying a node whose agent refuses connections: one that registered
#: but does not listen yet (a pod still starting its runtime: slow on a loaded node or a first
#: run that compiles its modules), as slurmd answers srun only once it is up.
AGENT_LISTEN_WAIT_S = 30.0
AGENT_RETRY_S = 0.2


async def open_agent(address: str, port: int, token: bytes) -> Tuple[
        asyncio.StreamReader, asyncio.StreamWriter]:
    """An authenticated connection to the agent at ``address`` (refused connections are
    tried again for :data:`AGENT_LISTEN_WAIT_S`)."""
    loop = asyncio.get_event_loop()
    deadline = loop.time() + AGENT_LISTEN_WAIT_S
    while True:
        try:
            reader, writer = await asyncio.open_connection(address, port, limit=8 << 20)
            break
        except ConnectionRefusedError:
            if loop.time() + AGENT_RETRY_S > deadline:
                raise
            await asyncio.sleep(AGENT_RETRY_S)
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
                      kill_wait_s: float = 30.0, time_limit_s: Optional[float] = None,
                      acctg_interval_s: float = 0.0) -> int:
    """Connect, launch, stream, and return the step's exit code. ``time_limit_s`` is the
    step's time limit (``-t``), which each node enforces; ``acctg_interval_s`` how often the
    nodes sample the tasks (0: only at their end)."""
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
                                  "acctg_interval_s": acctg_interval_s,
                                  "argv": list(run.request.command), "cwd": cwd,
                                  "append": run.request.open_mode == "append",
                                  "tasks": tasks}))
        run.sessions.append(session)
    install_signal_handlers(run, loop, kill_wait_s)
    pumps = [asyncio.ensure_future(run.pump(s)) for s in run.sessions]
    feeders = [asyncio.ensure_future(_stdin_to_tasks(run, [
        (s, r) for s, r in stdin_targets(run, run.request) if r in stdin_ranks]))]
    policies = asyncio.ensure_future(watch_policies(run, kill_wait_s))
    await asyncio.gather(*pumps)
    ignore_signals(loop)
    for extra in feeders + [policies]:
        extra.cancel()
    for session in run.sessions:
        session.writer.close()
    for rank in sorted({r for s in run.sessions for r in s.ranks}):
        run.router.finish(rank)      # output that came after a task's exit (its leftovers)
    if not run.force_terminated and any(
            r.get("signal") in (signal.SIGTERM, signal.SIGKILL) and not r.get("oom")
            for _, r in run.results()):
        sys.stderr.write(f"{COMMAND}: Force Terminated StepId={run.job_id}.{run.step_id}\n")
    return step_exit_code(run.results())
