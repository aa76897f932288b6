"""``scontrol requeue`` on a cluster: the job runs again under the same id, with new pods.

A finished workload cannot be restarted (an Indexed Job that completed or failed stays so), so
requeueing replaces it by a copy of itself: the companions (the job's ConfigMap, Secret,
Service, PodGroup — every object of a unit shares the workload's name) are first detached
from the workload so that deleting it keeps them; the workload is deleted and its pods waited
for (a requeue never has two generations of pods under one job id); the record goes back to
PENDING with reason ``BeginTime``, the restart count one higher and the submit time now, as
slurmctld's requeue does; ``job.json`` gets the restart count (the runtime exports it as
``SLURM_RESTART_COUNT`` and ``%r`` of the output file names); a fresh copy of the workload is
created (what the API server generated for the old one removed, never suspended), and the
companions are hung on it again. The run that ended is kept in the record's
``requeued_runs``, ended ``REQUEUED`` at the requeue with its steps (a running one's closed
as a cancel closes them), for ``sacct --duplicates``. ``requeuehold`` creates the copy held
(suspended, hold annotation ``user``), pending with slurmctld's reason ``job requeued in
held state`` until ``scontrol release``.

Every requeue first claims the job's record with the requeue mark (:mod:`.requeue_mark`), and
the record it rewrites pending drops it: until then the run's end is not the job's — nobody
records it, nor releases or fails a dependent because of it.

A running job is then asked to end as slurmctld's requeue ends it: a ``requeue`` request on
its node-0 pod (:mod:`sbatch_k8s.runtime.cancel_requests`), which node 0's runtime carries
out with slurmstepd's ``*** JOB … CANCELLED AT … DUE TO JOB REQUEUE ***`` line; the workload
is deleted when node 0 has ended, or after :data:`NOTICE_WAIT_S` (a kubelet refreshes the
request file within its sync period: when it is slower, the pods' SIGTERM ends the run and
the line is a plain cancel's).

Slurm keeps a requeued job ``PD (BeginTime)`` until its earlier run's credentials expired:
121 s after the requeue (``SBATCH_K8S_REQUEUE_DELAY`` seconds instead, as on the local
backend). The copy is created suspended with the ``--begin`` gate
(:mod:`translators.gates`: annotation ``sbatch-k8s.io/begin``, on a Kueue partition without
Kueue's labels), its record ``begin_time`` that moment and labelled waiting, so the usual
release pass (any command's look, the controller; :mod:`sbatch_k8s.runtime.release`) lets it
start when the time comes. With no delay the copy is created free to start.

The cluster requeues too: a job that may be requeued whose run ended ``NODE_FAIL`` or
``PREEMPTED`` (:data:`CLUSTER_ENDS`: a lost node, an evicted or preempted pod; the pod failure
policy fails the Job on a disruption) is requeued by the next reconcile pass
(:mod:`.cluster_jobs`), that run kept as it ended.
"""

from __future__ import annotations

import copy
import datetime
import json
import time
from typing import Any, Dict, List, Mapping, Optional, Tuple

from parsers.records import NODE_FAIL, PENDING, PREEMPTED, REQUEUED, JobRecord, with_changes
from sbatch_k8s.backends.kubernetes.client import KubeClient, KubeError
from sbatch_k8s.backends.kubernetes.kinds import (
    CONFIG_MAP,
    POD,
    POD_GROUP,
    SECRET,
    SERVICE,
    Kind,
)
from sbatch_k8s.backends.kubernetes.workload_view import SUSPEND_FIELD
from sbatch_k8s.errors import BackendError
from sbatch_k8s.runtime.release import REQUEUEING_ANNOTATION, WAITING_LABEL, hold_patch
from translators.metadata import ARRAY_JOB_ID, ARRAY_TASK_ID, BEGIN, HOLD, JOB_ID
from translators.storage import DESCRIPTION_KEY

#: The kinds that may be a workload's companions (named as the workload).
COMPANION_KINDS = (CONFIG_MAP, SECRET, SERVICE, POD_GROUP)
#: Labels and annotations the API server's controllers add to a workload and its template.
GENERATED_KEYS = ("controller-uid", "batch.kubernetes.io/controller-uid", "job-name",
                  "batch.kubernetes.io/job-name")
