"""Jobs as the cluster knows them: records, workloads and pods read in a constant number of
API calls, joined into Slurm records.

One LIST of job records (ConfigMaps labelled ``sbatch-k8s.io/kind=record``), one LIST per
workload kind the active records use, and one LIST of pods, per namespace, whatever the
number of jobs. A job that has ended but whose record still says it is active is written back
(:func:`sbatch_k8s.backends.kubernetes.records.final_patch`): any command that looks
reconciles what nobody recorded (a job killed by its deadline, a lost node).
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from parsers.records import PENDING, JobRecord, with_changes
from sbatch_k8s.backends.kubernetes.client import KubeClient, KubeError
from sbatch_k8s.backends.kubernetes.kinds import CONFIG_MAP, POD, WORKLOADS, Kind

RECORD_SELECTOR = "sbatch-k8s.io/kind=record"
ACTIVE_SELECTOR = "sbatch-k8s.io/kind=record,sbatch-k8s.io/state=active"
MANAGED_SELECTOR = "app.kubernetes.io/managed-by=sbatch-k8s"
JOB_ID_LABEL = "sbatch-k8s.io/job-id"
ARRAY_JOB_ID_LABEL = "sbatch-k8s.io/array-job-id"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"


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
         job_ids: Optional[Sequence[int]] = None, array_job_id: Optional[int] = None
         ) -> ClusterView:
    """Records (active ones, or all, or those of ``job_ids``, or the elements of one array),
    the workloads they name and our pods."""
    from sbatch_k8s.backends.kubernetes.records import record_from_config_map

    selector = ACTIVE_SELECTOR if active_only else RECORD_SELECTOR
    if job_ids is not None:
        selector += f",{JOB_ID_LABEL} in ({','.join(str(i) for i in sorted(job_ids))})"
    if array_job_id is not None:
        selector += f",{ARRAY_JOB_ID_LABEL}={array_job_id}"
    maps, _ = client.list(CONFIG_MAP, namespace, selector)
    stored = []
    for cm in maps:
        try:
            record, ref = record_from_config_map(cm)
        except ValueError:
            continue  # an unreadable record must not take squeue down with it
        stored.append((record, ref, cm))
    kinds = {_kind_named(ref) for record, ref, _ in stored if ref}
    workloads: Dict[Tuple[str, str], Dict[str, Any]] = {}
    for kind in kinds:
        if kind is None:
            continue
        items, _ = client.list(kind, namespace, MANAGED_SELECTOR)
        for item in items:
            # list items carry no kind on a real API server: put it back for the readers
            item.setdefault("kind", kind.kind)
            item.setdefault("apiVersion", kind.api_version)
            workloads[(kind.kind, item["metadata"]["name"])] = item
    pods: Dict[str, List[Dict[str, Any]]] = {}
    if any(not _final_state(r) for r, _, _ in stored):
        items, _ = client.list(POD, namespace, MANAGED_SELECTOR)
        for pod in items:
            pods.setdefault(_labels(pod).get(JOB_ID_LABEL, ""), []).append(pod)
    return ClusterView(stored, workloads, pods)


def _final_state(record: JobRecord) -> bool:
    from sbatch_k8s.backends.kubernetes.records import is_final

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
    from sbatch_k8s.backends.kubernetes.records import final_patch, is_final, live_record

    out: List[JobRecord] = []
    for stored, ref, cm in view.stored:
        if is_final(stored):
            out.append(stored)
            continue
        workload = view.workloads.get((ref.get("kind", ""), ref.get("name", "")))
        shared = workload is not None and _labels(workload).get(JOB_ID_LABEL) != \
            str(stored.job_id)
        if shared:
            pods = _element_pods(stored, view.pods.get(_labels(workload).get(JOB_ID_LABEL, ""),
                                                       []), True)
            if not pods and not _workload_finished(workload):
                out.append(with_changes(stored, state=PENDING, reason="JobArrayTaskLimit"))
                continue
            record = live_record(stored, None, pods, now)
        else:
            record = live_record(stored, workload, view.pods.get(str(stored.job_id), []), now)
        if reconcile and is_final(record):
            try:
                client.merge_patch(CONFIG_MAP, cm["metadata"]["name"],
                                   cm["metadata"].get("namespace"), final_patch(record))
            except KubeError:
                pass  # another command may have written it; the next look tries again
        out.append(record)
    return out


def _workload_finished(workload: Mapping[str, Any]) -> bool:
    conditions = (workload.get("status") or {}).get("conditions") or []
    return any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
               for c in conditions)


def cluster_records(client: KubeClient, namespaces: Iterable[str], now: int,
                    active_only: bool) -> List[JobRecord]:
    """Joined records of every namespace, by job id."""
    records: List[JobRecord] = []
    for namespace in sorted(set(namespaces)):
        records.extend(joined_records(client, look(client, namespace, active_only), now))
    return sorted(records, key=lambda r: r.job_id)


def find_job(client: KubeClient, namespaces: Iterable[str], job_id: int, now: int
             ) -> Optional[Tuple[JobRecord, Dict[str, str], str]]:
    """One job's live record, its workload reference and its namespace (None: unknown)."""
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
            view = look(client, namespace, False, **selection)  # type: ignore[arg-type]
            found.extend(joined_records(client, view, now))
    unique = {r.job_id: r for r in found}
    return [unique[k] for k in sorted(unique)]
