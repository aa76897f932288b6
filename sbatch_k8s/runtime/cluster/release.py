"""Releasing cluster jobs that wait for dependencies or a begin time — one code for everyone.

A job submitted with ``--dependency`` or ``--begin`` gets a suspended workload carrying gate
annotations (:mod:`translators.gates`; on a Kueue partition without Kueue's labels until
then, so that Kueue does not resume it) and a record labelled :data:`WAITING_LABEL`. Three
parties may find it due, and all of them act through :func:`settle`:

* node 0's runtime of the job it waits for, when that job starts or ends
  (:mod:`sbatch_k8s.runtime.cluster.job_end`, with the pod's ServiceAccount);
* any sbatch-k8s command that looks at the cluster (its reconcile pass,
  :mod:`sbatch_k8s.backends.kubernetes.control.dependencies`), which also catches what nobody
  reported (a deadline, a lost node) and begin times that came;
* the optional ``sbatch-k8s controller``, which runs that pass continuously.

Each decides from what it knows of the jobs named (:class:`KnownJob`) with the same pure
evaluation as the local scheduler (:mod:`parsers.dependency_state`). A job whose record
carries a requeue's mark (:func:`requeueing`) is not over, whatever its run's end says: each
of them counts it :data:`REQUEUEING_STATE`. Acting is safe when
several do it at once: the workload is written as :mod:`sbatch_k8s.runtime.cluster.workload_gates`
writes it (at the resourceVersion read, a held workload never resumed), and a record is
rewritten at the resourceVersion it was read at. ``api`` is as there.
"""

from __future__ import annotations

from parsers.vocabulary import (
    RECORD_KEY,
    WORKLOAD_KEY,
    STATE as STATE_LABEL,
    ACTIVE,
    END_TIME as END_TIME_ANNOTATION,
    WAITING as WAITING_LABEL,
    REQUEUEING,
)
import json
import time
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from parsers.dependency_state import NEVER, UNFINISHED, WAIT, parsed_dependency, spec_verdict
from sbatch_k8s.runtime.cluster.workload_gates import (
    ATTEMPTS,
    ELIGIBLE,
    HELD_REASONS,
    delete_workload,
    error_status,
    lift_gates,
)

#: Pending reasons, as Slurm names them.
DEPENDENCY, BEGIN_TIME, NEVER_SATISFIED = "Dependency", "BeginTime", "DependencyNeverSatisfied"
#: The reason of a job held by ``scontrol requeuehold`` (user hold): kept while it is held.
HELD_REQUEUE_REASON = "job requeued in held state"
#: On a job's record while a requeue replaces its run (:mod:`sbatch_k8s.backends.kubernetes.
#: requeue`): the epoch second the requeue began. A requeued job is not over: nobody records
#: the end of that run as the job's, nor releases or fails what waits for it.
REQUEUEING_ANNOTATION = REQUEUEING
#: A mark this old is a requeue whose process died midway (a requeue takes at most its
#: notice and old-pods waits, 200 s): the job is then taken as the cluster shows it.
REQUEUE_MARK_TTL_S = 600
#: How a job shows while a requeue replaces its run: slurmctld's ``PENDING|COMPLETING|
#: REQUEUE``, printed ``COMPLETING`` — not ended, for a dependency as for squeue.
REQUEUEING_STATE = "COMPLETING"


class KnownJob(NamedTuple):
    """What a dependency needs of a job it may name (a JobRecord has these fields too)."""

    job_id: int
    array_job_id: Optional[int]
    array_task_id: Optional[int]
    name: str
    user: str
    state: str
    start_time: Optional[float]


class Waiting(NamedTuple):
    """A job whose workload waits: its record's ConfigMap and what the decision needs."""

    job: KnownJob
    dependency: str
    begin_time: Optional[float]
    kill_on_invalid_dep: bool
    config_map: Mapping[str, Any]
    workload: Mapping[str, str]


def requeueing(config_map: Optional[Mapping[str, Any]], now: Optional[float] = None) -> bool:
    """Whether the record ``config_map`` carries a requeue's live mark
    (:data:`REQUEUEING_ANNOTATION`, younger than :data:`REQUEUE_MARK_TTL_S`)."""
    annotations = ((config_map or {}).get("metadata") or {}).get("annotations") or {}
    mark = annotations.get(REQUEUEING_ANNOTATION)
    if not mark:
        return False
    try:
        since = float(mark)
    except ValueError:
        return True  # unreadable: a mark all the same
    moment = time.time() if now is None else now
    return moment - since < REQUEUE_MARK_TTL_S


