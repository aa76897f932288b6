"""``sbatch`` on a cluster: ids, objects, and nothing half-created.

Order of work: plan (partition, allocation — Slurm's refusals first, nothing contacted), job
ids from the cluster-wide counter, rendering (:func:`translators.render`), then the objects:
the shared runtime ConfigMap when missing, each job's record (what sacct reads after the
workload is gone), and each unit's ConfigMap, Secret, Service, PodGroup and workload. The
companions hang on the workload through the ConfigMap (:func:`create_unit`), so deleting
it deletes them. If any
step fails, everything this submission created is deleted again and sbatch prints
``Batch job submission failed: <the API server's message>``.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
import sys
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from parsers.allocation import Allocation
from parsers.errors import submission_failed
from parsers.formats.job_stdio import recorded_stdio
from parsers.formats.job_values import eligible_from
from parsers.jobspec import JobSpec, SubmitContext, SubmitOptions, initial_reason
from translators.ownership import Ownership
from parsers.records import PENDING, JobRecord, build
from sbatch_k8s.backends.base import SRUN_COMMAND
from sbatch_k8s.backends.kubernetes.client import KubeClient, KubeError
from sbatch_k8s.backends.kubernetes.kinds import CONFIG_MAP, WORKLOADS, Kind, kind_of
from sbatch_k8s.cli.common import print_warning
from translators.config import ClusterConfig, PartitionConfig



class Submission:
    """What one ``sbatch`` created so far, so that a failure can take it back."""

    def __init__(self, client: KubeClient, namespace: str, mark: str = "") -> None:
        self.client = client
        self.namespace = namespace
        self.mark = mark or secrets.token_hex(8)
        self.created: List[Tuple[Kind, str]] = []

    def create(self, manifest: Mapping[str, Any]) -> Dict[str, Any]:
        """Create one object, marked as this submission's (a retried create then knows its
        own object from another job's)."""
        from sbatch_k8s.backends.kubernetes.client import SUBMISSION_ANNOTATION

        manifest = dict(manifest, metadata=dict(manifest["metadata"]))
        manifest["metadata"]["annotations"] = dict(
            manifest["metadata"].get("annotations") or {}, **{SUBMISSION_ANNOTATION: self.mark})
        made = self.client.create(manifest, self.namespace)
        self.created.append((kind_of(manifest), manifest["metadata"]["name"]))
        return made

    def roll_back(self) -> None:
        """Delete what this submission created, newest first (best effort: each delete is
        tried even when an earlier one fails)."""
        for kind, name in reversed(self.created):
            try:
                self.client.delete(kind, name, self.namespace, propagation="Background")
            except KubeError:
                continue
        self.created.clear()


def ensure_runtime(client: KubeClient, namespace: str, runtime_hash: str, bundle: bytes) -> None:
    """Create the shared runtime ConfigMap of this version when it is missing (another
    submitter creating it at the same time is fine: 409 means it exists), and refuse to
    submit when the one there holds other bytes (whoever created it first could have put
    anything under the name; every pod also checks it before running it)."""
    from translators.objects import runtime_config_map
    from translators.storage import RUNTIME_KEY, runtime_config_map_name

    name = runtime_config_map_name(runtime_hash)
    found = client.get(CONFIG_MAP, name, namespace)
    if found is None:
        try:
            client.create(runtime_config_map(runtime_hash, bundle), namespace)
            return
        except KubeError as e:
            if e.status != 409:
                raise
        found = client.get(CONFIG_MAP, name, namespace) or {}
    import base64
    import hashlib

    held = base64.b64decode(((found.get("binaryData") or {}).get(RUNTIME_KEY) or "").encode())
    if hashlib.sha256(held).digest() != hashlib.sha256(bundle).digest():
        raise submission_failed(
            f"the shared runtime ConfigMap {name} in namespace {namespace} does not hold "
            f"this runtime (SHA-256 {hashlib.sha256(held).hexdigest()[:16]}, expected "
            f"{hashlib.sha256(bundle).hexdigest()[:16]}): an operator must delete it")


