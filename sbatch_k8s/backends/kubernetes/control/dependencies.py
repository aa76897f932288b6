"""Dependencies and begin times on a cluster, from the login side: submission checks and the
release pass every command runs.

``sbatch`` refuses a dependency on a job the cluster has no record of (``Job dependency
problem``, as the local backend does) and, once the job's objects exist, runs the release
pass for it: a dependency already met (or a begin time already past) starts it at once, and
an upstream job that ended while the objects were being created is not missed.

Every look at a namespace (squeue, sacct, scontrol, scancel, sbatch --wait, the controller)
ends with :func:`release_waiting`: the jobs whose records carry the waiting label are decided
from the live records just joined (the upstream job's state as the cluster shows it, so a job
ended by its deadline or a lost node counts) and released, failed or cancelled through
:func:`sbatch_k8s.runtime.cluster.release.settle` — the same code node 0's runtime and the
controller run. A write that fails is left for the next look.

A job being requeued is not over (:mod:`..requeue.mark`): the look shows it ``COMPLETING``
while its record carries the requeue's mark, and an end a watch cache alone shows is
confirmed from the API server first, so no dependent is released or failed by a run that ends
in a requeue.
"""

from __future__ import annotations

from parsers.vocabulary import RECORD_SELECTOR
from parsers.vocabulary import ARRAY_JOB_ID, JOB_ID
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from parsers.dependency_state import dependency_targets, parsed_dependency, record_dependency
from parsers.input_errors import submission_failed
from parsers.jobspec import JobSpec
from parsers.job_records import JobRecord, with_changes
from sbatch_k8s.backends.kubernetes.api.client import KubeClient, KubeError
from sbatch_k8s.backends.kubernetes.api.kinds import CONFIG_MAP
from sbatch_k8s.runtime.cluster.release import (
    BEGIN_TIME,
    DEPENDENCY,
    WAITING_LABEL,
    KnownJob,
    KnownJobs,
    Waiting,
    settle,
    waiting_from,
)
from parsers.vocabulary import GATES, HOLD
from sbatch_k8s.runtime.cluster.workload_gates import hold_patch, release_patch



def check_targets(job: JobSpec, client: KubeClient, namespaces: Iterable[str]) -> None:
    """``Job dependency problem`` when a job the dependency names has no record (neither a
    job nor an array of that id) in any namespace of the cluster's partitions."""
    if job.dependency is None or not job.dependency.clauses:
        return
    wanted = set(dependency_targets(job.dependency))
    if not wanted:
        return
    found: Set[int] = set()
    listed = ",".join(str(i) for i in sorted(wanted))
    try:
        for namespace in sorted(set(namespaces)):
            for label in (JOB_ID, ARRAY_JOB_ID):
                items, _ = client.list(CONFIG_MAP, namespace,
                                       f"{RECORD_SELECTOR},{label} in ({listed})")
                found |= {int(((i.get("metadata") or {}).get("labels") or {}).get(label, 0))
                          for i in items}
    except KubeError as e:
        raise submission_failed(str(e)) from e
    if wanted - found:
        raise submission_failed("Job dependency problem")


def _known(record: JobRecord) -> KnownJob:
    return KnownJob(record.job_id, record.array_job_id, record.array_task_id, record.name,
                    record.user, record.state, record.start_time)


def _missing_targets(waiting: Sequence[Waiting], known: Sequence[KnownJob]) -> List[int]:
    have = {k.job_id for k in known} | {k.array_job_id for k in known if k.array_job_id}
    wanted: Set[int] = set()
    for item in waiting:
        if item.dependency:
            wanted |= set(dependency_targets(parsed_dependency(item.dependency)))
    return sorted(wanted - have)


def _confirmed(client: KubeClient, namespace: str, view: Any, reads: Any,
               now: int) -> List[JobRecord]:
    """The joined records of ``view``; from a watch cache, those it alone would show ended
    are read again from the API server (and written back there, unless a requeue marked
    them): a dependency is decided from an end the records confirm, never from a mirror that
    may lag behind a requeue's mark."""
    from sbatch_k8s.backends.kubernetes.read.cluster_jobs import joined_records, look
    from sbatch_k8s.backends.kubernetes.history.records import is_final

    records = joined_records(client, view, now, reconcile=not reads.cached)
    ending = sorted(r.job_id for r, (stored, _, _) in zip(records, view.stored)
                    if is_final(r) and not is_final(stored))
    if not reads.cached or not ending:
        return records
    live = {r.job_id: r for r in joined_records(
        client, look(client, namespace, False, job_ids=ending), now)}
    return [live.get(r.job_id, r) if r.job_id in ending else r for r in records
            if r.job_id not in ending or r.job_id in live]


def _more_known(client: KubeClient, namespace: str, missing: Sequence[int], reads: Any,
                now: int) -> List[KnownJob]:
    """The live records of the jobs (or arrays) ``missing`` names."""
    from sbatch_k8s.backends.kubernetes.read.cluster_jobs import look

    view = look(client, namespace, False, job_ids=missing, reads=reads)
    records = _confirmed(client, namespace, view, reads, now)
    arrays = sorted({r.job_id for r in records if r.array_job_id == r.job_id})
    for array_id in arrays:
        view = look(client, namespace, False, array_job_id=array_id, reads=reads)
        records += _confirmed(client, namespace, view, reads, now)
    return [_known(r) for r in records]


