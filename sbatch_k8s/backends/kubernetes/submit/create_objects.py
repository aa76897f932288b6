"""Creating a job's objects on a cluster, and taking them back.

:class:`Submission` remembers what one attempt created (each object marked as this
submission's, :data:`..api.client.SUBMISSION_ANNOTATION`) so that a failure deletes it again;
:func:`create_unit` creates one unit's objects in their ownership chain; :func:`ensure_runtime`
creates the shared runtime ConfigMap or checks the one there; :func:`submitted_record` is the
job as sacct knows it at submission.
"""

from __future__ import annotations

import os
import secrets
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from parsers.allocation import Allocation
from parsers.input_errors import submission_failed
from parsers.formats.job_stdio import recorded_stdio
from parsers.formats.job_values import eligible_from
from parsers.jobspec import JobSpec, SubmitContext, initial_reason
from parsers.job_records import PENDING, JobRecord, build
from sbatch_k8s.backends.kubernetes.api.client import KubeClient, KubeError
from sbatch_k8s.backends.kubernetes.api.kinds import CONFIG_MAP, Kind, kind_of
from translators.config import PartitionConfig


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
        from sbatch_k8s.backends.kubernetes.api.client import SUBMISSION_ANNOTATION

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
    from parsers.vocabulary import RUNTIME_KEY
    from translators.storage import runtime_config_map_name

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
    resolved (epoch seconds); ``batch`` False for the job of an ``srun`` outside a job. Its
    time limit is the one the job runs with (the partition's default without ``--time``),
    its memory Slurm's MinMemoryCPU or MinMemoryNode."""
    from translators.plan import effective_time_limit_min

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
        time_limit_min=effective_time_limit_min(job, partition),
        node_count=allocation.node_count,
        cpus=sum(allocation.cpus_per_node), batch_cpus=allocation.cpus_per_node[0],
        ntasks=allocation.ntasks, cpus_per_task=job.cpus_per_task or 1,
        ntasks_per_node=job.ntasks_per_node,
        min_memory_mb=job.mem_per_cpu_mb if job.mem_per_cpu_mb is not None
        else allocation.mem_per_node_mb,
        memory_per_cpu=job.mem_per_cpu_mb is not None, gres=f"gpu:{gpus}" if gpus else "",
        nice=job.nice or 0, requeue=job.requeue is not False, work_dir=workdir,
        command=os.path.abspath(job.script.path) if job.script.path else "",
        stdout=stdout, stderr=stderr, stdin=stdin, comment=job.comment or "",
        exclusive=job.exclusive, submit_host=context.host, features=job.constraint or "",
        cluster=cluster, array_throttle=job.array.max_running if job.array else None,
        batch_flag=batch)


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
