"""``sbatch-k8s yaml JOB [-o yaml|json]``: a job's objects as the cluster has them.

On a cluster: the workload, the job's ConfigMap and Service, its Secret's metadata (never its
data; shown only to those the cluster lets read Secrets at all) and its pods, as the API
server returns them. Locally: the job's description (what the runtime reads), its
environment left out. ``-o json`` prints them as ``kubectl get -o json`` does (several
objects: a ``v1`` ``List``).
"""

from __future__ import annotations

import os
import sys

import click

from sbatch_k8s.tool.job_argument import CommandError, fail_with, find_record, parse_job_argument

COMMAND = "yaml"


def _objects(job: str, output: str) -> str:
    from sbatch_k8s.backends import open_backend
    from sbatch_k8s.inspection.inspector import JobInspector
    from sbatch_k8s.inspection.values import Unavailable

    wanted = parse_job_argument(job, steps=False)
    backend = open_backend(os.environ)
    record = find_record(backend, wanted.job)
    inspector = JobInspector(backend)
    text = inspector.json_text(record) if output == "json" else inspector.yaml_text(record)
    if isinstance(text, Unavailable):
        raise CommandError(f"job {record.job_id_text}: {text.why}")
    return text


@click.command(name=COMMAND)
@click.argument("job", metavar="JOB")
@click.option("-o", "--output", type=click.Choice(["yaml", "json"]), default="yaml",
              show_default=True, help="the format")
def command(job: str, output: str) -> None:
    """A job's objects as the cluster has them (locally: its description)."""
    try:
        sys.stdout.write(_objects(job, output))
    except CommandError as e:
        raise fail_with(COMMAND, e) from None
