"""The Kubernetes backend behind the seam: jobs are workloads, state is the API server's."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from parsers.formats.sinfo_fields import NodeInfo
from parsers.job_records import PENDING, RUNNING, JobRecord, StepRecord
from sbatch_k8s.backends.base import (
    FINISHED,
    REFUSED,
    UNKNOWN,
    Backend,
    ClusterFacts,
    JobLookup,
    OutputSink,
    Submitted,
)
from sbatch_k8s.backends.kubernetes.api.client import KubeClient, KubeError
from sbatch_k8s.backends.kubernetes.session import ClusterSession
from translators.config import ClusterConfig, PartitionConfig

if TYPE_CHECKING:
    from sbatch_k8s.submission_plan import SubmissionPlan

#: How long squeue keeps showing a finished job (Slurm's MinJobAge).
MIN_JOB_AGE_S = 300
#: At most this many expired records are deleted by one command (no daemon does it).
PURGE_BATCH = 50


class ClusterShape(ClusterFacts):
    """The cluster as the place jobs run: each partition's own node size, its nodes."""

    def __init__(self, session: ClusterSession) -> None:
        self.session = session

    def describe(self) -> str:
        target = self.session.client.target
        return (f"backend kubernetes, context {target.context}, namespace "
                f"{target.namespace}, server {target.server}")

    def partition_nodes(self) -> Dict[str, Tuple[NodeInfo, ...]]:
        from sbatch_k8s.backends.kubernetes.read.partition_nodes import partition_nodes

        session = self.session
        return partition_nodes(session.client, session.config, session.namespaces())


class ClusterLookup(JobLookup):
    """Job ids as the cluster's records and workloads hold them."""

    def __init__(self, backend: "KubernetesBackend") -> None:
        self.backend = backend

    def active_elements(self) -> List[JobRecord]:
        from sbatch_k8s.backends.kubernetes.history.records import is_final

        return [r for r in self.backend.elements(False, int(time.time())) if not is_final(r)]

    def expand_id(self, job_id: int, task: Optional[int]) -> List[int]:
        from sbatch_k8s.backends.kubernetes.read.cluster_jobs import records_of

        session = self.backend.session
        records = records_of(session.client, session.namespaces(), job_id, int(time.time()))
        elements = [r for r in records if r.array_job_id == job_id]
        if task is not None:
            return [r.job_id for r in elements if r.array_task_id == task]
        return [r.job_id for r in elements] or [job_id]

    def known(self, job_id: int) -> bool:
        from sbatch_k8s.backends.kubernetes.read.cluster_jobs import records_of

        session = self.backend.session
        return bool(records_of(session.client, session.namespaces(), job_id,
                               int(time.time())))


