"""Jobs as the cluster knows them: records, workloads and pods read in a constant number of
API calls — none when the warm command server's watch cache answers — joined into Slurm
records.

One LIST of job records (ConfigMaps labelled ``sbatch-k8s.io/kind=record``), one LIST per
workload kind the active records use, and one LIST of pods, per namespace, whatever the
number of jobs; in a command forked by the command server each comes from its watch cache
instead when that is usable (:mod:`.cluster_reads`, :mod:`.watch_cache`). A job that has
ended but whose record still says it is active is written back
(:func:`sbatch_k8s.backends.kubernetes.history.records.final_patch`): any command that looks
reconciles what nobody recorded (a job killed by its deadline, a lost node). What the cache
would show as newly final is first confirmed by LISTs of those jobs (a mirror that lags
behind another must not end a job), and only confirmed states are written back.

A record whose workload and pods are missing is a job that vanished — unless it is younger
than :data:`SUBMIT_GRACE_S`: sbatch creates the record before the workload, so a reader can
come between the two.
"""

from __future__ import annotations

from parsers.vocabulary import RECORD_SELECTOR
from parsers.vocabulary import ARRAY_JOB_ID, JOB_ID
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from parsers.job_records import PENDING, JobRecord, with_changes
from sbatch_k8s.backends.kubernetes.api.client import KubeClient
from sbatch_k8s.backends.kubernetes.read.cluster_reads import LiveReads, memo_or, reads_for
from sbatch_k8s.backends.kubernetes.api.kinds import CONFIG_MAP, POD, WORKLOADS, Kind

ACTIVE_SELECTOR = "sbatch-k8s.io/kind=record,sbatch-k8s.io/state=active"
MANAGED_SELECTOR = "app.kubernetes.io/managed-by=sbatch-k8s"
JOB_ID_LABEL = JOB_ID
ARRAY_JOB_ID_LABEL = ARRAY_JOB_ID
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
#: A record this young whose workload is not there yet is being submitted, not vanished
#: (sbatch's requests, retried, take at most its retry budget).
SUBMIT_GRACE_S = 60


