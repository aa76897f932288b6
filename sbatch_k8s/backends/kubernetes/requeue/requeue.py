"""``scontrol requeue`` on a cluster: the job runs again under the same id, with new pods.

A finished workload cannot be restarted (an Indexed Job that completed or failed stays so), so
requeueing replaces it by a copy of itself: the companions (the job's ConfigMap, and through
it its Secret, Service, PodGroup — every object of a unit shares the workload's name,
:func:`..submit.create_objects.create_unit`) are first detached from the workload by detaching the
ConfigMap, so that deleting the workload keeps them; the workload is deleted and its pods waited for
(a requeue never has two generations of pods under one job id); the record is rewritten pending; a
fresh copy of the workload is created with the restart count in its pods' environment (the job's
ConfigMap and Secret are immutable), and the ConfigMap is hung on it again. The job's Secret is
never read. What the record and the copy become, and how long the job waits before it may start
again, is :mod:`.next_run`'s (pure).

Every requeue first claims the job's record with the requeue mark (:mod:`.mark`), and
the record it rewrites pending drops it: until then the run's end is not the job's — nobody
records it, nor releases or fails a dependent because of it.

A running job is then asked to end as slurmctld's requeue ends it: a ``requeue`` request on
its node-0 pod (:mod:`sbatch_k8s.runtime.cluster.cancel_requests`), which node 0's runtime carries
out with slurmstepd's ``*** JOB … CANCELLED AT … DUE TO JOB REQUEUE ***`` line; the workload
is deleted when node 0 has ended, or after :data:`NOTICE_WAIT_S` (a kubelet refreshes the
request file within its sync period: when it is slower, the pods' SIGTERM ends the run and
the line is a plain cancel's).
"""

from __future__ import annotations

import datetime
import time
from typing import Any, Dict, List, Mapping, Tuple

from parsers.job_records import PENDING, JobRecord
from sbatch_k8s.backends.kubernetes.api.client import KubeClient, KubeError
from sbatch_k8s.backends.kubernetes.api.kinds import CONFIG_MAP, POD, Kind
from sbatch_k8s.backends.kubernetes.requeue.next_run import (
    fresh_workload,
    requeued_record,
    with_restart_count,
)
from sbatch_k8s.backends.requeue_rules import DEFAULT_REQUEUE_DELAY_S
from sbatch_k8s.operation_errors import BackendError
from sbatch_k8s.runtime.cluster.release import REQUEUEING_ANNOTATION, WAITING_LABEL
from parsers.vocabulary import ARRAY_JOB_ID, ARRAY_TASK_ID, JOB_ID

#: How long requeue waits for the old pods to be gone (their runtime's KillWait and the
#: pods' grace period, on a busy cluster).
OLD_PODS_WAIT_S = 180.0
#: How long a running job's node 0 gets to end on the requeue request before its workload is
#: deleted anyway (module docstring).
NOTICE_WAIT_S = 20.0
POLL_S = 0.5


def _pod_selector(record: JobRecord) -> str:
    if record.array_job_id is None:
        return f"{JOB_ID}={record.job_id}"
    return f"{ARRAY_JOB_ID}={record.array_job_id},{ARRAY_TASK_ID}={record.array_task_id}"


def _owner(workload: Mapping[str, Any]) -> Dict[str, Any]:
    meta = workload["metadata"]
    return {"apiVersion": workload["apiVersion"], "kind": workload["kind"],
            "name": meta["name"], "uid": meta["uid"], "controller": False,
            "blockOwnerDeletion": False}


def _companions(client: KubeClient, workload: Mapping[str, Any],
                namespace: str) -> List[Tuple[Kind, Dict[str, Any]]]:
    """The job's ConfigMap when the workload owns it (the other companions hang on it)."""
    meta = workload["metadata"]
    obj = client.get(CONFIG_MAP, meta["name"], namespace)
    owners = ((obj or {}).get("metadata") or {}).get("ownerReferences") or []
    if obj is not None and any(o.get("uid") == meta.get("uid") for o in owners):
        return [(CONFIG_MAP, obj)]
    return []


def _wait_gone(client: KubeClient, kind: Kind, name: str, namespace: str,
               selector: str, job_id: int) -> None:
    """Until the workload and every pod of the job are gone (BackendError after
    :data:`OLD_PODS_WAIT_S`)."""
    deadline = time.monotonic() + OLD_PODS_WAIT_S
    while True:
        pods, _ = client.list(POD, namespace, selector)
        if not pods and client.get(kind, name, namespace) is None:
            return
        if time.monotonic() > deadline:
            raise BackendError(f"job {job_id}: its old pods are still terminating; "
                               "requeue it again later")
        time.sleep(POLL_S)


def _local_iso(moment: int) -> str:
    """``moment`` as the gate annotation writes it: naive local time, seconds."""
    return datetime.datetime.fromtimestamp(moment).isoformat(timespec="seconds")


