"""``sbatch`` on a cluster: ids, objects, and nothing half-created.

Order of work: plan (partition, allocation — Slurm's refusals first, nothing contacted), the
submitter as the cluster knows it (:mod:`.submitter`), job ids from the cluster-wide counter
(:mod:`.job_ids`), rendering (:func:`translators.render`), then the objects
(:mod:`.attempts`, :mod:`.create_objects`): the shared runtime ConfigMap when missing,
each job's record (what sacct reads after the workload is gone), and each unit's ConfigMap,
Secret, Service, PodGroup and workload. The companions hang on the workload through the
ConfigMap (:func:`.create_objects.create_unit`), so deleting it deletes them. If any step
fails, everything this submission created is deleted again and sbatch prints
``Batch job submission failed: <the API server's message>``; a job id whose names another
job's objects hold is given up for a new one.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple

from parsers.allocation import Allocation
from parsers.errors import submission_failed
from parsers.formats.messages import submitted_line
from parsers.jobspec import JobSpec, SubmitOptions
from sbatch_k8s.backends.kubernetes.api.client import KubeClient, KubeError
from sbatch_k8s.user_messages import print_warning

if TYPE_CHECKING:
    from sbatch_k8s.submission_plan import SubmissionPlan


def _test_only_line(job_id: int, allocation: Allocation, names: Sequence[str],
                    partition: str) -> str:
    from parsers.values.hostlist import compress_hostlist

    start = time.strftime("%Y-%m-%dT%H:%M:%S")
    return (f"sbatch: Job {job_id} to start at {start} using {sum(allocation.cpus_per_node)} "
            f"processors on nodes {compress_hostlist(list(names))} in partition {partition}\n")


def submit_to_cluster(plan: "SubmissionPlan", environ: Mapping[str, str],
                      client: KubeClient) -> int:
    """``sbatch`` against the cluster; sbatch's exit code."""
    submit, config = plan.submit, plan.config
    created = create_on_cluster(plan, environ, client)
    if created is None:
        return 0
    namespace, job_ids = created
    if not submit.quiet:
        sys.stdout.write(submitted_line(job_ids[0], submit.parsable, config.cluster_name
                                        if submit.clusters is not None else ""))
        sys.stdout.flush()
    if not submit.wait:
        return 0
    from sbatch_k8s.backends.kubernetes.output.waiting import wait_for_jobs

    return wait_for_jobs(client, namespace, job_ids, config)


def create_on_cluster(plan: "SubmissionPlan", environ: Mapping[str, str], client: KubeClient
                      ) -> Optional[Tuple[str, List[int]]]:
    """Create the job's objects: their namespace and the job ids (None with
    ``--test-only``, which has the server check them and prints where the job would run).
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
            _dry_run(client, namespace, units, job, allocation, partition.name,
                     attempts.base_id, submit)
            return None
        for attempt in range(CONFLICT_ATTEMPTS):
            base_id = allocate_job_ids(client, ids, attempts.count, known)
            units = attempts.render(base_id, warn=attempt == 0)
            try:
                return namespace, attempts.create(units)
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
             job: JobSpec, allocation: Allocation, partition: str, base_id: int,
             submit: SubmitOptions) -> int:
    """``--test-only``: the server checks every object (``dryRun=All``); nothing is stored."""
    try:
        for unit in units:
            for manifest in unit:
                client.create(manifest, namespace, dry_run=True)
    except KubeError as e:
        raise submission_failed(str(e)) from e
    names = [f"{units[0][-1]['metadata']['name']}-{i}" for i in range(allocation.node_count)]
    if not submit.quiet:
        sys.stderr.write(_test_only_line(base_id, allocation, names, partition))
    return 0
