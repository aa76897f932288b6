"""``sbatch-k8s ui [--port N] [--no-browser]``: the web console (:mod:`sbatch_k8s.ui`).

Runs in the foreground, as the user, until Ctrl-C: it listens on 127.0.0.1, prints its URL
(with the token every request must carry) and opens it in the user's browser unless
``--no-browser``. It shows the backend the commands use here (the same configuration,
kubeconfig and state directory) and submits with this directory as the working directory.
"""

from __future__ import annotations

import os
import sys

import click

from sbatch_k8s.operation_errors import SbatchK8sError


@click.command(name="ui")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="port on 127.0.0.1 (0: any free port)")
@click.option("--no-browser", is_flag=True, help="print the URL, open no browser")
@click.option("--interval", type=click.FloatRange(min=0.1), default=1.0, show_default=True,
              metavar="SECONDS", help="how often open pages' job tables are refreshed")
def command(port: int, no_browser: bool, interval: float) -> None:
    """Serve the web console (jobs, logs, actions, submit, cluster) on this machine."""
    from sbatch_k8s.ui.app import make_app, serve
    from sbatch_k8s.ui.jobs_source import JobsSource

    source = JobsSource(os.environ, os.getcwd())
    identity = source.identity()          # a broken configuration fails here, in one line
    app = make_app(source, interval)

    def ready(url: str) -> None:
        click.echo(f"sbatch-k8s ui: {identity.describe}; as {identity.user}"
                   f"{' (operator)' if identity.operator else ''}")
        click.echo(f"sbatch-k8s ui: open {url}")
        click.echo("sbatch-k8s ui: Ctrl-C stops it")
        sys.stdout.flush()
        if not no_browser:
            import webbrowser

            webbrowser.open(url)
    try:
        serve(app, port, ready)
    except OSError as e:
        raise SbatchK8sError(f"cannot listen on 127.0.0.1:{port}: {e.strerror or e}") from e
