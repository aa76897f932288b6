"""``sbatch`` on a cluster: ids, objects, and nothing half-created.

Order of work: plan (partition, allocation — Slurm's refusals first, nothing contacted), job
ids from the cluster-wide counter, rendering (:func:`translators.render`), then the objects:
the shared runtime ConfigMap when missing, each job's record (what sacct reads after the
workload is gone), and each unit's ConfigMap, Secret, Service, PodGroup and workload. The
companions then get ownerReferences to their workload, so deleting it deletes them. If any
step fails, everything this submission created is deleted again and sbatch prints
``Batch job submission failed: <the API server's message>``.
"""

from __future__ import annotations

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
from parsers.records import PENDING, JobRecord, build
from parsers.formats.messages import submitted_line
from sbatch_k8s.backends.base import SRUN_COMMAND
from sbatch_k8s.backends.kubernetes.client import KubeClient, KubeError
from sbatch_k8s.backends.kubernetes.kinds import CONFIG_MAP, WORKLOADS, Kind, kind_of
from sbatch_k8s.cli.common import print_warning
from translators.config import ClusterConfig, PartitionConfig



class Submission:
    """What one ``sbatch`` created so far, so that a failure can take it back."""

    def __init__(self, client: KubeClient, namespace: str) -> None:
        self.client = client
        self.namespace = namespace
        self.created: List[Tuple[Kind, str]] = []

    def create(self, manifest: Mapping[str, Any]) -> Dict[str, Any]:
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
    submitter creating it at the same time is fine: 409 means it exists)."""
    from translators.objects import runtime_config_map
    from translators.storage import runtime_config_map_name

    name = runtime_config_map_name(runtime_hash)
    if client.get(CONFIG_MAP, name, namespace) is not None:
        return
    try:
        client.create(runtime_config_map(runtime_hash, bundle), namespace)
    except KubeError as e:
        if e.status != 409:
            raise


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
    """Create one unit's objects, workload last, then hang the companions on it."""
    *companions, workload = unit
    for manifest in companions:
        submission.create(manifest)
    made = submission.create(workload)
    owner = {"metadata": {"ownerReferences": [_owner(made)]}}
    for manifest in companions:
        submission.client.merge_patch(kind_of(manifest), manifest["metadata"]["name"],
                                      submission.namespace, owner)


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
        sys.stdout.write(submitted_line(job_ids[0], submit.parsable, config.cluster_name
                                        if submit.clusters is not None else ""))
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
    ``command`` names who warns (``srun`` creating a job for a step)."""
    from sbatch_k8s.backends.kubernetes.ids import COUNTER_NAME, allocate_job_ids
    from sbatch_k8s.backends.kubernetes.node_shape import plan_on_cluster
    from sbatch_k8s.backends.kubernetes.records import record_config_map
    from sbatch_k8s.backends.kubernetes.dependencies import check_targets, release_new
    from sbatch_k8s.runtime.release import WAITING_LABEL
    from sbatch_k8s.runtime_bundle import build_bundle, bundle_hash
    from sbatch_k8s.submit import now_iso, submit_context
    from translators import RenderInputs, render
    from translators.gates import begin_moment, gate_annotations

    check_backend_support(job, submit, command)
    partition, allocation = plan_on_cluster(job, config, client, environ)
    if not submit.test_only:
        check_targets(job, client, {p.namespace or client.target.namespace
                                    for p in config.partitions})
    if not submit.quiet:
        for note in allocation.warnings:
            print_warning(command, note)
    namespace = partition.namespace or client.target.namespace
    state_namespace = config.state_namespace or client.target.namespace
    context = submit_context(environ)
    count = job.array.count() if job.array else 1
    minor = submit_minor(submit, client)
    target = submit.k8s_target or partition.target
    bundle = build_bundle()
    runtime_hash = bundle_hash(bundle)
    submit_iso = now_iso()
    try:
        if submit.test_only:
            counter = client.get(CONFIG_MAP, COUNTER_NAME, state_namespace)
            base_id = int(((counter or {}).get("data") or {}).get("next", 1))
        else:
            base_id = allocate_job_ids(client, state_namespace, count)
    except KubeError as e:
        raise submission_failed(str(e)) from e
    result = render(RenderInputs(
        job=job, allocation=allocation, context=context, partition=partition,
        cluster_name=config.cluster_name, job_id=base_id, token=secrets.token_hex(32),
        runtime_hash=runtime_hash, submit_time=submit_iso, target=target,
        kubernetes_minor=minor))
    if not submit.quiet:  # the allocation's warnings, printed above, lead the plan's
        for note in result.warnings[len(allocation.warnings):]:
            print_warning(command, note)
    units = _units(result.manifests)
    if partition.service_account:  # the commands inside the job use the same configuration
        from sbatch_k8s.backends.kubernetes.carried_config import carry_configuration

        carry_configuration(units, environ)
    if submit.test_only:
        _dry_run(client, namespace, units, job, allocation, partition.name, base_id, submit)
        return None
    submission = Submission(client, namespace)
    now = int(time.time())
    indices: Sequence[Optional[int]] = job.array.indices() if job.array else (None,)
    gates = gate_annotations(job, submit_iso)
    begin = begin_moment(job, submit_iso)
    try:
        ensure_runtime(client, namespace, runtime_hash, bundle)
        workload_refs = _workload_refs(units, namespace, indices, base_id)
        for k, index in enumerate(indices):
            record = submitted_record(job, allocation, context, partition,
                                      config.cluster_name, base_id + k,
                                      base_id if job.array else None, index, now,
                                      int(begin.timestamp()) if begin else None,
                                      batch=command != SRUN_COMMAND)
            manifest = record_config_map(record, workload_refs[k])
            if gates:
                manifest["metadata"]["labels"][WAITING_LABEL] = "true"
            submission.create(manifest)
        for unit in units:
            create_unit(submission, unit)
    except KubeError as e:
        submission.roll_back()
        raise submission_failed(str(e)) from e
    except BaseException:
        submission.roll_back()
        raise
    job_ids = [base_id + k for k in range(len(indices))]
    if gates:
        release_new(client, namespace, job_ids, int(time.time()))
    return namespace, job_ids


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
