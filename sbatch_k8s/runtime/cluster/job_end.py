"""Node 0 with API access: the job's end written into its record, and the jobs waiting for it
released — nobody has to type anything, nor run squeue before Kubernetes deletes the pods.

Only in pods whose partition gives them the job ServiceAccount (the pod spec then sets
:data:`JOB_API_VARIABLE`; ``deploy/rbac.yaml`` binds the account to what it needs). With it,
node 0's runtime

* when the batch script starts, releases the jobs waiting for this one to start (``after``);
* when the job ends in a state the runtime decided itself (COMPLETED, FAILED, TIMEOUT — not
  CANCELLED: SIGTERM means the cluster or scancel ended it, and they record that), adds its
  report to the record ConfigMap (key :data:`REPORT_KEY`: the same JSON as its termination
  message, plus ``node_list`` and ``batch_host``; the login side folds it into the record)
  and sets the record's state label, unless someone recorded an end first;
* then releases (or fails) the jobs that wait for it (other ends are left to whoever sees
  them: a requeued job is not over), through
  :func:`sbatch_k8s.runtime.cluster.release.settle`.

A run ended while a requeue replaces it (the record carries the requeue's mark,
:data:`~sbatch_k8s.runtime.cluster.release.REQUEUEING_ANNOTATION`: ``scontrol requeue`` writes it
before it asks node 0 to end, so a script that ends on its own meanwhile is caught too) is not
the job's end: nothing is recorded and nothing released — the job runs again, and the end of
that run counts. A job being requeued counts as not ended for the dependencies node 0 decides
(:func:`known_from_config_map`).

Nothing here may fail the job: a problem is one line in the node's log.
"""

from __future__ import annotations

from parsers.vocabulary import (
    REPORT_KEY,
    RECORD_PREFIX,
    RECORD_SELECTOR,
    JOB_ID,
    ARRAY_JOB_ID,
)
import json
import threading
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from parsers.dependency_state import dependency_targets, parsed_dependency
from sbatch_k8s.runtime.cluster.kube_api import KubeApi, get_or_none, in_cluster
from parsers.vocabulary import ACTIVE, RECORD_KEY, WAITING_SELECTOR
from sbatch_k8s.runtime.cluster.release import (
    END_TIME_ANNOTATION,
    REQUEUEING_STATE,
    STATE_LABEL,
    WAITING_LABEL,
    KnownJob,
    Waiting,
    known_job,
    requeueing,
    settle,
    waiting_from,
)

JOB_API_VARIABLE = "SBATCHK8S_JOB_API"
#: The ends node 0 records itself (see the module docstring): its script's, and a node
#: failure it found its own pod taken away by (the pod and its message vanish with it).
SELF_RECORDED = ("COMPLETED", "FAILED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL")
#: Ends that requeue a job that allows it (the same as
#: :data:`sbatch_k8s.backends.requeue_rules.REQUEUED_ENDS`): node 0 writes its report but
#: leaves the record active, for the login side to requeue or settle.
REQUEUED_ENDS = ("NODE_FAIL", "PREEMPTED")
#: What :func:`record_end` came to: written; the record gone or its end recorded first by
#: someone else (the dependents may still be settled); the job being requeued (not its end).
RECORDED, ENDED_BEFORE, REQUEUEING = "recorded", "ended before", "requeueing"


def api_for(environ: Mapping[str, str]) -> Optional[KubeApi]:
    """The API as this pod's ServiceAccount, when the pod is meant to use it."""
    if environ.get(JOB_API_VARIABLE) != "1":
        return None
    return in_cluster(environ)


