"""Dispatch of the runtime's commands: ``node``, ``run`` (platform mode), ``srun``,
``scontrol``, ``squeue``, ``scancel``, ``sbatch``. When started as PID 1 (a container's first
process), ``node`` and ``run`` fork: the parent reaps orphaned processes and forwards signals,
the child runs the command."""

from __future__ import annotations

import os
import signal
import sys
from typing import Callable, Dict, List, Mapping

from parsers.own_variables import adopt_former_names

Command = Callable[[List[str], Mapping[str, str]], int]


def _commands() -> Dict[str, Command]:
    def node(argv: List[str], environ: Mapping[str, str]) -> int:
        from sbatch_k8s.runtime.agent.node import main as run

        return run(argv, environ)

    def srun(argv: List[str], environ: Mapping[str, str]) -> int:
        server = environ.get("SBATCHK8S_STEP_SERVER")
        if server and environ.get("SBATCHK8S_SERVER") != "0":
            from sbatch_k8s.runtime.warm.fork_client import run_on_server

            code = run_on_server(server, "srun", argv)
            if code is not None:
                return code
        from sbatch_k8s.runtime.srun.step import main as run

        return run(argv, environ)

    def own_job(name: str) -> Command:
        def command(argv: List[str], environ: Mapping[str, str]) -> int:
            from sbatch_k8s.runtime.job_commands import run

            return run(name, argv, environ)
        return command

    def run(argv: List[str], environ: Mapping[str, str]) -> int:
        from sbatch_k8s.runtime.platform.run import main as run_platform

        return run_platform(argv, environ)

    return {"node": node, "run": run, "srun": srun, "scontrol": own_job("scontrol"),
            "squeue": own_job("squeue"), "scancel": own_job("scancel"),
            "sbatch": own_job("sbatch")}


def _be_init(child: int) -> int:
    """PID 1 duties: forward signals to ``child``, reap every orphan, exit as the child."""
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1,
                   signal.SIGUSR2, signal.SIGQUIT):
        signal.signal(signum, lambda s, _f: os.kill(child, s))
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            return 1
        except InterruptedError:
            continue
        if pid == child:
            if os.WIFSIGNALED(status):
                return 128 + os.WTERMSIG(status)
            return os.WEXITSTATUS(status)


def main() -> None:
    """Entry point: ``<runtime> <command> [args…]``."""
    args = sys.argv[1:]
    commands = _commands()
    if not args or args[0] not in commands:
        sys.stderr.write("usage: runtime {" + ",".join(commands) + "} ...\n")
        raise SystemExit(2)
    name, rest = args[0], args[1:]
    adopt_former_names(os.environ)
    if name in ("node", "run") and os.getpid() == 1:
        child = os.fork()
        if child:
            raise SystemExit(_be_init(child))
    if name in ("node", "run"):
        raise SystemExit(commands[name](rest, os.environ))
    # a command inside a job: what a tool stripped from its environment, the node knows
    # (into os.environ: srun hands it to node 0's step server)
    from sbatch_k8s.runtime.agent.node_file import complete_environment

    complete_environment(os.environ)
    raise SystemExit(commands[name](rest, os.environ))