def _end_running(client: KubeClient, record: JobRecord, namespace: str) -> None:
    """Ask a running job's node 0 to end the run for a requeue, and give it
    :data:`NOTICE_WAIT_S` to do so (module docstring)."""
    from sbatch_k8s.backends.kubernetes.read.pod_view import is_alive, nodes_by_index
    from sbatch_k8s.backends.kubernetes.history.records import is_final
    from sbatch_k8s.runtime.cluster.cancel_requests import REQUEUE, with_request
    from parsers.vocabulary import SCANCEL_REQUESTS

    if is_final(record) or record.state == PENDING:
        return
    pods, _ = client.list(POD, namespace, _pod_selector(record))
    node0 = nodes_by_index(pods, record.node_count).get(0)
    if node0 is None or not is_alive(node0):
        return
    meta = node0["metadata"]
    value = with_request((meta.get("annotations") or {}).get(SCANCEL_REQUESTS), None, REQUEUE)
    try:
        client.merge_patch(POD, meta["name"], namespace, {"metadata": {
            "resourceVersion": meta.get("resourceVersion"),
            "annotations": {SCANCEL_REQUESTS: value}}})
    except KubeError:
        return  # gone or changed meanwhile: the deletion ends it
    deadline = time.monotonic() + NOTICE_WAIT_S
    while time.monotonic() < deadline:
        pod = client.get(POD, meta["name"], namespace)
        if pod is None or not is_alive(pod):
            return
        time.sleep(POLL_S)


def requeue_on_cluster(client: KubeClient, record: JobRecord, ref: Mapping[str, str],
                       kind: Kind, namespace: str, hold: bool = False,
                       delay_s: float = DEFAULT_REQUEUE_DELAY_S, claimed: bool = False) -> None:
    """Run the job ``record`` again under its id, ``delay_s`` from now (module docstring;
    held with ``hold``), its record first claimed with the requeue mark unless the caller
    ``claimed`` it (:mod:`.mark`: until the record is rewritten pending, the run's end
    is nobody's reason to release or fail a dependent). BackendError when another requeue
    holds the job, its workload is gone (deleted after it finished) or its old pods do not
    go; the mark is then removed."""
    from sbatch_k8s.backends.kubernetes.history.records import record_name
    from sbatch_k8s.backends.kubernetes.requeue.mark import claim, unclaim

    name = record_name(record.job_id)
    if not claimed and not claim(client, namespace, name):
        raise BackendError(f"job {record.job_id}: its record keeps changing; requeue it "
                           "again later")
    try:
        _replace(client, record, ref, kind, namespace, hold, delay_s)
    except BaseException:
        unclaim(client, namespace, name)
        raise


def _replace(client: KubeClient, record: JobRecord, ref: Mapping[str, str], kind: Kind,
             namespace: str, hold: bool, delay_s: float) -> None:
    """The requeue of a claimed job (:func:`requeue_on_cluster`)."""
    from parsers.vocabulary import ACTIVE, RECORD_KEY, REPORT_KEY, RUNNING_STEPS_KEY
    from sbatch_k8s.backends.kubernetes.history.records import (
        END_TIME_ANNOTATION,
        STATE_LABEL,
        record_name,
        record_to_json,
    )

    name = ref["name"]
    workload = client.get(kind, name, namespace)
    if workload is None:
        raise BackendError(f"job {record.job_id}: its {kind.kind} {name} no longer exists, "
                           "so it cannot run again")
    _end_running(client, record, namespace)
    companions = _companions(client, workload, namespace)
    for companion_kind, _ in companions:
        client.merge_patch(companion_kind, name, namespace,
                           {"metadata": {"ownerReferences": None}})
    client.delete(kind, name, namespace, propagation="Background")
    _wait_gone(client, kind, name, namespace, _pod_selector(record), record.job_id)

    now = int(time.time())
    requeued = requeued_record(record, now, hold, delay_s)
    gated = requeued.begin_time is not None
    client.merge_patch(CONFIG_MAP, record_name(record.job_id), namespace, {
        "metadata": {"labels": {STATE_LABEL: ACTIVE, WAITING_LABEL: "true" if gated else None},
                     "annotations": {END_TIME_ANNOTATION: None,
                                     REQUEUEING_ANNOTATION: None}},
        # The ended run's report and published steps go: the next run starts with none.
        "data": {RECORD_KEY: record_to_json(requeued), REPORT_KEY: None,
                 RUNNING_STEPS_KEY: None}})
    begin = _local_iso(requeued.begin_time) if requeued.begin_time is not None else None
    made = client.create(with_restart_count(fresh_workload(workload, hold, begin),
                                            requeued.restarts), namespace)
    owner = {"metadata": {"ownerReferences": [_owner(made)]}}
    for companion_kind, _ in companions:
        client.merge_patch(companion_kind, name, namespace, owner)
