"""Starting a step's tasks on one node and passing their output on.

Each task runs in its own session (so a signal reaches everything it started), with the
environment and working directory srun computed for it. Its stdout/stderr pipes are read on
the event loop, each chunk handed straight to ``sink`` (the agent frames it to srun): no
stream buffer in between, large reads, and the pipes pause while srun falls behind. The task
is reaped with its rusage (:mod:`child_process`), which its accounting closes with.
Output files (per-task/per-node ``-o``/``-e``) are opened on the task's node, once per file
(see :mod:`task_files`), as slurmstepd does.
"""

from __future__ import annotations

import asyncio
import errno
import os
import signal
import subprocess
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from sbatch_k8s.runtime.protocol import KIND_STDERR, KIND_STDOUT
from sbatch_k8s.runtime.stepd.child_process import Reaped, reap

#: Largest chunk read from a task's output pipe at once.
READ_BYTES = 1 << 20
#: Pipe capacity asked for task output (Linux F_SETPIPE_SZ): fewer, larger reads.
PIPE_BYTES = 1 << 20
F_SETPIPE_SZ = 1031
Sink = Callable[[int, bytes, bytes], None]

#: How slurmstepd reports an exec failure (then the task exits with the errno).
EXEC_FAILED = "slurmstepd: error: execve(): {cmd}: {reason}\n"
_KINDS = {1: KIND_STDOUT, 2: KIND_STDERR}


class TaskProtocol:
    """Output chunks to the sink as they arrive; the end (with its rusage) and the pipes'
    ends as futures."""

    def __init__(self, rank: int, sink: Sink) -> None:
        self.rank = rank
        self.sink = sink
        self.open_pipes = 0
        loop = asyncio.get_event_loop()
        self.exited: "asyncio.Future[int]" = loop.create_future()
        self.drained: "asyncio.Future[None]" = loop.create_future()
        self.rusage: Optional["os.struct_rusage"] = None

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self.sink(self.rank, _KINDS[fd], data)

    def pipe_connection_lost(self, fd: int) -> None:
        self.open_pipes -= 1
        if self.open_pipes <= 0 and not self.drained.done():
            self.drained.set_result(None)

    def reaped(self, end: "asyncio.Future[Reaped]") -> None:
        result = end.result()
        self.rusage = result.rusage
        if not self.exited.done():
            self.exited.set_result(result.returncode)


class _PipeReader(asyncio.Protocol):
    """One of a task's output pipes, feeding its :class:`TaskProtocol`."""

    def __init__(self, task: TaskProtocol, fd: int) -> None:
        self.task = task
        self.fd = fd

    def data_received(self, data: bytes) -> None:
        self.task.pipe_data_received(self.fd, data)

    def eof_received(self) -> bool:
        return False

    def connection_lost(self, exc: Optional[Exception]) -> None:
        self.task.pipe_connection_lost(self.fd)


def _widen(pipe: asyncio.BaseTransport) -> None:
    """Larger reads and, where the system allows, a larger pipe."""
    try:
        pipe.max_size = READ_BYTES  # type: ignore[attr-defined]
    except AttributeError:
        pass
    handle = pipe.get_extra_info("pipe")
    if handle is None:
        return
    try:
        import fcntl

        fcntl.fcntl(handle.fileno(), F_SETPIPE_SZ, PIPE_BYTES)
    except (OSError, ValueError, AttributeError, ImportError):
        pass