#: How long requeue waits for the old pods to be gone (their runtime's KillWait and the
#: pods' grace period, on a busy cluster).
OLD_PODS_WAIT_S = 180.0
#: How long a running job's node 0 gets to end on the requeue request before its workload is
#: deleted anyway (module docstring).
NOTICE_WAIT_S = 20.0
POLL_S = 0.5
#: slurmctld's wait before a requeued job may start: the credential lifetime (120 s) + 1; the
#: variable sets it in seconds (as on the local backend).
DEFAULT_REQUEUE_DELAY_S = 121.0
REQUEUE_DELAY_VARIABLE = "SBATCH_K8S_REQUEUE_DELAY"
#: How a run ends when the cluster ended it (a lost node, an evicted or preempted pod): a job
#: that may be requeued then runs again (:mod:`.cluster_jobs`), that run kept as it ended.
CLUSTER_ENDS = (NODE_FAIL, PREEMPTED)
#: The reason a requeued job pends with, as slurmctld shows it (with ``requeuehold``: the
#: second).
REQUEUED_REASON, HELD_REQUEUE_REASON = "BeginTime", "job requeued in held state"


def requeue_delay_s(environ: Mapping[str, str]) -> float:
    """How long a requeued job waits before it may start (module docstring)."""
    try:
        return max(0.0, float(environ.get(REQUEUE_DELAY_VARIABLE, "")))
    except ValueError:
        return DEFAULT_REQUEUE_DELAY_S


def _pod_selector(record: JobRecord) -> str:
    if record.array_job_id is None:
        return f"{JOB_ID}={record.job_id}"
    return f"{ARRAY_JOB_ID}={record.array_job_id},{ARRAY_TASK_ID}={record.array_task_id}"


def _without_generated(mapping: Optional[Mapping[str, str]]) -> Dict[str, str]:
    return {k: v for k, v in (mapping or {}).items() if k not in GENERATED_KEYS}


def fresh_workload(workload: Mapping[str, Any], hold: bool = False,
                   begin: Optional[str] = None) -> Dict[str, Any]:
    """A manifest creating ``workload`` anew: its name, our labels and annotations and its
    spec, without what the API server generated (uid, status, a Job's selector and the
    labels that select its pods); not suspended, or with ``hold`` suspended and held by its
    user, or with ``begin`` (local time, ISO) suspended and gated until then — held or gated,
    out of Kueue's hands (:func:`sbatch_k8s.runtime.release.hold_patch`)."""
    meta = workload.get("metadata") or {}
    annotations = _without_generated(meta.get("annotations"))
    annotations.pop(HOLD, None)
    annotations.pop(BEGIN, None)
    if hold:
        annotations[HOLD] = "user"
    if begin is not None:
        annotations[BEGIN] = begin
    spec = copy.deepcopy(workload.get("spec") or {})
    if workload.get("kind") == "Job":
        spec.pop("selector", None)
        template_meta = (spec.get("template") or {}).get("metadata")
        if template_meta is not None:
            template_meta["labels"] = _without_generated(template_meta.get("labels"))
    labels = _without_generated(meta.get("labels"))
    waits = hold or begin is not None
    if waits:
        kept = hold_patch(str(workload["kind"]), {"labels": labels, "annotations": annotations})
        for key, value in ((kept.get("metadata") or {}).get("labels") or {}).items():
            if value is None:
                labels.pop(key, None)
        annotations.update((kept.get("metadata") or {}).get("annotations") or {})
    body: Dict[str, Any] = {"apiVersion": workload["apiVersion"], "kind": workload["kind"],
                            "metadata": {"name": meta["name"], "labels": labels,
                                         "annotations": annotations},
                            "spec": spec}
    *path, leaf = SUSPEND_FIELD.get(str(workload["kind"]), ("spec", "suspend"))
    holder = body
    for key in path:
        holder = holder.setdefault(key, {})
    holder[leaf] = waits
    return body


def _owner(workload: Mapping[str, Any]) -> Dict[str, Any]:
    meta = workload["metadata"]
    return {"apiVersion": workload["apiVersion"], "kind": workload["kind"],
            "name": meta["name"], "uid": meta["uid"], "controller": False,
            "blockOwnerDeletion": False}


def _companions(client: KubeClient, workload: Mapping[str, Any],
                namespace: str) -> List[Tuple[Kind, Dict[str, Any]]]:
    """The objects the workload owns that share its name."""
    meta = workload["metadata"]
    found = []
    for kind in COMPANION_KINDS:
        obj = client.get(kind, meta["name"], namespace)
        owners = ((obj or {}).get("metadata") or {}).get("ownerReferences") or []
        if obj is not None and any(o.get("uid") == meta.get("uid") for o in owners):
            found.append((kind, obj))
    return found


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


