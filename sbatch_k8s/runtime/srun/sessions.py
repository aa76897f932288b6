"""A step as its srun sees it while it runs: one connection per node, the frames coming back.

Each node's frames (see :mod:`sbatch_k8s.runtime.protocol`) carry the tasks' output, which goes to
the :class:`task_output.OutputRouter` (line-buffered per task, ``--label`` prefixed), and JSON
messages: the tasks' exits (srun's ``srun: error: <node>: task <n>: …`` lines), the node's ``done``,
a failed launch, or the step's time limit having passed on that node. A node whose connection drops
before its tasks' exits arrived is a lost node ("Node failure").
"""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from sbatch_k8s.runtime.srun.task_output import OutputRouter
from sbatch_k8s.runtime.protocol import (
    KIND_JSON,
    KIND_STDERR,
    KIND_STDOUT,
    ProtocolError,
    decode_json,
    encode_json,
    take_over,
)
from sbatch_k8s.runtime.srun.report import failure_lines, oom_line

COMMAND = "srun"


def warn(message: str) -> None:
    """``srun: warning: …`` on stderr."""
    sys.stderr.write(f"{COMMAND}: warning: {message}\n")
    sys.stderr.flush()


def error(message: str) -> None:
    """``srun: error: …`` on stderr."""
    sys.stderr.write(f"{COMMAND}: error: {message}\n")
    sys.stderr.flush()


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
        #: "task N: Out Of Memory" was said (once, as srun says it).
        self.oom_said = False
        #: Each task's latest figures by rank (sampled while it runs, final at its exit), and
        #: who hears the step's usage so far once every task has some (node 0's registry,
        #: for sstat).
        self.live_usage: Dict[int, Dict[str, Any]] = {}
        self.on_usage: Optional[Callable[[List[Dict[str, Any]]], None]] = None

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
        elif message["type"] == "usage":
            self._figures(list(message.get("tasks") or []))
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

    def _figures(self, figures: List[Dict[str, Any]]) -> None:
        """Tasks' latest figures from a node; the step's fold to ``on_usage`` once every
        task of the step has reported."""
        for figure in figures:
            self.live_usage[int(figure["task"])] = figure
        wanted = sum(len(s.ranks) for s in self.sessions)
        if self.on_usage is not None and len(self.live_usage) >= wanted:
            self.on_usage(list(self.live_usage.values()))

    def _exited(self, session: NodeSession, results: List[Dict[str, Any]]) -> None:
        """Tasks of one node ended (together): flush their output, report failures."""
        for result in results:
            if isinstance(result.get("usage"), dict):
                self.live_usage[int(result["rank"])] = result["usage"]
        for result in results:
            rank = int(result["rank"])
            session.exits[rank] = result
            self.router.finish(rank)
        for name, line in failure_lines([(session.name, r) for r in results]):
            error(f"{name}: {line}")
        oom = oom_line([(session.name, r) for r in results])
        if oom is not None and not self.oom_said:
            self.oom_said = True      # srun says it once (its oom_printed)
            error(f"{oom[0]}: {oom[1]}")
        self.first_exit.set()
        if any(r.get("status") or r.get("signal") for r in results):
            self.bad_exit.set()

    def results(self) -> List[Tuple[str, Dict[str, Any]]]:
        return [(s.name, s.exits[r]) for s in self.sessions for r in sorted(s.exits)]

    def task_figures(self) -> List[Dict[str, Any]]:
        """The ended tasks' accounting figures (a lost node's tasks have none)."""
        return [r["usage"] for _, r in self.results() if isinstance(r.get("usage"), dict)]
