"""scancel and scontrol hold/release on a cluster.

Cancelling writes the record first (CANCELLED, by whom, when), then deletes the workload:
Kubernetes deletes its pods, each pod's runtime gets SIGTERM, signals its tasks and kills
what is left after KillWait, as slurmstepd does. Signalling (``--signal``, ``-b``, ``-f``)
and cancelling one step (``scancel 12.3``) append a request to an annotation of the job's
node-0 pod, which its runtime reads from a downward-API file and carries out as node 0 does
for a local scancel (:mod:`sbatch_k8s.runtime.cluster.cancel_requests`): nobody needs to reach the
pod, and the pod needs no API permissions. The kubelet refreshes that file within its sync
period (about a minute on a default kubelet), so a signal arrives that much later.
Holding suspends the workload (no pods) and releasing resumes it; where the suspend field
lives depends on the kind, and on a Kueue partition holding also takes the workload out of
Kueue's hands (:mod:`translators.gates`).
"""

from __future__ import annotations

import time
from typing import Any, Dict, Mapping, Optional

from parsers.formats.job_values import eligible_from
from parsers.job_records import CANCELLED, PENDING, RUNNING, JobRecord, with_changes
from sbatch_k8s.backends.base import DONE, FINISHED
from sbatch_k8s.backends.kubernetes.api.client import KubeClient, KubeError
from sbatch_k8s.backends.kubernetes.api.kinds import CONFIG_MAP, POD, WORKLOADS, Kind
from sbatch_k8s.operation_errors import BackendError
from parsers.vocabulary import ARRAY_JOB_ID, ARRAY_TASK_ID, JOB_ID, SCANCEL_REQUESTS

#: Times scancel reads node 0's pod again when another writer changed it first.
ANNOTATE_ATTEMPTS = 5


def _kind(ref: Mapping[str, str]) -> Optional[Kind]:
    return next((k for k in WORKLOADS if k.kind == ref.get("kind")
                 and k.api_version == ref.get("apiVersion")), None)


def _write_record(client: KubeClient, record: JobRecord, namespace: str) -> None:
    from sbatch_k8s.backends.kubernetes.history.records import final_patch, record_name

    client.merge_patch(CONFIG_MAP, record_name(record.job_id), namespace, final_patch(record))


def cancel_on_cluster(client: KubeClient, record: JobRecord, ref: Mapping[str, str],
                      namespace: str, uid: int, signum: Optional[int], batch: bool,
                      full: bool, step: Optional[int]) -> str:
    """Cancel one job, or (``signum``, ``step``) signal it or cancel one of its steps:
    ``done`` or ``finished``."""
    from sbatch_k8s.backends.kubernetes.history.records import is_final

    if is_final(record):
        return FINISHED
    if signum is not None or step is not None:
        return _request_on_node0(client, record, namespace, signum, batch, full, step)
    now = int(time.time())
    started = record.state != PENDING
    cancelled = with_changes(record, state=CANCELLED, end_time=now, cancelled_by=uid,
                             exit_code=0, exit_signal=15 if started else 0,
                             start_time=record.start_time if started else now,
                             reason="None")
    if started:
        from sbatch_k8s.backends.kubernetes.history.record_steps import cancelled_steps

        cancelled = with_changes(cancelled, steps=cancelled_steps(record.steps, now))
    _write_record(client, cancelled, namespace)
    kind = _kind(ref)
    if kind is None:
        return DONE
    if record.array_job_id is not None and ref.get("name") and _shared(record, ref):
        _delete_element_pods(client, record, namespace)
    else:
        client.delete(kind, ref["name"], namespace, propagation="Background")
    return DONE


def _shared(record: JobRecord, ref: Mapping[str, str]) -> bool:
    """True when ``record`` is one element (not the first) of an array run as one Indexed
    Job: its workload is the array's ``<name>-<array id>``, not its own
    ``<name>-<array id>-<task id>``."""
    own = f"-{record.array_job_id}-{record.array_task_id}"
    return not ref["name"].endswith(own) and record.job_id != record.array_job_id


def _node0_pod(client: KubeClient, record: JobRecord, namespace: str
               ) -> Optional[Dict[str, Any]]:
    """The live pod of the job's node 0, if any. An array element's pods are told apart by
    their labels: those of an element run as its own workload carry its task id; an element
    run as one completion index of the array's shared Indexed Job is the pod of that index."""
    from sbatch_k8s.backends.kubernetes.read.pod_view import is_alive, nodes_by_index

    if record.array_job_id is None:
        pods, _ = client.list(POD, namespace, f"{JOB_ID}={record.job_id}")
        nodes = nodes_by_index(pods, record.node_count)
    else:
        pods, _ = client.list(POD, namespace, f"{ARRAY_JOB_ID}={record.array_job_id}")
        labels = [(p, (p.get("metadata") or {}).get("labels") or {}) for p in pods]
        own = [p for p, tags in labels if tags.get(ARRAY_TASK_ID) == str(record.array_task_id)]
        if own:
            nodes = nodes_by_index(own, record.node_count)
        else:
            shared = [p for p, tags in labels if ARRAY_TASK_ID not in tags]
            nodes = nodes_by_index(shared, 1, record.job_id - record.array_job_id)
    pod = nodes.get(0)
    return pod if pod is not None and is_alive(pod) else None


