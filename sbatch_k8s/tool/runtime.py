"""``sbatch-k8s runtime -o FILE``: write the runtime zipapp that every pod runs;
``--bootstrap PATH SCRIPT [ARGS]…``: print the one-line platform command that runs it.

The same bytes as the shared ConfigMap ``sbatch-k8s-runtime-<hash>`` holds, so an image or a
platform that cannot mount that ConfigMap can ship the file itself and run
``python3 FILE node …`` (or ``python3 FILE run job.sh`` in platform mode). The bootstrap
line (:mod:`sbatch_k8s.runtime.platform.bootstrap`) is for forms that take one line.
"""

from __future__ import annotations

import os
from typing import Optional, Tuple

import click

from sbatch_k8s.operation_errors import SbatchK8sError


@click.command(name="runtime")
@click.option("-o", "--output", "path", type=click.Path(dir_okay=False),
              help="file to write the runtime zipapp to")
@click.option("--bootstrap", "bootstrap", metavar="PATH",
              help="print the one-line platform command running the runtime found at PATH "
                   "in the containers (the image or a shared volume; nothing is fetched)")
@click.option("--contract", metavar="NAME", help="with --bootstrap: run --contract NAME")
@click.option("--chdir", metavar="DIR", help="with --bootstrap: the containers' directory")
@click.option("-v", "--verbose", is_flag=True, help="with --bootstrap: run -v")
@click.argument("script_and_args", nargs=-1, metavar="[SCRIPT [ARGS]...]")
def command(path: Optional[str], bootstrap: Optional[str], contract: Optional[str],
            chdir: Optional[str], verbose: bool, script_and_args: Tuple[str, ...]) -> None:
    """Write the runtime zipapp (run it with python3 >= 3.8), or print its bootstrap line."""
    if not path and not bootstrap:
        raise click.UsageError("give -o FILE, --bootstrap PATH SCRIPT, or both")
    if bootstrap and not script_and_args:
        raise click.UsageError("--bootstrap needs the batch script's path in the containers")
    if not bootstrap and (script_and_args or contract or chdir or verbose):
        raise click.UsageError("a script, --contract, --chdir and -v go with --bootstrap")
    if path:
        from sbatch_k8s.runtime_bundle import build_bundle, bundle_hash

        bundle = build_bundle()
        try:
            with open(path, "wb") as f:
                f.write(bundle)
            os.chmod(path, 0o755)
        except OSError as e:
            raise SbatchK8sError(f"{path}: {e.strerror}") from e
        message = f"{path}: runtime {bundle_hash(bundle)}, {len(bundle)} bytes"
        click.echo(message, err=bool(bootstrap))
    if bootstrap:
        from sbatch_k8s.runtime.platform.bootstrap import bootstrap_line

        click.echo(bootstrap_line(bootstrap, script_and_args[0], script_and_args[1:],
                                  contract, chdir, verbose))