def release_waiting(client: KubeClient, namespace: str, stored: Sequence[Any],
                    joined: List[JobRecord], reads: Any, now: int,
                    complete: bool) -> List[JobRecord]:
    """The release pass over one namespace's look: ``stored`` is the look's ``(record, ref,
    ConfigMap)`` triples, ``joined`` the live records (returned with the states and reasons
    the pass gave them); ``complete`` says the look saw every active job (else the jobs a
    ``singleton`` compares with are looked up)."""
    live = {r.job_id: r for r in joined}
    waiting: List[Waiting] = []
    for _, _, cm in stored:
        labels = (cm.get("metadata") or {}).get("labels") or {}
        if labels.get(WAITING_LABEL) != "true":
            continue
        item = waiting_from(cm)
        record = live.get(item.job.job_id) if item else None
        if item is not None and record is not None and record.state == "PENDING":
            waiting.append(item)
    if not waiting:
        return _with_shown(joined, None, set(), now)
    known = [_known(r) for r in joined]
    try:
        missing = _missing_targets(waiting, known)
        if missing:
            known += _more_known(client, namespace, missing, reads, now)
        if not complete and any("singleton" in w.dependency for w in waiting):
            from sbatch_k8s.backends.kubernetes.read.cluster_jobs import look

            view = look(client, namespace, True, reads=reads)
            known += [_known(r) for r in _confirmed(client, namespace, view, reads, now)]
        changed = settle(client, waiting, known, now)
    except (KubeError, RuntimeError):
        return joined  # the next look tries again
    return _with_shown([_changed(r, changed.get(r.job_id), now) for r in joined], known,
                       {w.job.job_id for w in waiting}, now)


def _with_shown(records: List[JobRecord], known: Optional[Sequence[KnownJob]],
                waiting: Set[int], now: int) -> List[JobRecord]:
    """The records with their dependency as squeue ``%E`` shows it
    (:func:`parsers.dependency_state.record_dependency`), decided from ``known`` (None: the
    records themselves). A pending job the pass did not find waiting was released: nothing
    left to show."""
    if not any(r.dependency for r in records):
        return records
    jobs = KnownJobs(known if known is not None else [_known(r) for r in records])
    shown: List[JobRecord] = []
    for record in records:
        if record.dependency and record.state == "PENDING" and record.job_id not in waiting:
            record = with_changes(record, dependency="")
        elif record.dependency:
            text = record_dependency(record, jobs.lookup, jobs.singleton_waits(record),
                                     jobs.names_array, now)
            record = with_changes(record, dependency=text)
        shown.append(record)
    return shown


def _changed(record: JobRecord, change: Optional[Any], now: int) -> JobRecord:
    if change is None:
        return record
    state, reason = change
    if state == "CANCELLED":
        return with_changes(record, state=state, reason=reason, start_time=now, end_time=now)
    return with_changes(record, state=state, reason=reason)


def release_new(client: KubeClient, namespace: str, job_ids: Sequence[int], now: int) -> None:
    """sbatch's own pass over the jobs it just created (see the module docstring)."""
    from sbatch_k8s.backends.kubernetes.read.cluster_jobs import joined_records, look
    from sbatch_k8s.backends.kubernetes.read.cluster_reads import LiveReads

    reads = LiveReads(client)
    view = look(client, namespace, False, job_ids=job_ids, reads=reads)
    joined = joined_records(client, view, now)
    release_waiting(client, namespace, view.stored, joined, reads, now, complete=False)


def gate_reason(workload: Optional[Mapping[str, Any]]) -> Optional[str]:
    """Why the workload still waits once released from a hold: ``Dependency`` or
    ``BeginTime`` while it carries that gate annotation, else None."""
    annotations = ((workload or {}).get("metadata") or {}).get("annotations") or {}
    if annotations.get(GATES[0]):
        return DEPENDENCY
    return BEGIN_TIME if annotations.get(GATES[1]) else None


def hold_or_release_patch(workload: Optional[Mapping[str, Any]], hold: Optional[str]
                          ) -> Tuple[Dict[str, Any], Optional[str]]:
    """``scontrol hold`` (``hold``: ``user`` or ``admin``) or ``release`` (None) of a pending
    workload: the merge patch, and the gate it still waits for once released. Held: suspended
    and out of Kueue's hands; released and no gate left: free to start
    (:func:`sbatch_k8s.runtime.cluster.workload_gates.release_patch`); released but gated: left as
    it is."""
    kind = str((workload or {}).get("kind") or "")
    meta = (workload or {}).get("metadata") or {}
    waits = None if hold else gate_reason(workload)
    if hold:
        patch = hold_patch(kind, meta)
    elif waits is None:
        patch = release_patch(kind, meta)
    else:
        patch = {}
    patch.setdefault("metadata", {}).setdefault("annotations", {})[HOLD] = hold
    return patch, waits
