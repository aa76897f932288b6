"""What scancel selects from, on the local backend: job records and the ids behind a name.

The filters themselves are pure (:mod:`parsers.job_filters`); this module only reads the
job database, so that another backend can feed the same filters with records built from
cluster state.
"""

from __future__ import annotations

from typing import List, Mapping, Optional

from parsers.job_records import JobRecord
from sbatch_k8s import jobdb
from sbatch_k8s.backends.local.records import ACTIVE_STATES, to_record


def scancel_records(environ: Mapping[str, str]) -> List[JobRecord]:
    """Every job the controller still holds, one record per array element (scancel acts on
    elements, not on squeue's folded pending line), in job id order."""
    with jobdb.opened(environ) as conn:
        marks = ", ".join("?" for _ in ACTIVE_STATES)
        rows = jobdb.select_jobs(conn, f"state IN ({marks})", ACTIVE_STATES)
        return sorted((to_record(row) for row in rows), key=lambda r: r.job_id)


def cancel_targets(environ: Mapping[str, str], job_id: int,
                   task: Optional[int]) -> List[int]:
    """The job ids one scancel id means when no filter applies: the job, every element of
    an array, or one element (``12_3``)."""
    with jobdb.opened(environ) as conn:
        if task is not None:
            rows = jobdb.select_jobs(conn, "array_job_id=? AND array_task_id=?", (job_id, task))
            return [r["job_id"] for r in rows]
        rows = jobdb.select_jobs(conn, "array_job_id=?", (job_id,))
        return [r["job_id"] for r in rows] or [job_id]
