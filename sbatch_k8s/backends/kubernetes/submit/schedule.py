"""``sbatch`` on a cluster: ids, objects, and nothing half-created; what was made, as a
:class:`~sbatch_k8s.backends.base.Submitted` the command prints.

Order of work: plan (partition, allocation — Slurm's refusals first, nothing contacted), the
submitter as the cluster knows it (:mod:`.submitter`), job ids from the cluster-wide counter
(:mod:`.job_ids`), rendering (:func:`translators.render`), then the objects
(:mod:`.attempts`, :mod:`.create_objects`): the shared runtime ConfigMap when missing,
each job's record (what sacct reads after the workload is gone), and each unit's ConfigMap,
Secret, Service, PodGroup and workload. The companions hang on the workload through the
ConfigMap (:func:`.create_objects.create_unit`), so deleting it deletes them. If any step
fails, everything this submission created is deleted again and the refusal says
``Batch job submission failed: <the API server's message>``; a job id whose names another
job's objects hold is given up for a new one.
"""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING, Any, Dict, Mapping, Sequence

from parsers.allocation import Allocation
from parsers.input_errors import submission_failed
from parsers.jobspec import JobSpec, SubmitOptions
from sbatch_k8s.backends.base import StartEstimate, Submitted
from sbatch_k8s.backends.kubernetes.api.client import KubeClient, KubeError
from sbatch_k8s.user_messages import print_warning

if TYPE_CHECKING:
    from sbatch_k8s.submission_plan import SubmissionPlan


def _estimate(job_id: int, allocation: Allocation, names: Sequence[str],
              partition: str) -> StartEstimate:
    """``--test-only``: the job would start now, on its pods."""
    from parsers.values.hostlist import compress_hostlist

    return StartEstimate(job_id, time.strftime("%Y-%m-%dT%H:%M:%S"),
                         sum(allocation.cpus_per_node), compress_hostlist(list(names)),
                         partition)


def create_on_cluster(plan: "SubmissionPlan", environ: Mapping[str, str], client: KubeClient
                      ) -> Submitted:
    """Create the job's objects: their ids and namespace (with ``--test-only`` the server
    only checks them: where the job would run).
    The plan's ``command`` names who warns (``srun`` creating a job for a step). A name another job
    holds is never taken over: that attempt is taken back and the job gets a new id
    (:mod:`.job_ids`)."""
    from sbatch_k8s.backends.kubernetes.submit.job_ids import (
        allocate_job_ids,
        peek_next_id,
        raise_above,
        state_namespace,
    )
    from sbatch_k8s.backends.kubernetes.submit.node_shape import plan_on_cluster
    from sbatch_k8s.backends.kubernetes.submit.attempts import CONFLICT_ATTEMPTS, Attempts
    from sbatch_k8s.backends.kubernetes.control.dependencies import check_targets
    from sbatch_k8s.backends.kubernetes.submit.submitter import (
        cluster_submitter,
        partition_namespace,
        released_by,
        user_namespaces,
        with_job_account,
    )

    job, submit, config, command = plan.job, plan.submit, plan.config, plan.command
    check_backend_support(job, submit, command)
    plan = plan_on_cluster(plan, client, environ)
    allocation = plan.allocation
    try:
        context, ownership, _ = cluster_submitter(client, config, environ, plan.context)
        known = user_namespaces(config, client, context.user)
        if not submit.test_only:
            check_targets(job, client, known)
            ownership = dataclasses.replace(ownership,
                                            released_by=released_by(client, job, known,
                                                                    context.user))
    except KubeError as e:
        raise submission_failed(str(e)) from e
    if not submit.quiet:
        for note in allocation.warnings:
            print_warning(command, note)
    namespace = partition_namespace(plan.partition, client, context.user)
    try:
        partition = with_job_account(plan.partition, client, namespace)
    except KubeError as e:
        raise submission_failed(str(e)) from e
    ids = state_namespace(config.state_namespace)
    attempts = Attempts(plan, environ, client, partition, namespace, context, ownership)
    try:
        if submit.test_only:
            units = attempts.render(peek_next_id(client, ids), warn=True)
            return Submitted((), namespace, _dry_run(client, namespace, units, allocation,
                                                     partition.name, attempts.base_id))
        for attempt in range(CONFLICT_ATTEMPTS):
            base_id = allocate_job_ids(client, ids, attempts.count, known)
            units = attempts.render(base_id, warn=attempt == 0)
            try:
                return Submitted(tuple(attempts.create(units)), namespace)
            except KubeError as e:
                if e.status != 409 or e.reason != "AlreadyExists":
                    raise
                raise_above(client, ids, base_id + attempts.count - 1, known | {namespace})
    except KubeError as e:
        raise submission_failed(str(e)) from e
    raise submission_failed(f"the names of job ids up to {base_id + attempts.count - 1} are "
                            f"held by other objects in namespace {namespace} "
                            f"({CONFLICT_ATTEMPTS} ids tried)")


def check_backend_support(job: JobSpec, submit: SubmitOptions, command: str = "sbatch"
                          ) -> None:
    """What the option table says about this backend: a Slurm-worded refusal of the options
    it rejects here (never a dependent job started at once), warnings about those it ignores
    here (unless ``-Q``). The table alone decides: :mod:`parsers.backend_support`."""
    from parsers.backend_support import backend_refusal, backend_warnings
    from parsers.options import KUBERNETES

    refusal = backend_refusal(job.given, KUBERNETES)
    if refusal is not None:
        raise submission_failed(refusal)
    if not submit.quiet:
        for note in backend_warnings(job.given, KUBERNETES):
            print_warning(command, note)


def submit_minor(submit: SubmitOptions, client: KubeClient) -> int:
    """The Kubernetes minor version rendering targets: ``--k8s-kubernetes-version`` when
    given, else the server's own."""
    given = getattr(submit, "k8s_kubernetes_version", None)
    if given:
        return int(str(given).split(".")[1])
    try:
        return client.server_minor()
    except KubeError as e:
        raise submission_failed(str(e)) from e


def _dry_run(client: KubeClient, namespace: str, units: Sequence[Sequence[Dict[str, Any]]],
             allocation: Allocation, partition: str, base_id: int) -> StartEstimate:
    """``--test-only``: the server checks every object (``dryRun=All``); nothing is stored."""
    try:
        for unit in units:
            for manifest in unit:
                client.create(manifest, namespace, dry_run=True)
    except KubeError as e:
        raise submission_failed(str(e)) from e
    names = [f"{units[0][-1]['metadata']['name']}-{i}" for i in range(allocation.node_count)]
    return _estimate(base_id, allocation, names, partition)
