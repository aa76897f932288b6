"""The command client: Slurm-fast commands without a Python start-up per command.

Slurm's commands answer in a few milliseconds because a daemon does the work. Here a
per-user command server (:mod:`sbatch_k8s.server`) keeps every module and grammar loaded;
each command is a tiny client that hands the server its arguments, working directory,
environment and its stdin/stdout/stderr file descriptors (``SCM_RIGHTS``) over a Unix socket
in the state directory. The server forks a child that runs the command exactly as this
process would — same files, same environment — and the client forwards signals to it and
exits with its exit code.

When there is no server (first use, after an upgrade, ``SBATCHK8S_SERVER=0``) the client
starts one in the background and runs the command itself, so the result never depends on the
server. The client itself is :mod:`sbatch_k8s.runtime.warm.fork_client` (shared with ``srun``
inside jobs); like it, this module imports nothing costly.
"""

from __future__ import annotations

import os
import sys

from parsers.own_variables import adopt_former_names
from sbatch_k8s.runtime.warm.fork_client import PACKAGE_ROOT
from sbatch_k8s.runtime.warm.fork_client import run_on_server as _served

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs milliseconds this module must not spend
    from typing import List, Mapping, MutableMapping, Optional


def socket_path(environ: Mapping[str, str]) -> str:
    """The server's socket: ``<state dir>/server.sock``."""
    from sbatch_k8s.paths import state_dir

    return os.path.join(state_dir(environ), "server.sock")


def run_on_server(command: str, argv: List[str]) -> Optional[int]:
    """The command's exit code from the server, or None when it must run here."""
    if os.environ.get("SBATCHK8S_SERVER") == "0":
        return None
    path = socket_path(os.environ)
    return _served(path, command, argv, on_absent=lambda: start_server(path))


def start_server(path: str) -> None:
    """Start the command server in the background (it exits by itself when idle)."""
    if os.environ.get("SBATCHK8S_SERVER") == "0":
        return
    from sbatch_k8s.daemon import start_detached

    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except OSError:
        return
    start_detached([sys.executable, "-c",
                    f"import sys; sys.path.insert(0, {PACKAGE_ROOT!r}); "
                    "from sbatch_k8s.server import main; main()", path],
                   os.path.join(directory, "server.log"))


def inside_job(environ: MutableMapping[str, str]) -> None:
    """Inside a job whose variables a tool stripped (only ``SLURM_JOB_ID`` left), take them
    from the node file here — before the command server, which runs elsewhere, is asked
    (:mod:`sbatch_k8s.runtime.agent.node_file`)."""
    if "SBATCHK8S_JOB_DIR" in environ or not (environ.get("SLURM_JOB_ID")
                                                or environ.get("SLURM_JOBID")):
        return
    from sbatch_k8s.runtime.agent.node_file import complete_environment

    complete_environment(environ)


def run(command: str) -> None:
    """Run ``command`` (sbatch, squeue, …) on the server, or here when it cannot."""
    argv = sys.argv[1:]
    adopt_former_names(os.environ)
    inside_job(os.environ)
    code = run_on_server(command, argv)
    if code is not None:
        raise SystemExit(code)
    from importlib import import_module

    import_module(f"sbatch_k8s.cli.{command}").main(argv)


def sbatch() -> None:
    run("sbatch")


def srun() -> None:
    run("srun")


def squeue() -> None:
    run("squeue")


def scancel() -> None:
    run("scancel")


def sacct() -> None:
    run("sacct")


def scontrol() -> None:
    run("scontrol")


def sinfo() -> None:
    run("sinfo")


def sattach() -> None:
    run("sattach")


def sstat() -> None:
    run("sstat")


def seff() -> None:
    run("seff")
