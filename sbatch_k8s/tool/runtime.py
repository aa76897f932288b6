"""``sbatch-k8s runtime -o FILE``: write the runtime zipapp that every pod runs.

The same bytes as the shared ConfigMap ``sbatch-k8s-runtime-<hash>`` holds, so an image or a
platform that cannot mount that ConfigMap can ship the file itself and run
``python3 FILE node …`` (or ``python3 FILE run job.sh`` in platform mode).
"""

from __future__ import annotations

import os

import click

from sbatch_k8s.errors import SbatchK8sError


@click.command(name="runtime")
@click.option("-o", "--output", "path", required=True, type=click.Path(dir_okay=False),
              help="file to write the runtime zipapp to")
def command(path: str) -> None:
    """Write the runtime zipapp (run it with python3 >= 3.8)."""
    from sbatch_k8s.runtime_bundle import build_bundle, bundle_hash

    bundle = build_bundle()
    try:
        with open(path, "wb") as f:
            f.write(bundle)
        os.chmod(path, 0o755)
    except OSError as e:
        raise SbatchK8sError(f"{path}: {e.strerror}") from e
    click.echo(f"{path}: runtime {bundle_hash(bundle)}, {len(bundle)} bytes")
