"""``sbatch-k8s options``: the option table's support levels, as a table on the terminal."""

from __future__ import annotations

from typing import Optional

import click

from parsers.options import BACKENDS, COMMANDS, SBATCH, options_for


@click.command(name="options")
@click.option("--command", "slurm_command", type=click.Choice(COMMANDS), default=SBATCH,
              show_default=True, help="whose options")
@click.option("--backend", type=click.Choice(BACKENDS), default=None,
              help="only this backend's level and note (sbatch)")
def command(slurm_command: str, backend: Optional[str]) -> None:
    """Print how well each option is supported, per backend."""
    from tabulate import tabulate

    backends = (backend,) if backend else BACKENDS
    if slurm_command != SBATCH:
        backends = (None,)  # srun runs inside jobs with the same runtime on every backend
    rows = []
    for option in options_for(slurm_command):
        if option.hidden:
            continue
        levels = [option.level(slurm_command, b) or "" for b in backends]
        note = option.note_on(backend) if backend else option.note
        rows.append([option.spelled(), *levels, note])
    titles = ["OPTION"] + [(b or slurm_command).upper() for b in backends] + ["WHAT IT BECOMES"]
    click.echo(tabulate([titles] + rows, tablefmt="plain", disable_numparse=True))