def known_job(values: Mapping[str, Any]) -> KnownJob:
    """A :class:`KnownJob` from ``record.json``'s values."""
    return KnownJob(int(values["job_id"]), values.get("array_job_id"),
                    values.get("array_task_id"), str(values.get("name", "")),
                    str(values.get("user", "")), str(values.get("state", "")),
                    values.get("start_time"))


def waiting_from(config_map: Mapping[str, Any]) -> Optional[Waiting]:
    """A waiting job from its record ConfigMap (None when unreadable)."""
    data = config_map.get("data") or {}
    try:
        values = json.loads(data[RECORD_KEY])
        ref = json.loads(data.get(WORKLOAD_KEY) or "{}")
        return Waiting(known_job(values), str(values.get("dependency") or ""),
                       values.get("begin_time"), bool(values.get("kill_on_invalid_dep")),
                       config_map, {k: str(v) for k, v in ref.items()})
    except (KeyError, ValueError, TypeError):
        return None


class KnownJobs:
    """The jobs a decision knows of, indexed for the questions a dependency asks."""

    def __init__(self, known: Sequence[KnownJob]) -> None:
        self.known = known
        self._by_id: Dict[int, List[KnownJob]] = {}
        self._by_array: Dict[int, List[KnownJob]] = {}
        for k in known:
            self._by_id.setdefault(k.job_id, []).append(k)
            if k.array_job_id is not None:
                self._by_array.setdefault(int(k.array_job_id), []).append(k)

    def lookup(self, job_id: int, task: Optional[int]) -> List[Tuple[str, Optional[float]]]:
        """The state and start of the jobs ``job_id`` (with ``task``) names: one array
        element, the elements of an array, or one job."""
        if task is not None:
            hits = [k for k in self._by_array.get(job_id, ()) if k.array_task_id == task]
        else:
            hits = self._by_array.get(job_id) or self._by_id.get(job_id, [])
        return [(k.state, k.start_time) for k in hits]

    def names_array(self, job_id: int) -> bool:
        """Whether ``job_id`` is an array's id."""
        return job_id in self._by_array

    def singleton_waits(self, job: Any) -> Callable[[], bool]:
        """Whether an earlier unfinished job has ``job``'s name and user."""
        return lambda: any(k.name == job.name and k.user == job.user and k.job_id < job.job_id
                           and k.state in UNFINISHED for k in self.known)


def eligibility(waiting: Waiting, known: Sequence[KnownJob], now: float) -> str:
    """Why the job still waits (``Dependency``, ``BeginTime``,
    ``DependencyNeverSatisfied``), or ``None`` when it may start — as slurmctld: the
    dependency first, then the begin time."""
    job = waiting.job
    if waiting.dependency:
        jobs = KnownJobs(known)
        verdict = spec_verdict(parsed_dependency(waiting.dependency), job.array_task_id,
                               jobs.lookup, jobs.singleton_waits(job), now)
        if verdict == NEVER:
            return NEVER_SATISFIED
        if verdict == WAIT:
            return DEPENDENCY
    if waiting.begin_time is not None and now < waiting.begin_time:
        return BEGIN_TIME
    return ELIGIBLE


def rewrite_record(api: Any, config_map: Mapping[str, Any], changes: Mapping[str, Any],
                   labels: Mapping[str, Optional[str]],
                   annotations: Optional[Mapping[str, str]] = None) -> bool:
    """Apply ``changes`` to the record's fields and ``labels`` to its labels, at the
    resourceVersion it was read at (on 409: read again). False when the record is gone or
    final by then (someone else ended the job)."""
    meta = config_map.get("metadata") or {}
    path = f"/api/v1/namespaces/{meta.get('namespace', 'default')}/configmaps/{meta['name']}"
    current: Mapping[str, Any] = config_map
    for _ in range(ATTEMPTS):
        now_meta = current.get("metadata") or {}
        if (now_meta.get("labels") or {}).get(STATE_LABEL, ACTIVE) != ACTIVE:
            return False
        values = json.loads((current.get("data") or {})[RECORD_KEY])
        values.update(changes)
        body = {"metadata": {"resourceVersion": now_meta.get("resourceVersion"),
                             "labels": dict(labels), "annotations": dict(annotations or {})},
                "data": {RECORD_KEY: json.dumps(values, sort_keys=True,
                                                separators=(",", ":"))}}
        try:
            api.request("PATCH", path, body=body,
                        content_type="application/merge-patch+json")
            return True
        except Exception as e:
            if error_status(e) == 404:
                return False
            if error_status(e) != 409:
                raise
        current = api.request("GET", path)
    return False