class KubernetesBackend(Backend):
    """Jobs on the cluster of the kubeconfig context (or of the pod we run in)."""

    name = "kubernetes"

    def __init__(self, config: ClusterConfig, environ: Mapping[str, str]) -> None:
        self.config = config
        self.environ = environ
        self.session = ClusterSession(config, environ)
        self.identity = self.session
        self.cluster = ClusterShape(self.session)
        self.lookup = ClusterLookup(self)
        #: Partitions whose hidden steps ``squeue -s`` warned about.
        self._steps_hidden: Set[str] = set()

    @property
    def client(self) -> KubeClient:
        """The session's client (the console's cluster views read with it too)."""
        return self.session.client

    def namespaces(self) -> Set[str]:
        """The namespaces of the caller's jobs (:meth:`.session.ClusterSession.namespaces`)."""
        return self.session.namespaces()

    def _attributed(self, records: List[JobRecord]) -> List[JobRecord]:
        """The records with the owners readers believe (:mod:`.read.owners`)."""
        from sbatch_k8s.backends.kubernetes.read.owners import attributed

        def lookup(job_id: int) -> Optional[JobRecord]:
            found = self._raw_find(job_id)
            return found[0] if found is not None else None
        return attributed(records, self.config.users, lookup)

    def submit(self, plan: "SubmissionPlan") -> Submitted:
        from sbatch_k8s.backends.kubernetes.submit.schedule import create_on_cluster

        return create_on_cluster(plan, self.environ, self.client)

    def wait(self, submitted: Submitted) -> int:
        """Look until the jobs end, rebuilding streamed output files (:mod:`.output.waiting`)."""
        from sbatch_k8s.backends.kubernetes.output.waiting import wait_for_jobs

        return wait_for_jobs(self.client, submitted.location, list(submitted.job_ids),
                             self.config)

    def job_records(self, include_finished: bool, now: int,
                    job_ids: Optional[Sequence[int]] = None) -> List[JobRecord]:
        from parsers.formats.array_fold import fold_pending_arrays

        return fold_pending_arrays(self.elements(include_finished, now, job_ids))

    def elements(self, include_finished: bool, now: int,
                  job_ids: Optional[Sequence[int]] = None) -> List[JobRecord]:
        """What squeue sees, each array element on its own (the records are per element)."""
        from sbatch_k8s.backends.kubernetes.read.cluster_jobs import cluster_records

        records = self._attributed(cluster_records(self.client, self.namespaces(), now,
                                                   active_only=not include_finished))
        wanted = None if job_ids is None else set(job_ids)
        return [r for r in records
                if (r.end_time is None or r.end_time >= now - MIN_JOB_AGE_S)
                and (wanted is None or r.job_id in wanted or r.array_job_id in wanted)]

    def accounting_records(self, start: int, end: int,
                           job_ids: Optional[List[int]]) -> List[JobRecord]:
        from parsers.formats.array_fold import fold_pending_arrays
        from sbatch_k8s.backends.kubernetes.read.cluster_jobs import cluster_records

        now = int(time.time())
        records = self._attributed(cluster_records(self.client, self.namespaces(), now,
                                                   active_only=False))
        self._purge(records, now)
        if job_ids is not None:
            wanted = set(job_ids)
            return fold_pending_arrays([r for r in records
                                        if r.job_id in wanted or r.array_job_id in wanted],
                                       waiting_last=True)
        return fold_pending_arrays([r for r in records
                                    if (r.end_time is None or r.end_time >= start)
                                    and (r.submit_time or 0) < end], waiting_last=True)

    def _purge(self, records: List[JobRecord], now: int) -> None:
        """Delete records older than the retention (Slurm's purge), a few per command."""
        from sbatch_k8s.backends.kubernetes.api.kinds import CONFIG_MAP
        from sbatch_k8s.backends.kubernetes.history.records import record_name

        limit = now - self.config.record_retention_days * 86400
        mine = self.session.caller.username
        expired = [r for r in records if r.end_time is not None and r.end_time < limit
                   and (r.owner == mine or self.session.caller_is_operator())]
        for record in expired[:PURGE_BATCH]:
            for namespace in self.namespaces():
                try:
                    if self.client.delete(CONFIG_MAP, record_name(record.job_id), namespace):
                        break
                except KubeError:
                    break

    def _raw_find(self, job_id: int) -> Optional[Tuple[JobRecord, Dict[str, str], str]]:
        from sbatch_k8s.backends.kubernetes.read.cluster_jobs import find_job

        return find_job(self.client, self.namespaces(), job_id, int(time.time()))

    def _find(self, job_id: int) -> Optional[Tuple[JobRecord, Dict[str, str], str]]:
        found = self._raw_find(job_id)
        if found is None:
            return None
        return self._attributed([found[0]])[0], found[1], found[2]

    def _refusal(self, found: Optional[Tuple[JobRecord, Dict[str, str], str]]
                 ) -> Optional[str]:
        """UNKNOWN for no job, REFUSED for one the caller may not act on (another user's:
        the cluster's identity decides, :func:`.read.owners.may_act`), else None."""
        from sbatch_k8s.backends.kubernetes.read.owners import may_act

        if found is None:
            return UNKNOWN
        allowed = may_act(self.session.caller, found[0], self.config.users, found[2],
                          self.session.caller_uid())
        return None if allowed else REFUSED

    def cancel(self, job_id: int, signum: Optional[int] = None, batch: bool = False,
               full: bool = False, step: Optional[int] = None) -> str:
        from sbatch_k8s.backends.kubernetes.control.job_control import cancel_on_cluster

        found = self._find(job_id)
        refusal = self._refusal(found)
        if found is None or refusal is not None:
            return refusal or UNKNOWN
        record, ref, namespace = found
        return cancel_on_cluster(self.client, record, ref, namespace, self.session.caller_uid(),
                                 signum, batch, full, step)

    def set_hold(self, job_id: int, reason: Optional[str]) -> str:
        from sbatch_k8s.backends.kubernetes.control.job_control import hold_on_cluster

        found = self._find(job_id)
        if found is None:
            return UNKNOWN
        record, ref, namespace = found
        if record.state != PENDING:
            return FINISHED
        if self._refusal(found) is not None:
            return REFUSED
        return hold_on_cluster(self.client, record, ref, namespace, reason)

    def requeue(self, job_id: int, hold: bool = False) -> str:
        from sbatch_k8s.backends.kubernetes.control.job_control import requeue_job
        from sbatch_k8s.backends.requeue_rules import requeue_delay_s

        found = self._find(job_id)
        refusal = self._refusal(found)
        if found is None or refusal is not None:
            return refusal or UNKNOWN
        record, ref, namespace = found
        return requeue_job(self.client, record, ref, namespace, hold,
                           requeue_delay_s(self.environ))

    def attach(self, job_id: int, write_files: bool, quiet: bool, sink: OutputSink) -> int:
        from sbatch_k8s.backends.kubernetes.output.attach import attach_on_cluster

        return attach_on_cluster(self, job_id, write_files, quiet, sink)

    def running_steps(self, record: JobRecord) -> List[StepRecord]:
        """``batch``, ``extern`` and the numbered steps node 0 published in the record
        (:mod:`sbatch_k8s.runtime.cluster.step_publisher`), from the records already read. Pods
        without the job ServiceAccount cannot publish: one warning per listing says so for
        their partition, rather than let the listing look complete."""
        from sbatch_k8s.user_messages import print_warning

        partition = self.config.partition(record.partition)
        if partition is not None and not self._publishes_steps(partition) and \
                record.partition not in self._steps_hidden:
            self._steps_hidden.add(record.partition)
            print_warning("squeue", f"the srun steps of jobs in partition {record.partition} "
                                    "are not visible (only batch and extern): its pods need "
                                    "the partition's service_account to publish them")
        return [s for s in record.steps if s.state == RUNNING]

    def _publishes_steps(self, partition: PartitionConfig) -> bool:
        """Whether the partition's pods have API access (its ServiceAccount, or the job
        ServiceAccount present in its namespace) and so publish their steps."""
        from sbatch_k8s.backends.kubernetes.submit.submitter import (
            partition_namespace,
            with_job_account,
        )

        if partition.service_account is not None:
            return bool(partition.service_account)
        try:
            namespace = partition_namespace(partition, self.client, self.session.caller_ids()[0]) \
                if partition.namespace and "{user}" in partition.namespace else \
                partition.namespace or self.client.target.namespace
            return bool(with_job_account(partition, self.client, namespace).service_account)
        except KubeError:
            return False

    def job_texts(self, record: JobRecord) -> Tuple[Optional[str], Optional[Dict[str, str]]]:
        """The script from the job's ConfigMap while it exists; the start environment is in
        the job's Secret, which sacct does not read."""
        from sbatch_k8s.backends.kubernetes.read.cluster_jobs import find_job
        from sbatch_k8s.backends.kubernetes.api.kinds import CONFIG_MAP

        found = find_job(self.client, self.namespaces(), record.job_id, int(time.time()))
        if found is None or not found[1].get("name"):
            return None, None
        files = self.client.get(CONFIG_MAP, found[1]["name"], found[2])
        return ((files or {}).get("data") or {}).get("script"), None

    def run_outside(self, argv: List[str], sink: OutputSink) -> int:
        from sbatch_k8s.backends.kubernetes.output.srun_outside import run_outside

        return run_outside(argv, self.config, self.environ, self.client, sink)
