"""Starting a step's tasks on one node and pumping their output.

Each task runs in its own session (so a signal reaches everything it started), with the
environment and working directory srun computed for it. stdout/stderr are pipes read in
chunks and handed to ``sink`` (the agent frames them to srun) — or files opened here, on the
task's node, when srun asked for per-task/per-node output files, as slurmstepd does.
"""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, Sequence

from sbatch_k8s.runtime.protocol import KIND_STDERR, KIND_STDOUT

CHUNK = 65536
Sink = Callable[[int, bytes, bytes], Awaitable[None]]

#: How slurmstepd reports an exec failure (then the task exits 2, as with a shell).
EXEC_FAILED = "slurmstepd: error: execve(): {cmd}: {reason}\n"


class Task:
    """One running task of a step on this node."""

    def __init__(self, rank: int, process: "asyncio.subprocess.Process") -> None:
        self.rank = rank
        self.process = process
        self.pumps: List["asyncio.Task[None]"] = []

    def signal(self, signum: int) -> None:
        """Deliver ``signum`` to the task's whole process group."""
        try:
            os.killpg(self.process.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass


def _open_output(path: str, append: bool) -> int:
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
    return os.open(path, flags, 0o644)


async def _pump(rank: int, kind: bytes, stream: Optional[asyncio.StreamReader],
                sink: Sink) -> None:
    if stream is None:
        return
    while True:
        data = await stream.read(CHUNK)
        if not data:
            return
        await sink(rank, kind, data)


def _exec_error(argv: Sequence[str], env: Mapping[str, str], cwd: str) -> Optional[str]:
    """slurmstepd's message when ``argv[0]`` cannot be executed, else None."""
    program = argv[0] if argv else ""
    if "/" in program:
        candidates = [program if os.path.isabs(program) else os.path.join(cwd, program)]
    else:
        candidates = [os.path.join(d or ".", program)
                      for d in env.get("PATH", os.defpath).split(os.pathsep)]
    for path in candidates:
        if os.path.isfile(path):
            if os.access(path, os.X_OK):
                return None
            return EXEC_FAILED.format(cmd=program, reason="Permission denied")
    return EXEC_FAILED.format(cmd=program, reason="No such file or directory")


async def start_task(
    rank: int,
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: str,
    sink: Sink,
    stdin_piped: bool,
    stdout_file: Optional[str] = None,
    stderr_file: Optional[str] = None,
    append: bool = False,
) -> Task:
    """Start one task; its output goes to ``sink`` unless redirected to files."""
    failure = _exec_error(argv, env, cwd)
    if failure is not None:
        # Run a tiny shell that reports like slurmstepd and exits 2, so the exit path and
        # the output path stay the same as for any task.
        argv = ["/bin/sh", "-c", 'printf "%s" "$1" >&2; exit 2', "sh", failure]
    out_fd = _open_output(stdout_file, append) if stdout_file else None
    err_fd = _open_output(stderr_file, append) if stderr_file else None
    try:
        process = await asyncio.create_subprocess_exec(
            *argv, env=dict(env), cwd=cwd,
            stdin=asyncio.subprocess.PIPE if stdin_piped else asyncio.subprocess.DEVNULL,
            stdout=out_fd if out_fd is not None else asyncio.subprocess.PIPE,
            stderr=err_fd if err_fd is not None else asyncio.subprocess.PIPE,
            start_new_session=True, limit=CHUNK)
    finally:
        for fd in (out_fd, err_fd):
            if fd is not None:
                os.close(fd)
    task = Task(rank, process)
    task.pumps = [asyncio.ensure_future(_pump(rank, KIND_STDOUT, process.stdout, sink)),
                  asyncio.ensure_future(_pump(rank, KIND_STDERR, process.stderr, sink))]
    return task


async def wait_task(task: Task) -> Dict[str, Any]:
    """Wait for the task and all its output; its exit as ``{"rank", "status", "signal"}``."""
    code = await task.process.wait()
    await asyncio.gather(*task.pumps, return_exceptions=True)
    if code < 0:
        return {"rank": task.rank, "status": 0, "signal": -code}
    return {"rank": task.rank, "status": code, "signal": 0}


async def terminate(tasks: Sequence[Task], grace_s: float) -> None:
    """SIGTERM (after SIGCONT) every task, SIGKILL whatever is left after ``grace_s``."""
    alive = [t for t in tasks if t.process.returncode is None]
    for task in alive:
        task.signal(signal.SIGCONT)
        task.signal(signal.SIGTERM)
    if not alive:
        return
    try:
        await asyncio.wait_for(asyncio.gather(*(t.process.wait() for t in alive)), grace_s)
    except asyncio.TimeoutError:
        for task in alive:
            task.signal(signal.SIGKILL)
