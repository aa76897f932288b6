"""What the local backend keeps of a job beside its database row: the batch script and the
environment it started with (``<state>/jobs/<id>/script`` and ``job.json``), for
``sacct --batch-script`` and ``--env-vars``."""

from __future__ import annotations

from parsers.vocabulary import DESCRIPTION_KEY
import json
import os
from typing import Dict, Mapping, Optional

from parsers.job_records import JobRecord
from sbatch_k8s.backends.local.layout import job_dir_of


def _job_dir(environ: Mapping[str, str], record: JobRecord) -> str:
    """Array elements share the directory of the array's first job."""
    return job_dir_of(environ, record.array_job_id or record.job_id)


def batch_script(environ: Mapping[str, str], record: JobRecord) -> Optional[str]:
    """The job's batch script, or None when none was kept."""
    try:
        with open(os.path.join(_job_dir(environ, record), "script"), errors="surrogateescape") as f:
            return f.read()
    except OSError:
        return None


def start_environment(environ: Mapping[str, str], record: JobRecord) -> Optional[Dict[str, str]]:
    """The environment the batch script started with, or None when none was kept."""
    try:
        with open(os.path.join(_job_dir(environ, record), DESCRIPTION_KEY)) as f:
            found = json.load(f).get("environment")
    except (OSError, ValueError):
        return None
    return dict(found) if isinstance(found, dict) else None