def submitted_record(job: JobSpec, allocation: Allocation, context: SubmitContext,
                     partition: PartitionConfig, cluster: str, job_id: int,
                     array_job_id: Optional[int], array_task_id: Optional[int],
                     submit_time: int, begin_time: Optional[int] = None,
                     batch: bool = True) -> JobRecord:
    """The job as sacct knows it at submission (PENDING); ``begin_time``: ``--begin``
    resolved (epoch seconds); ``batch`` False for the job of an ``srun`` outside a job."""
    workdir = os.path.normpath(os.path.join(context.cwd, job.chdir)) if job.chdir else \
        context.cwd
    gpus = allocation.gpus_per_node
    stdout, stderr, stdin = recorded_stdio(job.output, job.error, job.input, workdir)
    return build(
        JobRecord, job_id=job_id, name=job.job_name, user=context.user, uid=context.uid,
        group=context.group, gid=context.gid, partition=partition.name, state=PENDING,
        account=job.account or context.user, qos=job.qos or "normal",
        reason=initial_reason(job), array_job_id=array_job_id, array_task_id=array_task_id,
        submit_time=submit_time,
        eligible_time=eligible_from(
            begin_time, bool(job.hold or (job.dependency and job.dependency.clauses)),
            submit_time),
        dependency=job.dependency.format() if job.dependency else "",
        begin_time=begin_time, kill_on_invalid_dep=bool(job.kill_on_invalid_dep),
        time_limit_min=job.time_limit_min, node_count=allocation.node_count,
        cpus=sum(allocation.cpus_per_node), batch_cpus=allocation.cpus_per_node[0],
        ntasks=allocation.ntasks, cpus_per_task=job.cpus_per_task or 1,
        ntasks_per_node=job.ntasks_per_node,
        min_memory_mb=allocation.mem_per_node_mb or job.mem_per_cpu_mb,
        memory_per_cpu=job.mem_per_cpu_mb is not None, gres=f"gpu:{gpus}" if gpus else "",
        nice=job.nice or 0, requeue=job.requeue is not False, work_dir=workdir,
        command=os.path.abspath(job.script.path) if job.script.path else "",
        stdout=stdout, stderr=stderr, stdin=stdin, comment=job.comment or "",
        exclusive=job.exclusive, submit_host=context.host, features=job.constraint or "",
        cluster=cluster, array_throttle=job.array.max_running if job.array else None,
        batch_flag=batch)


def _units(manifests: Sequence[Dict[str, Any]]) -> List[List[Dict[str, Any]]]:
    """Manifests grouped unit by unit (a unit ends with its workload)."""
    units: List[List[Dict[str, Any]]] = [[]]
    for manifest in manifests:
        units[-1].append(manifest)
        if kind_of(manifest) in WORKLOADS:
            units.append([])
    return [u for u in units if u]


def _owner(workload: Mapping[str, Any]) -> Dict[str, Any]:
    meta = workload["metadata"]
    return {"apiVersion": workload["apiVersion"], "kind": workload["kind"],
            "name": meta["name"], "uid": meta["uid"], "controller": False,
            "blockOwnerDeletion": False}


def create_unit(submission: Submission, unit: Sequence[Dict[str, Any]]) -> None:
    """Create one unit's objects: its ConfigMap first, the other companions (Secret,
    Service, PodGroup) owned by that ConfigMap from their creation, the workload last, and
    then the ConfigMap hung on the workload. Deleting the workload deletes them all (the
    garbage collector follows the chain), and a requeue keeps them by detaching the
    ConfigMap alone: nobody ever reads or patches the job's Secret."""
    files, *others, workload = unit
    made_files = submission.create(files)
    for manifest in others:
        meta = dict(manifest["metadata"], ownerReferences=[_owner(made_files)])
        submission.create(dict(manifest, metadata=meta))
    made = submission.create(workload)
    submission.client.merge_patch(kind_of(files), files["metadata"]["name"],
                                  submission.namespace,
                                  {"metadata": {"ownerReferences": [_owner(made)]}})


def _test_only_line(job_id: int, allocation: Allocation, names: Sequence[str],
                    partition: str) -> str:
    from parsers.values.hostlist import compress_hostlist

    start = time.strftime("%Y-%m-%dT%H:%M:%S")
    return (f"sbatch: Job {job_id} to start at {start} using {sum(allocation.cpus_per_node)} "
            f"processors on nodes {compress_hostlist(list(names))} in partition {partition}\n")


def submit_to_cluster(job: JobSpec, submit: SubmitOptions, config: ClusterConfig,
                      environ: Mapping[str, str], client: KubeClient) -> int:
    """``sbatch`` against the cluster; sbatch's exit code."""
    created = create_on_cluster(job, submit, config, environ, client)
    if created is None:
        return 0
    namespace, job_ids = created
    if not submit.quiet:
        sys.stdout.write(f"{job_ids[0]}\n" if submit.parsable else
                         f"Submitted batch job {job_ids[0]}\n")
        sys.stdout.flush()
    if not submit.wait:
        return 0
    from sbatch_k8s.backends.kubernetes.waiting import wait_for_jobs

    return wait_for_jobs(client, namespace, job_ids, config)


