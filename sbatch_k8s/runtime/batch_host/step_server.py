"""Node 0's step server: ``srun`` in a batch script without a Python start-up per step.

Starting Python and importing the step machinery (asyncio, the option table, the value
grammars) costs more than launching a step itself. Before its event loop exists, node 0
forks this server, which loads that machinery once; the batch script's ``srun`` is then a small
client (:mod:`sbatch_k8s.runtime.warm.fork_client`) handing the server its arguments, environment,
working directory and stdio, and the server forks a child that runs the step exactly as the ``srun``
process would have. The socket lives in the node's spool; its path is in ``$SBATCHK8S_STEP_SERVER``.
When it cannot be reached (another pod's path, a failed start, ``SBATCHK8S_SERVER=0``), ``srun``
runs the step itself. The server ends with node 0.
"""

from __future__ import annotations

import os
import signal
import socket
from typing import List, NamedTuple, Optional

from sbatch_k8s.runtime.warm.fork_server import ForkServer, Request, kill, listen

SOCKET_NAME = "step.sock"
ENVIRONMENT_VARIABLE = "SBATCHK8S_STEP_SERVER"


class StepServer(ForkServer):
    """Serves ``srun`` until the node process that forked it is gone."""

    poll_s = 1.0

    def __init__(self, listener: socket.socket, parent: int) -> None:
        super().__init__(listener)
        self.parent = parent

    def accepts(self, request: Request) -> bool:
        return request.command == "srun" and super().accepts(request)

    def done(self) -> bool:
        return os.getppid() != self.parent

    def run_command(self, command: str, argv: List[str]) -> int:
        from sbatch_k8s.runtime.srun.step import main

        return main(argv, os.environ)


class Started(NamedTuple):
    """A running step server: where it listens, and its process."""

    path: str
    pid: int

    def stop(self) -> None:
        """End the server (the job is over) and reap it."""
        kill(self.pid, signal.SIGTERM)
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def preload() -> None:
    """What every step needs, loaded once in the server instead of in each step."""
    import parsers.slurm_env  # noqa: F401
    import parsers.steps  # noqa: F401
    import parsers.values.export  # noqa: F401
    import sbatch_k8s.runtime.srun.step  # noqa: F401
    from parsers.values.grammar import build_all

    build_all()


def start(spool: str) -> Optional[Started]:
    """Fork the step server (call before any event loop exists), or None when it could not
    start (``srun`` then runs steps itself). The socket listens before this returns; the
    server loads what steps need after the fork, so the job does not wait for it (an early
    ``srun`` waits in the listen queue instead)."""
    path = os.path.join(spool, SOCKET_NAME)
    try:
        listener = listen(path)
    except OSError:
        return None
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        listener.close()
        return None
    if pid == 0:
        code = 1
        try:
            preload()
            server = StepServer(listener, parent)
            server.serve()
            server.end_children()
            code = 0
        finally:
            os._exit(code)
    listener.close()
    return Started(path, pid)
