"""One submission to a cluster, attempted under as many job ids as it takes.

An :class:`Attempts` holds what does not change between attempts (the submission plan, the
partition with the job's account, the submitter as the cluster knows it, the ownership its objects
carry, the runtime, the submission mark) and renders and creates the job under one base id
at a time (:mod:`.schedule` retries with a new id when the names of one are held by another
job's objects).
"""

from __future__ import annotations

from parsers.vocabulary import JOB_ID
import secrets
import time
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence

from parsers.jobspec import SubmitContext
from sbatch_k8s.backends.base import SRUN_COMMAND
from sbatch_k8s.backends.kubernetes.api.client import KubeClient
from sbatch_k8s.backends.kubernetes.api.kinds import WORKLOADS, kind_of
from sbatch_k8s.backends.kubernetes.submit.create_objects import (
    Submission,
    create_unit,
    ensure_runtime,
    submitted_record,
)
from sbatch_k8s.user_messages import print_warning
from translators.config import PartitionConfig
from translators.ownership import Ownership

if TYPE_CHECKING:
    from sbatch_k8s.submission_plan import SubmissionPlan


#: How many new ids a submission tries when the names of its id are held by other objects.
CONFLICT_ATTEMPTS = 5


class Attempts:
    """One submission's fixed inputs on the cluster; :meth:`render` and :meth:`create` per
    attempted id. ``partition`` and ``context`` are the plan's as the cluster has them (the
    job's account, the submitter the cluster knows)."""

    def __init__(self, plan: "SubmissionPlan", environ: Mapping[str, str], client: KubeClient,
                 partition: PartitionConfig, namespace: str, context: SubmitContext,
                 ownership: Ownership) -> None:
        from sbatch_k8s.backends.kubernetes.submit.schedule import submit_minor
        from sbatch_k8s.runtime_bundle import build_bundle, bundle_hash
        from sbatch_k8s.submission_plan import now_iso

        self.job, self.submit, self.config = plan.job, plan.submit, plan.config
        self.environ, self.client, self.command = environ, client, plan.command
        self.partition, self.allocation = partition, plan.allocation
        self.namespace, self.context, self.ownership = namespace, context, ownership
        self.count = plan.job.array.count() if plan.job.array else 1
        self.minor = submit_minor(plan.submit, client)
        self.target = plan.submit.k8s_target or partition.target
        self.bundle = build_bundle()
        self.runtime_hash = bundle_hash(self.bundle)
        self.submit_iso = now_iso()
        #: The submission mark every object carries (:data:`..api.client.SUBMISSION_ANNOTATION`).
        self.mark = secrets.token_hex(8)
        self.base_id = 0

    def render(self, base_id: int, warn: bool) -> List[List[Dict[str, Any]]]:
        """The objects of the job under ``base_id``, unit by unit."""
        from sbatch_k8s.runtime_bundle import bundle_digest
        from translators import RenderInputs, render

        self.base_id = base_id
        result = render(RenderInputs(
            job=self.job, allocation=self.allocation, context=self.context,
            partition=self.partition, cluster_name=self.config.cluster_name, job_id=base_id,
            token=secrets.token_hex(32), runtime_hash=self.runtime_hash,
            runtime_digest=bundle_digest(self.bundle),
            submit_time=self.submit_iso, target=self.target, kubernetes_minor=self.minor,
            ownership=self.ownership))
        if warn and not self.submit.quiet:  # the allocation's, printed before, lead these
            for note in result.warnings[len(self.allocation.warnings):]:
                print_warning(self.command, note)
        units = _units(result.manifests)
        if self.partition.service_account:  # the commands inside the job use the same config
            from sbatch_k8s.backends.kubernetes.submit.carried_config import carry_configuration

            carry_configuration(units, self.environ)
        return units

    def create(self, units: List[List[Dict[str, Any]]]) -> List[int]:
        """Create the records and the units under :attr:`base_id`, or take back everything
        this attempt created and raise; the job ids."""
        from sbatch_k8s.backends.kubernetes.control.dependencies import release_new
        from sbatch_k8s.backends.kubernetes.history.records import record_config_map
        from sbatch_k8s.runtime.cluster.release import WAITING_LABEL
        from translators.gates import begin_moment, gate_annotations

        job, base_id, client = self.job, self.base_id, self.client
        submission = Submission(client, self.namespace, self.mark)
        now = int(time.time())
        indices: Sequence[Optional[int]] = job.array.indices() if job.array else (None,)
        gates = gate_annotations(job, self.submit_iso)
        begin = begin_moment(job, self.submit_iso)
        try:
            ensure_runtime(client, self.namespace, self.runtime_hash, self.bundle)
            workload_refs = _workload_refs(units, self.namespace, indices, base_id)
            owned = _ownership_of(units, indices, base_id)
            for k, index in enumerate(indices):
                record = submitted_record(job, self.allocation, self.context, self.partition,
                                          self.config.cluster_name, base_id + k,
                                          base_id if job.array else None, index, now,
                                          int(begin.timestamp()) if begin else None,
                                          batch=self.command != SRUN_COMMAND)
                manifest = record_config_map(record, workload_refs[k], owned[k])
                if gates:
                    manifest["metadata"]["labels"][WAITING_LABEL] = "true"
                submission.create(manifest)
            for unit in units:
                create_unit(submission, unit)
        except BaseException:
            submission.roll_back()
            raise
        job_ids = [base_id + k for k in range(len(indices))]
        if gates:
            release_new(client, self.namespace, job_ids, int(time.time()))
        return job_ids


def _units(manifests: Sequence[Dict[str, Any]]) -> List[List[Dict[str, Any]]]:
    """Manifests grouped unit by unit (a unit ends with its workload)."""
    units: List[List[Dict[str, Any]]] = [[]]
    for manifest in manifests:
        units[-1].append(manifest)
        if kind_of(manifest) in WORKLOADS:
            units.append([])
    return [u for u in units if u]


def _workload_refs(units: Sequence[Sequence[Dict[str, Any]]], namespace: str,
                   indices: Sequence[Optional[int]], base_id: int) -> List[Dict[str, str]]:
    """For each job id of the submission, the workload that runs it."""
    by_id: Dict[str, Dict[str, str]] = {}
    for unit in units:
        workload = unit[-1]
        ref = {"apiVersion": workload["apiVersion"], "kind": workload["kind"],
               "name": workload["metadata"]["name"], "namespace": namespace}
        by_id[workload["metadata"]["labels"][JOB_ID]] = ref
    first = next(iter(by_id.values()))
    return [by_id.get(str(base_id + k), first) for k in range(len(indices))]


def _ownership_of(units: Sequence[Sequence[Dict[str, Any]]],
                  indices: Sequence[Optional[int]], base_id: int) -> List[Dict[str, str]]:
    """For each job id of the submission, the ownership annotations of the workload that
    runs it (what its record carries too)."""
    from translators.ownership import OWNERSHIP_KEYS

    by_id: Dict[str, Dict[str, str]] = {}
    for unit in units:
        meta = unit[-1]["metadata"]
        annotations = meta.get("annotations") or {}
        by_id[meta["labels"][JOB_ID]] = {
            k: v for k, v in annotations.items() if k in OWNERSHIP_KEYS}
    first = next(iter(by_id.values()))
    return [by_id.get(str(base_id + k), first) for k in range(len(indices))]
