"""The one place where errors become messages and exit codes.

Every command's ``main`` runs its body through :func:`run_command`: user errors
(:class:`~parsers.input_errors.SlurmInputError`) print Slurm's words, I/O-layer errors
(:class:`~sbatch_k8s.operation_errors.SbatchK8sError`) print one ``<command>: error: …``
line, anything unexpected prints one line naming the failure. ``SBATCHK8S_DEBUG=1`` (any
non-empty value but ``0``) prints the traceback before that line, in this process, so it
also reaches the user when the command server ran the command (which reports an escaped
exception in one line).
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import Callable, List, Mapping, Optional, Sequence

from parsers.input_errors import SlurmInputError
from sbatch_k8s.operation_errors import SbatchK8sError
from sbatch_k8s.user_messages import print_error


def run_command(command: str, body: Callable[[List[str]], int],
                argv: Optional[Sequence[str]] = None) -> int:
    """Run ``body(argv)`` and turn every failure into Slurm-style output and an exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        return body(args)
    except SlurmInputError as e:
        sys.stderr.write(e.render(command))
        return e.exit_code
    except SbatchK8sError as e:
        print_error(command, str(e))
        return e.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 141
    except Exception as e:  # the boundary: no traceback reaches a user unless asked for
        if debugging(os.environ):
            traceback.print_exc()
            print_error(command, f"internal error: {type(e).__name__}: {e}")
        else:
            print_error(command, f"internal error: {type(e).__name__}: {e} "
                                 "(set SBATCHK8S_DEBUG=1 for details)")
        return 1


def debugging(environ: Mapping[str, str]) -> bool:
    """Whether ``SBATCHK8S_DEBUG`` asks for tracebacks."""
    return environ.get("SBATCHK8S_DEBUG", "") not in ("", "0")


def exit_with(code: int) -> None:
    """Flush and exit (console-script entry points end here)."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        code = code or 141
    raise SystemExit(code)


def say_backend(command: str, environ: Mapping[str, str], verbose: int) -> None:
    """With ``-v``, one line naming the backend the command talks to (where Slurm's commands
    name the plugins they load), as ``sbatch -v`` does."""
    if verbose > 0:
        from sbatch_k8s.backends import open_backend

        sys.stderr.write(f"{command}: {open_backend(environ).cluster.describe()}\n")
