"""The ``sbatch-k8s`` group: subcommands from their modules, errors turned into one line."""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from typing import Optional, Sequence

import click

from parsers.own_variables import adopt_former_names
from sbatch_k8s.operation_errors import SbatchK8sError
from sbatch_k8s.tool.version import print_version

PROGRAM = "sbatch-k8s"
#: One module of :mod:`sbatch_k8s.tool` per subcommand, each defining ``command``.
SUBCOMMANDS = ("runtime", "check_config", "option_support", "version", "controller", "ui",
               "logs", "events", "objects")


@click.group(name=PROGRAM, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True,
              callback=print_version, help="Print the version line and exit.")
def cli() -> None:
    """sbatch-k8s's own tools (the Slurm commands are sbatch, srun, squeue, …)."""


for _name in SUBCOMMANDS:
    cli.add_command(importlib.import_module(f"sbatch_k8s.tool.{_name}").command)


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Console entry point: click's own handling of usage errors, one line for ours."""
    adopt_former_names(os.environ)
    try:
        code = cli.main(args=list(sys.argv[1:] if argv is None else argv), prog_name=PROGRAM,
                        standalone_mode=False)
    except click.exceptions.Exit as e:
        code = e.exit_code
    except click.ClickException as e:
        e.show()
        code = e.exit_code
    except click.Abort:
        code = 130
    except SbatchK8sError as e:
        sys.stderr.write(f"{PROGRAM}: error: {e}\n")
        code = e.exit_code
    except Exception as e:  # the boundary: no traceback unless SBATCHK8S_DEBUG asks
        if os.environ.get("SBATCHK8S_DEBUG", "0") not in ("", "0"):
            traceback.print_exc()
        sys.stderr.write(f"{PROGRAM}: error: internal error: {type(e).__name__}: {e}\n")
        code = 1
    sys.exit(code if isinstance(code, int) else 0)