def _records_path(namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/configmaps"


def _list(api: KubeApi, namespace: str, selector: str) -> List[Dict[str, Any]]:
    answer = api.request("GET", _records_path(namespace), {"labelSelector": selector})
    return list((answer or {}).get("items") or [])


def known_from_config_map(config_map: Mapping[str, Any]) -> Optional[KnownJob]:
    """What a record ConfigMap says of its job: the record, with node 0's report's state
    while the record itself is not final; a job being requeued is not ended, whatever its
    record or report says (state :data:`~sbatch_k8s.runtime.cluster.release.REQUEUEING_STATE`)."""
    data = config_map.get("data") or {}
    try:
        values = json.loads(data[RECORD_KEY])
        report = json.loads(data[REPORT_KEY]) if REPORT_KEY in data else None
    except (KeyError, ValueError):
        return None
    if requeueing(config_map):
        return known_job(dict(values, state=REQUEUEING_STATE))
    labels = (config_map.get("metadata") or {}).get("labels") or {}
    if report is not None and labels.get(STATE_LABEL, ACTIVE) != ACTIVE and \
            values.get("state") == "PENDING":
        values = dict(values, state=report.get("state"),
                      start_time=report.get("start_time") or values.get("start_time"))
    return known_job(values)


def record_end(api: KubeApi, namespace: str, job_id: int, report: Mapping[str, Any],
               final: bool = True) -> str:
    """Write node 0's report into the job's record (module docstring), at the
    resourceVersion it was read at: :data:`RECORDED`; :data:`REQUEUEING` when a requeue
    marked the record (this run's end is not the job's); :data:`ENDED_BEFORE` when the
    record is gone or someone recorded the end first. ``final`` False leaves the record's
    state label active: an end the requeue rules may turn into another run, which the login
    side settles (requeues, or writes back as final)."""
    path = f"{_records_path(namespace)}/{RECORD_PREFIX}{job_id}"
    for attempt in range(4):
        config_map = get_or_none(api, path)
        if config_map is None:
            return ENDED_BEFORE
        meta = config_map.get("metadata") or {}
        if requeueing(config_map):
            return REQUEUEING
        if (meta.get("labels") or {}).get(STATE_LABEL, ACTIVE) != ACTIVE or attempt == 3:
            return ENDED_BEFORE
        end = report.get("end_time") or int(time.time())
        settled = {"labels": {STATE_LABEL: str(report["state"]), WAITING_LABEL: None},
                   "annotations": {END_TIME_ANNOTATION: str(end)}} if final else {}
        body = {"metadata": dict(settled, resourceVersion=meta.get("resourceVersion")),
                "data": {REPORT_KEY: json.dumps(dict(report), sort_keys=True,
                                                separators=(",", ":"))}}
        try:
            api.request("PATCH", path, body=body, content_type="application/merge-patch+json")
            return RECORDED
        except Exception as e:
            if getattr(e, "status", 0) != 409:
                raise
    return ENDED_BEFORE


def _mentions(item: Waiting, me: KnownJob) -> bool:
    """Whether ``item``'s dependency names this job (or its array) or is a singleton of its
    name and user."""
    if not item.dependency:
        return False
    spec = parsed_dependency(item.dependency)
    ids = {me.job_id} | ({me.array_job_id} if me.array_job_id else set())
    singleton = any(c.kind == "singleton" for c in spec.clauses)
    return bool(ids & set(dependency_targets(spec))) or (
        singleton and item.job.name == me.name and item.job.user == me.user)


def release_dependents(api: KubeApi, namespace: str, me: KnownJob) -> int:
    """Settle the waiting jobs that name ``me`` (its state as node 0 knows it); how many
    changed."""
    waiting = [w for w in (waiting_from(cm) for cm in _list(api, namespace, WAITING_SELECTOR))
               if w is not None and _mentions(w, me)]
    if not waiting:
        return 0
    ids = sorted({i for w in waiting for i in dependency_targets(parsed_dependency(w.dependency))}
                 | {me.job_id})
    listed = ",".join(str(i) for i in ids)
    found: Dict[str, Dict[str, Any]] = {}
    for label in (JOB_ID, ARRAY_JOB_ID):
        for cm in _list(api, namespace, f"{RECORD_SELECTOR},{label} in ({listed})"):
            found[cm["metadata"]["name"]] = cm
    if any("singleton" in w.dependency for w in waiting):
        for cm in _list(api, namespace, f"{RECORD_SELECTOR},{STATE_LABEL}={ACTIVE}"):
            found[cm["metadata"]["name"]] = cm
    known = [k for k in (known_from_config_map(cm) for cm in found.values())
             if k is not None and k.job_id != me.job_id]
    return len(settle(api, waiting, known + [me]))


def _me(desc: Mapping[str, Any], state: str, start_time: Optional[float]) -> KnownJob:
    return KnownJob(int(desc["job_id"]), desc.get("array_job_id"), desc.get("array_task_id"),
                    str(desc.get("job_name", "")), str(desc.get("user", "")), state, start_time)


def _namespace(api: KubeApi, environ: Mapping[str, str]) -> str:
    return environ.get("SBATCHK8S_NAMESPACE") or api.namespace


def cluster_question(environ: Mapping[str, str], desc: Mapping[str, Any]
                     ) -> Optional[Callable[[], str]]:
    """With API access: asks why this job's pods are being stopped
    (:func:`sbatch_k8s.runtime.cluster.end_cause.ask_cluster`); None without."""
    api = api_for(environ)
    if api is None:
        return None
    from sbatch_k8s.runtime.cluster.end_cause import ask_cluster

    namespace = _namespace(api, environ)
    pod_name = environ.get("SBATCHK8S_POD_NAME", "")
    return lambda: ask_cluster(api, namespace, int(desc["job_id"]), pod_name)


def job_started(environ: Mapping[str, str], desc: Mapping[str, Any],
                log: Any) -> Optional[threading.Thread]:
    """In the background: release the jobs waiting for this one to start."""
    api = api_for(environ)
    if api is None:
        return None

    def run() -> None:
        try:
            release_dependents(api, _namespace(api, environ),
                               _me(desc, "RUNNING", time.time()))
        except Exception as e:  # never the job's problem
            log(f"error: job {desc['job_id']}: could not release the jobs waiting for its "
                f"start: {e}")

    thread = threading.Thread(target=run, name="release-after-start", daemon=True)
    thread.start()
    return thread


def job_ended(environ: Mapping[str, str], desc: Mapping[str, Any], names: Sequence[str],
              result: Mapping[str, Any], log: Any) -> None:
    """Record the end (when node 0 decided it) and release the jobs waiting for it."""
    api = api_for(environ)
    if api is None:
        return
    from parsers.values.hostlist import compress_hostlist

    state = str(result.get("state"))
    if state not in SELF_RECORDED:
        return  # ended by the cluster or scancel: whoever sees it records it and releases
    try:
        namespace = _namespace(api, environ)
        report = dict(result, node_list=compress_hostlist(list(names)),
                      batch_host=names[0] if names else "")
        final = state not in REQUEUED_ENDS or desc.get("requeue") is False
        if record_end(api, namespace, int(desc["job_id"]), report, final) == REQUEUEING:
            log(f"job {desc['job_id']}: being requeued; its dependents wait for its next run")
            return
        if final:
            release_dependents(api, namespace, _me(desc, state, result.get("start_time")))
    except Exception as e:  # never the job's problem
        log(f"error: job {desc['job_id']}: could not record its end or release the jobs "
            f"waiting for it: {e}")
