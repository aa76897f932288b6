"""``sbatch-k8s version``: this release, the Slurm version its commands speak, the runtime."""

from __future__ import annotations

import click


@click.command(name="version")
def command() -> None:
    """Print the version of sbatch-k8s, of Slurm it follows and of its runtime."""
    from sbatch_k8s.cli.help_text import SLURM_VERSION, VERSION
    from sbatch_k8s.runtime_bundle import build_bundle, bundle_hash

    click.echo(f"sbatch-k8s {VERSION} (slurm {SLURM_VERSION}; runtime "
               f"{bundle_hash(build_bundle())})")
