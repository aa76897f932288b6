"""``sbatch-k8s version``: this release, the Slurm version its commands speak, the runtime."""

from __future__ import annotations

import click


def version_line() -> str:
    """``sbatch-k8s 0.1.0 (slurm 22.05.8; runtime <hash>)``."""
    from sbatch_k8s.cli.help_text import SLURM_VERSION, VERSION
    from sbatch_k8s.runtime_bundle import build_bundle, bundle_hash

    return f"sbatch-k8s {VERSION} (slurm {SLURM_VERSION}; runtime {bundle_hash(build_bundle())})"


def print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """``sbatch-k8s --version``: the same line as ``sbatch-k8s version``."""
    if value and not ctx.resilient_parsing:
        click.echo(version_line())
        ctx.exit(0)


@click.command(name="version")
def command() -> None:
    """Print the version of sbatch-k8s, of Slurm it follows and of its runtime."""
    click.echo(version_line())