def _with_restart_count(config_map: Mapping[str, Any], count: int) -> Optional[Dict[str, Any]]:
    """The data patch setting ``restart_count`` in ``job.json`` (None: no description)."""
    text = (config_map.get("data") or {}).get(DESCRIPTION_KEY)
    if text is None:
        return None
    desc = json.loads(text)
    desc["restart_count"] = count
    return {"data": {DESCRIPTION_KEY: json.dumps(desc, sort_keys=True,
                                                 separators=(",", ":"))}}


def earlier_run(record: JobRecord, now: int) -> JobRecord:
    """The run of ``record`` a requeue at ``now`` ends, as slurmdbd keeps it: a run the
    cluster ended (:data:`CLUSTER_ENDS`) as it ended, else ``REQUEUED`` at ``now``; a run
    still going is closed as a cancel closes it (its exit code 0:0, its running steps
    CANCELLED), an ended one keeps its exit code and steps."""
    from sbatch_k8s.backends.kubernetes.record_steps import cancelled_steps
    from sbatch_k8s.backends.kubernetes.records import is_final

    if record.state in CLUSTER_ENDS:
        return with_changes(record, requeued_runs=())
    run = with_changes(record, state=REQUEUED, end_time=now, requeued_runs=())
    if is_final(record):
        return run
    return with_changes(run, exit_code=0, exit_signal=0, derived_exit_code=0,
                        cancelled_by=None, steps=cancelled_steps(record.steps, now))


def requeued_record(record: JobRecord, now: int, hold: bool = False,
                    delay_s: float = 0.0) -> JobRecord:
    """The record of a job requeued at ``now``: pending again (held with ``hold``) until
    ``delay_s`` later, one more restart, the run that ended kept among its earlier runs. A
    dependency it had was met (it ran): it waits for nothing else."""
    eligible = now + int(delay_s)
    return with_changes(record, state=PENDING,
                        reason=HELD_REQUEUE_REASON if hold else REQUEUED_REASON,
                        restarts=record.restarts + 1, submit_time=now, eligible_time=eligible,
                        begin_time=eligible if delay_s > 0 else None, dependency="",
                        start_time=None, end_time=None, exit_code=0, exit_signal=0,
                        derived_exit_code=0, steps=(), node_list="", batch_host="",
                        cancelled_by=None,
                        requeued_runs=record.requeued_runs + (earlier_run(record, now),))


def _local_iso(moment: int) -> str:
    """``moment`` as the gate annotation writes it: naive local time, seconds."""
    return datetime.datetime.fromtimestamp(moment).isoformat(timespec="seconds")


def _end_running(client: KubeClient, record: JobRecord, namespace: str) -> None:
    """Ask a running job's node 0 to end the run for a requeue, and give it
    :data:`NOTICE_WAIT_S` to do so (module docstring)."""
    from sbatch_k8s.backends.kubernetes.pod_view import is_alive, nodes_by_index
    from sbatch_k8s.backends.kubernetes.records import is_final
    from sbatch_k8s.runtime.cancel_requests import REQUEUE, with_request
    from translators.metadata import SCANCEL_REQUESTS

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
    ``claimed`` it (:mod:`.requeue_mark`: until the record is rewritten pending, the run's end
    is nobody's reason to release or fail a dependent). BackendError when another requeue
    holds the job, its workload is gone (deleted after it finished) or its old pods do not
    go; the mark is then removed."""
    from sbatch_k8s.backends.kubernetes.records import record_name
    from sbatch_k8s.backends.kubernetes.requeue_mark import claim, unclaim

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
    from sbatch_k8s.backends.kubernetes.records import (
        ACTIVE,
        END_TIME_ANNOTATION,
        RECORD_KEY,
        REPORT_KEY,
        RUNNING_STEPS_KEY,
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
    for companion_kind, obj in companions:
        if companion_kind == CONFIG_MAP:
            patch = _with_restart_count(obj, requeued.restarts)
            if patch is not None:
                client.merge_patch(CONFIG_MAP, name, namespace, patch)
    begin = _local_iso(requeued.begin_time) if requeued.begin_time is not None else None
    made = client.create(fresh_workload(workload, hold, begin), namespace)
    owner = {"metadata": {"ownerReferences": [_owner(made)]}}
    for companion_kind, _ in companions:
        client.merge_patch(companion_kind, name, namespace, owner)