def _labels(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def _kind_named(ref: Mapping[str, str]) -> Optional[Kind]:
    for kind in WORKLOADS:
        if kind.api_version == ref.get("apiVersion") and kind.kind == ref.get("kind"):
            return kind
    return None


class ClusterView:
    """What one look at a namespace found."""

    def __init__(self, stored: List[Tuple[JobRecord, Dict[str, str], Dict[str, Any]]],
                 workloads: Dict[Tuple[str, str], Dict[str, Any]],
                 pods: Dict[str, List[Dict[str, Any]]]) -> None:
        self.stored = stored
        self.workloads = workloads
        self.pods = pods


def look(client: KubeClient, namespace: str, active_only: bool,
         job_ids: Optional[Sequence[int]] = None, array_job_id: Optional[int] = None,
         reads: Optional[LiveReads] = None) -> ClusterView:
    """Records (active ones, or all, or those of ``job_ids``, or the elements of one array),
    the workloads they name and our pods (only those of the jobs asked for, when asked for
    some), from ``reads`` (default: LISTs)."""
    from sbatch_k8s.backends.kubernetes.history.records import record_from_config_map

    reads = reads or LiveReads(client)
    selector = ACTIVE_SELECTOR if active_only else RECORD_SELECTOR
    if job_ids is not None:
        selector += f",{JOB_ID_LABEL} in ({','.join(str(i) for i in sorted(job_ids))})"
    if array_job_id is not None:
        selector += f",{ARRAY_JOB_ID_LABEL}={array_job_id}"
    stored = []
    for item in reads.items(CONFIG_MAP, namespace, selector, RECORD_SELECTOR):
        try:
            record, ref = memo_or(item, record_from_config_map)
        except ValueError:
            continue  # an unreadable record must not take squeue down with it
        stored.append((record, ref, item[0]))
    owned = MANAGED_SELECTOR
    if job_ids is not None or array_job_id is not None:
        ids: Set[int] = {r.job_id for r, _, _ in stored}
        ids |= {r.array_job_id for r, _, _ in stored if r.array_job_id is not None}
        owned += f",{JOB_ID_LABEL} in ({','.join(str(i) for i in sorted(ids)) or '0'})"
    kinds = {_kind_named(ref) for record, ref, _ in stored if ref}
    workloads: Dict[Tuple[str, str], Dict[str, Any]] = {}
    for kind in sorted(filter(None, kinds), key=lambda k: k.plural):
        for item, _ in reads.items(kind, namespace, owned, MANAGED_SELECTOR):
            workloads[(kind.kind, item["metadata"]["name"])] = item
    pods: Dict[str, List[Dict[str, Any]]] = {}
    if any(not _final_state(r) for r, _, _ in stored):
        for pod, _ in reads.items(POD, namespace, owned, MANAGED_SELECTOR):
            pods.setdefault(_labels(pod).get(JOB_ID_LABEL, ""), []).append(pod)
    return ClusterView(stored, workloads, pods)


def _final_state(record: JobRecord) -> bool:
    from sbatch_k8s.backends.kubernetes.history.records import is_final

    return is_final(record)


def _element_pods(record: JobRecord, pods: Sequence[Dict[str, Any]],
                  shared: bool) -> List[Dict[str, Any]]:
    """The pods of one job: all pods labelled with its id, or, for an element of an array
    run as one Indexed Job, the pods of its completion index."""
    if not shared or record.array_job_id is None:
        return list(pods)
    position = record.job_id - record.array_job_id
    return [p for p in pods
            if ((p.get("metadata") or {}).get("annotations") or {}).get(COMPLETION_INDEX)
            == str(position)]


def joined_records(client: KubeClient, view: ClusterView, now: int,
                   reconcile: bool = True) -> List[JobRecord]:
    """Every record of ``view`` with its live state; final states found are written back."""
    from sbatch_k8s.backends.kubernetes.history.records import final_patch, is_final, live_record
    from sbatch_k8s.backends.kubernetes.requeue.mark import being_requeued, write_end
    from sbatch_k8s.runtime.cluster.release import requeueing

    out: List[JobRecord] = []
    for stored, ref, cm in view.stored:
        if is_final(stored):
            if requeueing(cm, now):
                out.append(being_requeued(stored))
                continue
            if reconcile and _unsettled(cm):
                # Node 0 reported an end the requeue rules may turn into another run (its
                # own pod taken away) and left the record active: requeued by the same rules
                # as an end the cluster's objects show, else written back as final.
                workload = view.workloads.get((ref.get("kind", ""), ref.get("name", "")))
                requeued = _requeued_by_cluster_end(client, stored, ref, workload, cm)
                if requeued is not None:
                    out.append(requeued)
                    continue
                stored = write_end(client, cm, stored, final_patch(stored))
            out.append(stored)
            continue
        workload = view.workloads.get((ref.get("kind", ""), ref.get("name", "")))
        shared = workload is not None and _labels(workload).get(JOB_ID_LABEL) != \
            str(stored.job_id)
        if shared:
            array_pods = view.pods.get(_labels(workload).get(JOB_ID_LABEL, ""), [])
            pods = _element_pods(stored, array_pods, True)
            if not pods and not _workload_finished(workload):
                out.append(_waiting_element(stored, workload, array_pods, now))
                continue
            record = live_record(stored, None, pods, now)
        else:
            pods = view.pods.get(str(stored.job_id), [])
            if workload is None and not pods and _being_submitted(stored, now):
                out.append(stored)
                continue
            record = live_record(stored, workload, pods, now)
        if requeueing(cm, now):  # a requeue replaces the run: not ended (.requeue_mark)
            out.append(being_requeued(record) if is_final(record) else record)
            continue
        if reconcile and not shared and is_final(record):
            requeued = _requeued_by_cluster_end(client, record, ref, workload, cm)
            if requeued is not None:
                out.append(requeued)
                continue
        if reconcile and is_final(record):
            record = write_end(client, cm, record, final_patch(record))
        out.append(record)
    return out


def _waiting_element(stored: JobRecord, workload: Mapping[str, Any],
                     array_pods: Sequence[Dict[str, Any]], now: int) -> JobRecord:
    """An element of an array run as one Indexed Job that has no pod yet: it waits as the
    whole array does (held, suspended, its begin time: the workload's state, as element 0
    shows it), or — the workload running — for its ``%`` limit when that many elements run
    (JobArrayTaskLimit, as slurmctld says only then), else for its pod."""
    from sbatch_k8s.backends.kubernetes.read.pod_view import is_alive
    from sbatch_k8s.backends.kubernetes.history.records import HELD_REASONS, live_record

    waiting = live_record(stored, workload, [], now)
    if waiting.state != PENDING:
        waiting = with_changes(stored, state=PENDING)
    limit = stored.array_throttle
    running = {((p.get("metadata") or {}).get("annotations") or {}).get(COMPLETION_INDEX)
               for p in array_pods if is_alive(p)}
    if limit and len(running) >= limit and waiting.reason not in HELD_REASONS:
        return with_changes(waiting, reason="JobArrayTaskLimit")
    return waiting


def _requeued_by_cluster_end(client: KubeClient, record: JobRecord, ref: Mapping[str, str],
                             workload: Optional[Mapping[str, Any]], cm: Mapping[str, Any]
                             ) -> Optional[JobRecord]:
    """A job the cluster ended (a lost node, an evicted or preempted pod) that may be
    requeued (``--requeue``, or Slurm's default) runs again as slurmctld requeues it, its
    workload still there: the pass first claims it by writing its record at the
    resourceVersion it read with the requeue mark (:mod:`..requeue.mark`; another reconciler
    then gets 409 and leaves it), then :func:`..requeue.requeue.requeue_on_cluster` replaces the
    workload, after the delay of this process's ``SBATCHK8S_REQUEUE_DELAY``. The requeued
    record; the job shown being requeued (not ended) when someone else requeues it or the
    requeue failed (the next look tries again); None when it is not such a job."""
    import os
    import time

    from sbatch_k8s.backends.kubernetes.requeue.requeue import requeue_on_cluster
    from sbatch_k8s.backends.kubernetes.requeue.mark import being_requeued, claim
    from sbatch_k8s.backends.kubernetes.requeue.next_run import requeued_record
    from sbatch_k8s.backends.requeue_rules import REQUEUED_ENDS, requeue_delay_s
    from sbatch_k8s.operation_errors import BackendError

    kind = _kind_named(ref)
    if not (record.requeue and record.batch_flag) or record.state not in REQUEUED_ENDS \
            or workload is None or kind is None:
        return None
    meta = cm.get("metadata") or {}
    namespace = str(meta.get("namespace"))
    try:
        if not claim(client, namespace, meta["name"], cm):
            return being_requeued(record)
        delay_s = requeue_delay_s(os.environ)
        requeue_on_cluster(client, record, ref, kind, namespace, False, delay_s,
                           claimed=True)
    except BackendError:  # a KubeError too
        return being_requeued(record)  # the job runs again: not ended; the next look tries
    return requeued_record(record, int(time.time()), False, delay_s)


def _unsettled(cm: Mapping[str, Any]) -> bool:
    """Whether a record whose data says it ended still carries the active state label
    (nobody wrote its end back yet)."""
    from parsers.vocabulary import ACTIVE
    from sbatch_k8s.runtime.cluster.release import STATE_LABEL

    labels = (cm.get("metadata") or {}).get("labels") or {}
    return labels.get(STATE_LABEL, ACTIVE) == ACTIVE


def _being_submitted(stored: JobRecord, now: int) -> bool:
    """Whether a record without workload may still get one (see the module docstring)."""
    return stored.submit_time is not None and now - stored.submit_time < SUBMIT_GRACE_S


def _workload_finished(workload: Mapping[str, Any]) -> bool:
    conditions = (workload.get("status") or {}).get("conditions") or []
    return any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
               for c in conditions)


