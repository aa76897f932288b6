"""The local backend behind the seam: jobs on this machine, state in the job database."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Dict, List, Mapping, Optional, Sequence, Tuple

from parsers.allocation import NodeShape
from parsers.formats.sinfo_fields import NodeInfo
from parsers.job_records import PENDING, JobRecord, StepRecord
from sbatch_k8s.backends.base import (
    DONE,
    FINISHED,
    UNKNOWN,
    Backend,
    ClusterFacts,
    JobLookup,
    OutputSink,
    ProcessIdentity,
    Submitted,
)
from translators.config import ClusterConfig

if TYPE_CHECKING:
    from sbatch_k8s.submission_plan import SubmissionPlan


class LocalMachine(ClusterFacts):
    """This machine as the one place jobs run: its size is every partition's."""

    def __init__(self, config: ClusterConfig, environ: Mapping[str, str]) -> None:
        self.config = config
        self.environ = environ

    def describe(self) -> str:
        from sbatch_k8s.paths import state_dir

        return f"backend local, state directory {state_dir(self.environ)}"

    def node_shape(self) -> NodeShape:
        """This machine's size (the ``[local]`` section may shrink it): every partition's."""
        from sbatch_k8s.backends.local.capacity import local_shape

        return local_shape(self.config.local)

    def check_plan(self, plan: "SubmissionPlan") -> None:
        from sbatch_k8s.backends.local.capacity import check_fits

        check_fits(plan.job, plan.allocation, self.config.local)

    def partition_nodes(self) -> Dict[str, Tuple[NodeInfo, ...]]:
        """Every partition shows the machine's nodes
        (:mod:`~sbatch_k8s.backends.local.partition_nodes`)."""
        from sbatch_k8s import jobdb
        from sbatch_k8s.backends.local.partition_nodes import local_nodes

        with jobdb.opened(self.environ) as conn:
            nodes = local_nodes(conn, self.config.local)
        return {p.name: nodes for p in self.config.partitions}


class LocalLookup(JobLookup):
    """Job ids as the job database holds them."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.environ = environ

    def active_elements(self) -> List[JobRecord]:
        from sbatch_k8s.backends.local.selection import scancel_records

        return scancel_records(self.environ)

    def expand_id(self, job_id: int, task: Optional[int]) -> List[int]:
        from sbatch_k8s.backends.local.selection import cancel_targets

        return cancel_targets(self.environ, job_id, task)

    def known(self, job_id: int) -> bool:
        from sbatch_k8s import jobdb

        with jobdb.opened(self.environ) as conn:
            return jobdb.get_job(conn, job_id) is not None


class LocalBackend(Backend):
    """Jobs run as node processes on this machine (:mod:`sbatch_k8s.backends.local`)."""

    name = "local"

    def __init__(self, config: ClusterConfig, environ: Mapping[str, str]) -> None:
        self.config = config
        self.environ = environ
        self.identity = ProcessIdentity()
        self.cluster = LocalMachine(config, environ)
        self.lookup = LocalLookup(environ)

    def submit(self, plan: "SubmissionPlan") -> Submitted:
        from sbatch_k8s.backends.local.submit import submit_local

        return submit_local(plan, self.environ)

    def wait(self, submitted: Submitted) -> int:
        """The scheduler says when jobs end (:mod:`~sbatch_k8s.backends.local.waiting`)."""
        from sbatch_k8s.backends.local.waiting import wait_for_job

        return wait_for_job(self.environ, submitted.job_ids[0])

    def job_records(self, include_finished: bool, now: int,
                    job_ids: Optional[Sequence[int]] = None) -> List[JobRecord]:
        from sbatch_k8s import jobdb
        from sbatch_k8s.backends.local.records import active_records
        from sbatch_k8s.backends.local.wakeup import ensure_scheduler

        with jobdb.opened(self.environ) as conn:
            ensure_scheduler(self.environ, nudge=False, conn=conn)
            return active_records(conn, include_finished, now, self.config.cluster_name,
                                  job_ids=job_ids)

    def accounting_records(self, start: int, end: int,
                           job_ids: Optional[List[int]]) -> List[JobRecord]:
        from parsers.formats.array_fold import fold_pending_arrays
        from sbatch_k8s import jobdb
        from sbatch_k8s.backends.local.layout import job_dir_of
        from sbatch_k8s.backends.local.records import accounting_records
        from sbatch_k8s.backends.local.wakeup import ensure_scheduler

        clauses = ["(end_time IS NULL OR end_time >= ?)", "submit_time < ?"]
        params: list = [start, end]
        if job_ids is not None:
            marks = ", ".join("?" for _ in job_ids)
            clauses.append(f"(job_id IN ({marks}) OR array_job_id IN ({marks}))")
            params += list(job_ids) + list(job_ids)
        with jobdb.opened(self.environ) as conn:
            ensure_scheduler(self.environ, nudge=False, conn=conn)
            return fold_pending_arrays(accounting_records(
                conn, " AND ".join(clauses), params, self.config.cluster_name,
                lambda job_id: job_dir_of(self.environ, job_id)), waiting_last=True)

    def cancel(self, job_id: int, signum: Optional[int] = None, batch: bool = False,
               full: bool = False, step: Optional[int] = None) -> str:
        from sbatch_k8s.backends.local.cancel import cancel_job

        return cancel_job(self.environ, job_id, self.identity.caller_uid(), signum, batch,
                          full, step)

    def set_hold(self, job_id: int, reason: Optional[str]) -> str:
        from parsers.formats.job_values import eligible_from
        from sbatch_k8s import jobdb

        with jobdb.opened(self.environ) as conn:
            row = jobdb.get_job(conn, job_id)
            if row is None:
                return UNKNOWN
            if row["state"] != PENDING:
                return FINISHED
            # Held or released, a job's begin time ahead (a requeued one: Slurm's delay) stays its
            # eligible time; a held one else has none.
            eligible = eligible_from(row["begin_time"], bool(reason), time.time())
            jobdb.update_job(conn, job_id, hold=1 if reason else 0, reason=reason or "None",
                             eligible_time=eligible)
            if not reason:
                from sbatch_k8s.backends.local.wakeup import ensure_scheduler

                ensure_scheduler(self.environ, conn=conn)
            return DONE

    def requeue(self, job_id: int, hold: bool = False) -> str:
        from sbatch_k8s.backends.local.requeue import requeue_job

        return requeue_job(self.environ, job_id, hold)

    def running_steps(self, record: JobRecord) -> List[StepRecord]:
        from sbatch_k8s import jobdb
        from sbatch_k8s.backends.local.layout import job_dir_of
        from sbatch_k8s.backends.local.records import running_steps

        with jobdb.opened(self.environ) as conn:
            return running_steps(conn, record, job_dir_of(self.environ, record.job_id))

    def job_texts(self, record: JobRecord) -> Tuple[Optional[str], Optional[Dict[str, str]]]:
        from sbatch_k8s.backends.local.job_files import batch_script, start_environment

        return batch_script(self.environ, record), start_environment(self.environ, record)

    def run_outside(self, argv: List[str], sink: OutputSink) -> int:
        from sbatch_k8s.backends.local.srun_outside import run_outside

        return run_outside(argv, self.config, self.environ, sink)