def _cancel(api: Any, waiting: Waiting, now: int, delete: bool) -> None:
    """``--kill-on-invalid-dep=yes``: the job ends CANCELLED (start = end, reason
    ``DependencyNeverSatisfied``, as squeue and scontrol show it on Slurm; sacct prints
    ``None`` for a job that has a start) and, when no other waiting job shares it, its
    workload is deleted."""
    changes = {"state": "CANCELLED", "reason": NEVER_SATISFIED, "start_time": now,
               "end_time": now,
               "exit_code": 0, "exit_signal": 0}
    if rewrite_record(api, waiting.config_map, changes,
                      {STATE_LABEL: "CANCELLED", WAITING_LABEL: None},
                      {END_TIME_ANNOTATION: str(now)}) and delete:
        delete_workload(api, waiting.workload)


def settle(api: Any, waiting: Sequence[Waiting], known: Sequence[KnownJob],
           now: Optional[float] = None) -> Dict[int, Tuple[str, str]]:
    """Decide and act for each waiting job; what changed, by job id: ``(state, reason)``
    (``PENDING``/``RUNNING``-to-be jobs say ``PENDING``). A workload shared by several
    waiting jobs (the elements of an array run as one Indexed Job) is resumed once all of
    them may start."""
    moment = time.time() if now is None else now
    stamp = int(moment)
    changed: Dict[int, Tuple[str, str]] = {}
    groups: Dict[Tuple[str, str], List[Tuple[Waiting, str]]] = {}
    for item in waiting:
        reason = eligibility(item, known, moment)
        key = (item.workload.get("kind", ""), item.workload.get("name", ""))
        groups.setdefault(key, []).append((item, reason))
    for members in groups.values():
        try:
            _settle_group(api, members, stamp, changed)
        except Exception as e:
            if error_status(e) not in REFUSED_STATUSES:
                raise
            # not ours to change (the cluster's admission policy: another user's job);
            # its owner's commands, its dependencies' node 0 or the controller settle it
    return changed


#: What the API server answers a write the cluster refuses to this caller: RBAC (403) or
#: the admission policy of ``deploy/policy.yaml`` (422, 403).
REFUSED_STATUSES = (403, 422)


def _settle_group(api: Any, members: List[Tuple[Waiting, str]], stamp: int,
                  changed: Dict[int, Tuple[str, str]]) -> None:
    """:func:`settle` for the waiting jobs of one workload."""
    if all(reason == ELIGIBLE for _, reason in members):
        after = lift_gates(api, members[0][0].workload)
        if after is None:
            return  # not created yet (sbatch acts itself once it is) or gone
        for item, _ in members:
            shown = HELD_REQUEUE_REASON if after in HELD_REASONS.values() and \
                _stored_reason(item) == HELD_REQUEUE_REASON else after
            if rewrite_record(api, item.config_map,
                              {"reason": shown, "eligible_time": stamp},
                              {WAITING_LABEL: None}):
                changed[item.job.job_id] = ("PENDING", shown)
        return
    killed = [item for item, reason in members
              if reason == NEVER_SATISFIED and item.kill_on_invalid_dep]
    for item, reason in members:
        if item in killed:
            _cancel(api, item, stamp, delete=len(killed) == len(members))
            changed[item.job.job_id] = ("CANCELLED", NEVER_SATISFIED)
        elif reason == NEVER_SATISFIED:
            if rewrite_record(api, item.config_map, {"reason": reason},
                              {WAITING_LABEL: None}):
                changed[item.job.job_id] = ("PENDING", reason)
        elif _stored_reason(item) not in (reason, HELD_REQUEUE_REASON,
                                          *HELD_REASONS.values()):
            if rewrite_record(api, item.config_map, {"reason": reason}, {}):
                changed[item.job.job_id] = ("PENDING", reason)


def _stored_reason(item: Waiting) -> str:
    try:
        return str(json.loads(item.config_map["data"][RECORD_KEY]).get("reason"))
    except (KeyError, ValueError, TypeError):
        return ""