def _request_on_node0(client: KubeClient, record: JobRecord, namespace: str,
                      signum: Optional[int], batch: bool, full: bool,
                      step: Optional[int]) -> str:
    """Append scancel's request (a signal, or a step's cancel) to node 0's pod: ``done``, or
    ``finished`` when the job has no running node 0. A pending job has nothing to signal (as
    the local backend: ``done``), nor any step. Concurrent scancels do not lose each other's
    requests: the patch names the resourceVersion it read (409: read again)."""
    from sbatch_k8s.runtime.cluster.cancel_requests import target_of, with_request

    if record.state == PENDING:
        return FINISHED if step is not None else DONE
    if record.state != RUNNING:
        return FINISHED
    pod = _node0_pod(client, record, namespace)
    target = target_of(batch, full, step)
    for _ in range(ANNOTATE_ATTEMPTS):
        if pod is None:
            return FINISHED
        meta = pod["metadata"]
        value = with_request((meta.get("annotations") or {}).get(SCANCEL_REQUESTS), signum,
                             target, step)
        try:
            client.merge_patch(POD, meta["name"], namespace, {"metadata": {
                "resourceVersion": meta.get("resourceVersion"),
                "annotations": {SCANCEL_REQUESTS: value}}})
            return DONE
        except KubeError as e:
            if e.status == 404:
                return FINISHED
            if e.status != 409:
                raise
        pod = client.get(POD, meta["name"], namespace)
    raise BackendError(f"job {record.job_id}: node 0's pod kept changing; scancel again")


def _delete_element_pods(client: KubeClient, record: JobRecord, namespace: str) -> None:
    position = record.job_id - (record.array_job_id or record.job_id)
    pods, _ = client.list(POD, namespace, f"sbatch-k8s.io/job-id={record.array_job_id}")
    for pod in pods:
        annotations = pod["metadata"].get("annotations") or {}
        if annotations.get("batch.kubernetes.io/job-completion-index") == str(position):
            client.delete(POD, pod["metadata"]["name"], namespace)


def hold_on_cluster(client: KubeClient, record: JobRecord, ref: Mapping[str, str],
                    namespace: str, reason: Optional[str]) -> str:
    """Suspend (``reason``: why it is held) or resume (None) one pending job's workload:
    ``done``. Released, a job that still waits for its dependency or begin time stays
    suspended with that reason (:mod:`.dependencies`)."""
    from sbatch_k8s.backends.kubernetes.control.dependencies import (
        hold_or_release_patch,
        release_new,
    )
    from sbatch_k8s.backends.kubernetes.history.records import record_name

    kind = _kind(ref)
    if kind is None:
        return FINISHED
    hold = reason is not None
    workload = client.get(kind, ref["name"], namespace)
    if workload is None:
        return FINISHED
    patch, waits = hold_or_release_patch(
        workload, None if not hold else "admin" if reason == "JobHeldAdmin" else "user")
    client.merge_patch(kind, ref["name"], namespace, patch)
    now = int(time.time())
    held = with_changes(record, reason=reason or waits or "None",
                        eligible_time=eligible_from(record.begin_time, bool(hold or waits), now))
    from sbatch_k8s.backends.kubernetes.history.records import record_config_map

    body = record_config_map(held, dict(ref))
    client.merge_patch(CONFIG_MAP, record_name(record.job_id), namespace,
                       {"data": body["data"]})
    if waits is not None:
        release_new(client, namespace, [record.job_id], now)
    return DONE


def requeue_job(client: KubeClient, record: JobRecord, ref: Mapping[str, str],
                namespace: str, hold: bool = False, delay_s: float = 121.0) -> str:
    """``scontrol requeue`` (``requeuehold`` with ``hold``) of one job (:mod:`..requeue.requeue`),
    which may start again ``delay_s`` later: ``done``, ``pending`` for a job not started,
    ``disabled`` for one submitted with ``--no-requeue``."""
    from sbatch_k8s.backends.base import BATCH_ONLY, DISABLED, NOT_STARTED
    from sbatch_k8s.backends.kubernetes.requeue.requeue import requeue_on_cluster

    if not record.batch_flag:
        return BATCH_ONLY
    if not record.requeue:
        return DISABLED
    if record.state == PENDING:
        return NOT_STARTED
    kind = _kind(ref)
    if kind is None or not ref.get("name") or (record.array_job_id is not None
                                               and _shared(record, ref)):
        raise BackendError(f"job {record.job_id}: an element of an array run as one "
                           "workload cannot be requeued alone")
    requeue_on_cluster(client, record, ref, kind, namespace, hold, delay_s)
    return DONE