class Task:
    """One running task of a step on this node: its process, its pipes, how it ended."""

    def __init__(self, rank: int, popen: "subprocess.Popen[bytes]", protocol: TaskProtocol,
                 pipes: Dict[int, asyncio.BaseTransport]) -> None:
        self.rank = rank
        self.pid = popen.pid
        #: Kept until the task is reaped (:mod:`child_process`).
        self.popen = popen
        self.protocol = protocol
        #: The pipe transports by the task's descriptor (0 stdin, 1 stdout, 2 stderr).
        self.pipes = pipes

    @property
    def running(self) -> bool:
        return not self.protocol.exited.done()

    @property
    def rusage(self) -> Optional["os.struct_rusage"]:
        """The task's rusage once reaped (its CPU and that of what it waited for)."""
        return self.protocol.rusage

    def signal(self, signum: int) -> None:
        """Deliver ``signum`` to the task's whole process group."""
        try:
            os.killpg(self.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass

    def write_stdin(self, data: bytes) -> None:
        pipe = self.pipes.get(0)
        if pipe is not None and not pipe.is_closing():
            pipe.write(data)  # type: ignore[attr-defined]

    def close_stdin(self) -> None:
        pipe = self.pipes.get(0)
        if pipe is not None:
            pipe.close()

    def pause_output(self) -> None:
        for fd in (1, 2):
            pipe = self.pipes.get(fd)
            if pipe is not None and not pipe.is_closing():
                pipe.pause_reading()  # type: ignore[attr-defined]

    def resume_output(self) -> None:
        for fd in (1, 2):
            pipe = self.pipes.get(fd)
            if pipe is not None and not pipe.is_closing():
                pipe.resume_reading()  # type: ignore[attr-defined]

    def close(self) -> None:
        """Close the task's pipes."""
        for pipe in self.pipes.values():
            pipe.close()


def _exec_error(argv: Sequence[str], env: Mapping[str, str],
                cwd: str) -> Optional[Tuple[str, int]]:
    """slurmstepd's message and exit code (the errno) when ``argv[0]`` cannot be executed,
    else None. srun made a relative path absolute against the working directory."""
    program = argv[0] if argv else ""
    if "/" in program:
        shown = program if os.path.isabs(program) else os.path.join(cwd, program)
        candidates = [shown]
    else:
        shown = program
        candidates = [os.path.join(d or ".", program)
                      for d in env.get("PATH", os.defpath).split(os.pathsep)]
    for path in candidates:
        if os.path.exists(path):
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return None
            return (EXEC_FAILED.format(cmd=shown, reason=os.strerror(errno.EACCES)),
                    errno.EACCES)
    return EXEC_FAILED.format(cmd=shown, reason=os.strerror(errno.ENOENT)), errno.ENOENT


async def start_task(
    rank: int,
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: str,
    sink: Sink,
    stdin_piped: bool,
    stdout_fd: Optional[int] = None,
    stderr_fd: Optional[int] = None,
    stdin_file: Optional[str] = None,
    notes: Sequence[str] = (),
) -> Task:
    """Start one task in ``cwd``; its output goes to ``sink`` unless redirected to output
    files (descriptors the caller opened and keeps, shared by the tasks writing there), its
    input is srun's (``stdin_piped``), a file opened here (``stdin_file``) or nothing.
    ``notes`` are slurmstepd's lines for the task's stderr before it starts."""
    for note in notes:
        if stderr_fd is not None:
            os.write(stderr_fd, note.encode())
        else:
            sink(rank, KIND_STDERR, note.encode())
    failure = _exec_error(argv, env, cwd)
    stdin: Any = subprocess.PIPE if stdin_piped else subprocess.DEVNULL
    if stdin_file is not None:
        try:
            stdin = os.open(stdin_file, os.O_RDONLY)
        except OSError as e:
            message = (f"slurmstepd: error: Could not open stdin file {stdin_file}: "
                       f"{os.strerror(e.errno or 0)}\n")
            failure = (message, 1)
            stdin = subprocess.DEVNULL
    if failure is not None:
        # A tiny shell reports like slurmstepd and exits with the errno, so the exit path
        # and the output path stay those of any task.
        message, code = failure
        argv = ["/bin/sh", "-c", f'printf "%s" "$1" >&2; exit {code}', "sh", message]
    try:
        popen = subprocess.Popen(
            list(argv), env=dict(env), cwd=cwd, stdin=stdin,
            stdout=stdout_fd if stdout_fd is not None else subprocess.PIPE,
            stderr=stderr_fd if stderr_fd is not None else subprocess.PIPE,
            start_new_session=True)
    finally:
        if isinstance(stdin, int) and stdin >= 0:
            os.close(stdin)
    return await _connect(rank, popen, sink)


async def _connect(rank: int, popen: "subprocess.Popen[bytes]", sink: Sink) -> Task:
    """The started task's pipes on the event loop, and its reaping."""
    loop = asyncio.get_event_loop()
    protocol = TaskProtocol(rank, sink)
    pipes: Dict[int, asyncio.BaseTransport] = {}
    for fd, stream in ((1, popen.stdout), (2, popen.stderr)):
        if stream is not None:
            protocol.open_pipes += 1
            pipes[fd], _ = await loop.connect_read_pipe(
                lambda fd=fd: _PipeReader(protocol, fd), stream)  # type: ignore[misc]
            _widen(pipes[fd])
    if protocol.open_pipes == 0:
        protocol.drained.set_result(None)
    if popen.stdin is not None:
        pipes[0], _ = await loop.connect_write_pipe(asyncio.Protocol, popen.stdin)
    reap(popen).add_done_callback(protocol.reaped)
    return Task(rank, popen, protocol, pipes)


async def wait_exit(task: Task) -> int:
    """Wait for the task's own process to end; its return code (negative: a signal)."""
    return await task.protocol.exited


async def wait_output(task: Task, timeout_s: Optional[float]) -> bool:
    """Wait (up to ``timeout_s``; None: for ever) until every writer has closed the
    task's output pipes; True when they have."""
    try:
        await asyncio.wait_for(asyncio.shield(task.protocol.drained), timeout_s)
    except asyncio.TimeoutError:
        return False
    return True


def exit_result(task: Task, code: int) -> Dict[str, Any]:
    """A task's exit as ``{"rank", "status", "signal"}``."""
    if code < 0:
        return {"rank": task.rank, "status": 0, "signal": -code}
    return {"rank": task.rank, "status": code, "signal": 0}


def session_members(session: int, proc: str = "/proc") -> List[int]:
    """Processes of session ``session`` (a task started with its own session is its
    session's leader, so this is everything it started that did not leave the session)."""
    members = []
    try:
        entries = os.listdir(proc)
    except OSError:
        return members
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(os.path.join(proc, entry, "stat"), "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid pgrp session …; comm may hold spaces and parentheses.
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 3 and fields[3] == str(session).encode():
            members.append(int(entry))
    return members


def kill_leftovers(tasks: Sequence[Task]) -> None:
    """SIGKILL whatever the tasks left running, as Slurm's process tracking does when a
    step's tasks have ended on a node: each task's process group and session."""
    for task in tasks:
        try:
            os.killpg(task.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for pid in session_members(task.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


async def terminate(tasks: Sequence[Task], grace_s: float) -> None:
    """SIGTERM (after SIGCONT) every task, SIGKILL whatever is left after ``grace_s``."""
    alive = [t for t in tasks if t.running]
    for task in alive:
        task.signal(signal.SIGCONT)
        task.signal(signal.SIGTERM)
    if not alive:
        return
    try:
        await asyncio.wait_for(asyncio.gather(*(asyncio.shield(t.protocol.exited)
                                                for t in alive)), grace_s)
    except asyncio.TimeoutError:
        for task in alive:
            task.signal(signal.SIGKILL)


def pause_all(tasks: List[Task]) -> None:
    """Stop reading the tasks' output (srun is behind)."""
    for task in tasks:
        task.pause_output()


def resume_all(tasks: List[Task]) -> None:
    """Read the tasks' output again."""
    for task in tasks:
        task.resume_output()