def _namespace_records(client: KubeClient, namespace: str, now: int,
                       active_only: bool, **selection: Any) -> List[JobRecord]:
    """Joined records of one namespace, read through the watch cache when there is one;
    what the cache alone would end is confirmed (and written back) from LISTs."""
    from sbatch_k8s.backends.kubernetes.history.records import is_final

    from sbatch_k8s.backends.kubernetes.control.dependencies import release_waiting

    reads = reads_for(client)
    view = look(client, namespace, active_only, reads=reads, **selection)
    joined = joined_records(client, view, now, reconcile=not reads.cached)
    ending = {r.job_id for r, (stored, _, cm) in zip(joined, view.stored)
              if is_final(r) and (not is_final(stored) or _unsettled(cm))}
    if reads.cached and ending:
        live = look(client, namespace, False, job_ids=sorted(ending))
        confirmed = {r.job_id: r for r in joined_records(client, live, now)}
        joined = [confirmed[r.job_id] if r.job_id in ending else r for r in joined
                  if r.job_id not in ending or r.job_id in confirmed]
    return release_waiting(client, namespace, view.stored, joined, reads, now,
                           complete=active_only and not selection)


def cluster_records(client: KubeClient, namespaces: Iterable[str], now: int,
                    active_only: bool) -> List[JobRecord]:
    """Joined records of every namespace, by job id."""
    records: List[JobRecord] = []
    for namespace in sorted(set(namespaces)):
        records.extend(_namespace_records(client, namespace, now, active_only))
    return sorted(records, key=lambda r: r.job_id)


def find_job(client: KubeClient, namespaces: Iterable[str], job_id: int, now: int
             ) -> Optional[Tuple[JobRecord, Dict[str, str], str]]:
    """One job's live record, its workload reference and its namespace (None: unknown),
    always from the API server: what scancel and scontrol hold act on."""
    for namespace in sorted(set(namespaces)):
        view = look(client, namespace, active_only=False, job_ids=[job_id])
        for record, (_, ref, _) in zip(joined_records(client, view, now), view.stored):
            if record.job_id == job_id:
                return record, ref, namespace
    return None


def records_of(client: KubeClient, namespaces: Iterable[str], job_id: int, now: int
               ) -> List[JobRecord]:
    """The job ``job_id``, or every element of the array ``job_id`` (live, finished or not)."""
    found: List[JobRecord] = []
    for namespace in sorted(set(namespaces)):
        for selection in ({"array_job_id": job_id}, {"job_ids": [job_id]}):
            found.extend(_namespace_records(client, namespace, now, False, **selection))
    unique = {r.job_id: r for r in found}
    return [unique[k] for k in sorted(unique)]