def create_on_cluster(job: JobSpec, submit: SubmitOptions, config: ClusterConfig,
                      environ: Mapping[str, str], client: KubeClient, command: str = "sbatch"
                      ) -> Optional[Tuple[str, List[int]]]:
    """Create the job's objects: their namespace and the job ids (None with
    ``--test-only``, which has the server check them and prints where the job would run).
    ``command`` names who warns (``srun`` creating a job for a step). A name another job
    holds is never taken over: that attempt is taken back and the job gets a new id
    (:mod:`.ids`)."""
    from sbatch_k8s.backends.kubernetes.ids import (
        allocate_job_ids,
        peek_next_id,
        raise_above,
        state_namespace,
    )
    from sbatch_k8s.backends.kubernetes.node_shape import plan_on_cluster
    from sbatch_k8s.backends.kubernetes.dependencies import check_targets
    from sbatch_k8s.backends.kubernetes.submitter import (
        cluster_submitter,
        partition_namespace,
        released_by,
        user_namespaces,
        with_job_account,
    )
    from sbatch_k8s.submit import submit_context

    check_backend_support(job, submit, command)
    partition, allocation = plan_on_cluster(job, config, client, environ)
    try:
        context, ownership, _ = cluster_submitter(client, config, environ,
                                                  submit_context(environ))
        known = user_namespaces(config, client, context.user)
        if not submit.test_only:
            check_targets(job, client, known)
            ownership = dataclasses.replace(ownership,
                                            released_by=released_by(client, job, known))
    except KubeError as e:
        raise submission_failed(str(e)) from e
    if not submit.quiet:
        for note in allocation.warnings:
            print_warning(command, note)
    namespace = partition_namespace(partition, client, context.user)
    try:
        partition = with_job_account(partition, client, namespace)
    except KubeError as e:
        raise submission_failed(str(e)) from e
    ids = state_namespace(config.state_namespace)
    plan = _Plan(job, submit, config, environ, client, command, partition, allocation,
                 namespace, context, ownership)
    try:
        if submit.test_only:
            units = plan.render(peek_next_id(client, ids), warn=True)
            _dry_run(client, namespace, units, job, allocation, partition.name,
                     plan.base_id, submit)
            return None
        for attempt in range(CONFLICT_ATTEMPTS):
            base_id = allocate_job_ids(client, ids, plan.count, known)
            units = plan.render(base_id, warn=attempt == 0)
            try:
                return namespace, plan.create(units)
            except KubeError as e:
                if e.status != 409 or e.reason != "AlreadyExists":
                    raise
                raise_above(client, ids, base_id + plan.count - 1, known | {namespace})
    except KubeError as e:
        raise submission_failed(str(e)) from e
    raise submission_failed(f"the names of job ids up to {base_id + plan.count - 1} are "
                            f"held by other objects in namespace {namespace} "
                            f"({CONFLICT_ATTEMPTS} ids tried)")


#: How many new ids a submission tries when the names of its id are held by other objects.
CONFLICT_ATTEMPTS = 5


class _Plan:
    """One submission's fixed inputs; :meth:`render` and :meth:`create` per attempted id."""

    def __init__(self, job: JobSpec, submit: SubmitOptions, config: ClusterConfig,
                 environ: Mapping[str, str], client: KubeClient, command: str,
                 partition: PartitionConfig, allocation: Allocation, namespace: str,
                 context: SubmitContext, ownership: Ownership) -> None:
        from sbatch_k8s.runtime_bundle import build_bundle, bundle_hash
        from sbatch_k8s.submit import now_iso

        self.job, self.submit, self.config, self.environ = job, submit, config, environ
        self.client, self.command, self.partition = client, command, partition
        self.allocation, self.namespace = allocation, namespace
        self.context = context
        self.ownership = ownership
        self.count = job.array.count() if job.array else 1
        self.minor = submit_minor(submit, client)
        self.target = submit.k8s_target or partition.target
        self.bundle = build_bundle()
        self.runtime_hash = bundle_hash(self.bundle)
        self.submit_iso = now_iso()
        #: The submission mark every object carries (:data:`.client.SUBMISSION_ANNOTATION`).
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
        if warn and not self.submit.quiet:
            for note in result.warnings:
                print_warning(self.command, note)
        units = _units(result.manifests)
        if self.partition.service_account:  # the commands inside the job use the same config
            from sbatch_k8s.backends.kubernetes.carried_config import carry_configuration

            carry_configuration(units, self.environ)
        return units

    def create(self, units: List[List[Dict[str, Any]]]) -> List[int]:
        """Create the records and the units under :attr:`base_id`, or take back everything
        this attempt created and raise; the job ids."""
        from sbatch_k8s.backends.kubernetes.dependencies import release_new
        from sbatch_k8s.backends.kubernetes.records import record_config_map
        from sbatch_k8s.runtime.release import WAITING_LABEL
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


def _workload_refs(units: Sequence[Sequence[Dict[str, Any]]], namespace: str,
                   indices: Sequence[Optional[int]], base_id: int) -> List[Dict[str, str]]:
    """For each job id of the submission, the workload that runs it."""
    by_id: Dict[str, Dict[str, str]] = {}
    for unit in units:
        workload = unit[-1]
        ref = {"apiVersion": workload["apiVersion"], "kind": workload["kind"],
               "name": workload["metadata"]["name"], "namespace": namespace}
        by_id[workload["metadata"]["labels"]["sbatch-k8s.io/job-id"]] = ref
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
        by_id[meta["labels"]["sbatch-k8s.io/job-id"]] = {
            k: v for k, v in annotations.items() if k in OWNERSHIP_KEYS}
    first = next(iter(by_id.values()))
    return [by_id.get(str(base_id + k), first) for k in range(len(indices))]


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
