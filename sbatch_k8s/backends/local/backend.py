"""The local backend behind the seam: jobs on this machine, state in the job database."""

from __future__ import annotations

import time
from typing import List, Mapping, Optional

from parsers.jobspec import JobSpec, SubmitOptions
from parsers.records import PENDING, JobRecord
from sbatch_k8s.backends.base import DONE, FINISHED, UNKNOWN, Backend
from translators.config import ClusterConfig


class LocalBackend(Backend):
    """Jobs run as node processes on this machine (:mod:`sbatch_k8s.backends.local`)."""

    name = "local"

    def __init__(self, config: ClusterConfig, environ: Mapping[str, str]) -> None:
        self.config = config
        self.environ = environ

    def describe(self) -> str:
        from sbatch_k8s.paths import state_dir

        return f"backend local, state directory {state_dir(self.environ)}"

    def submit(self, job: JobSpec, submit: SubmitOptions) -> int:
        from sbatch_k8s.backends.local.submit import submit_local

        return submit_local(job, submit, self.config, self.environ)

    def job_records(self, include_finished: bool, now: int) -> List[JobRecord]:
        from sbatch_k8s import jobdb
        from sbatch_k8s.backends.local.records import active_records

        return active_records(jobdb.connect(self.environ), include_finished, now)

    def accounting_records(self, start: int, end: int,
                           job_ids: Optional[List[int]]) -> List[JobRecord]:
        from sbatch_k8s import jobdb
        from sbatch_k8s.backends.local.layout import job_dir_of
        from sbatch_k8s.backends.local.records import accounting_records

        clauses = ["(end_time IS NULL OR end_time >= ?)", "submit_time < ?"]
        params: list = [start, end]
        if job_ids is not None:
            marks = ", ".join("?" for _ in job_ids)
            clauses.append(f"(job_id IN ({marks}) OR array_job_id IN ({marks}))")
            params += list(job_ids) + list(job_ids)
        return accounting_records(jobdb.connect(self.environ), " AND ".join(clauses), params,
                                  self.config.cluster_name,
                                  lambda job_id: job_dir_of(self.environ, job_id))

    def cancel(self, job_id: int, uid: int, signum: Optional[int] = None,
               batch: bool = False, full: bool = False, step: Optional[int] = None) -> str:
        from sbatch_k8s.cli.cancel_local import cancel_job

        return cancel_job(self.environ, job_id, uid, signum, batch, full, step)

    def set_hold(self, job_id: int, hold: bool, uid: int) -> str:
        from sbatch_k8s import jobdb

        conn = jobdb.connect(self.environ)
        row = jobdb.get_job(conn, job_id)
        if row is None:
            return UNKNOWN
        if row["state"] != PENDING:
            return FINISHED
        reason = "None" if not hold else ("JobHeldUser" if uid != 0 else "JobHeldAdmin")
        jobdb.update_job(conn, job_id, hold=1 if hold else 0, reason=reason,
                         eligible_time=None if hold else time.time())
        return DONE
