"""The requeue mark on a job's record: a requeued job is not over, for anyone.

Slurm does not release the ``afterany`` dependents of a job that is requeued (nor fail its
``afterok`` ones): the run that ended is not the job's end. On a cluster the requeue
(:mod:`.requeue`) takes a while — node 0 is asked to end the run, the workload is deleted and
its pods waited for — and meanwhile the run's end is plain to see (node 0's report says
CANCELLED, DUE TO JOB REQUEUE; a lost node's pods say NODE_FAIL). Whoever looks then (any
command's reconcile pass, the controller, node 0's runtime of this job or of another) must
not take it as the job's end. So every requeue first *claims* the record: it writes the mark
(:data:`~sbatch_k8s.runtime.cluster.release.REQUEUEING_ANNOTATION`, the epoch second) at the
resourceVersion it read, before it asks node 0 to end or deletes anything, and removes it
with the record it rewrites as pending (or when the requeue fails).

While the mark is on (and younger than
:data:`~sbatch_k8s.runtime.cluster.release.REQUEUE_MARK_TTL_S`):

* a look shows the job ``COMPLETING`` (slurmctld's ``PENDING|COMPLETING|REQUEUE``), never an
  end, and writes no end into its record (:func:`being_requeued`);
* an end is written into a record only at the resourceVersion it was read at
  (:func:`write_end`): a mark that came meanwhile turns the write into a conflict, the record
  is read again and the job shown being requeued — so a look that read the record before the
  requeue claimed it and the pods after node 0 ended cannot end it either;
* node 0's runtime records nothing and releases nothing for a run ended under the mark
  (:mod:`sbatch_k8s.runtime.cluster.job_end`), and counts a marked job as not ended.

The release pass decides from these records, so a dependent is never released nor failed by a
run that ends in a requeue.
"""

from __future__ import annotations

import time
from typing import Any, Dict, Mapping, Optional

from parsers.job_records import JobRecord, with_changes
from sbatch_k8s.backends.kubernetes.api.client import KubeClient, KubeError
from sbatch_k8s.backends.kubernetes.api.kinds import CONFIG_MAP
from sbatch_k8s.operation_errors import BackendError
from sbatch_k8s.runtime.cluster.release import REQUEUEING_ANNOTATION, REQUEUEING_STATE, requeueing

#: Times a claim or an end is tried again after a conflicting writer (409).
ATTEMPTS = 4


def being_requeued(record: JobRecord) -> JobRecord:
    """How a job shows while a requeue replaces its run: ``COMPLETING``, not ended."""
    return with_changes(record, state=REQUEUEING_STATE, reason="None")


def claim(client: KubeClient, namespace: str, name: str,
          config_map: Optional[Mapping[str, Any]] = None) -> bool:
    """Write the requeue mark on the record ``name`` at the resourceVersion of
    ``config_map`` (as read by the caller: a conflict means someone else changed the record,
    False) or, without it, of a fresh read (retried on conflicts). BackendError when another
    requeue holds a live mark already (or the record is gone)."""
    current = config_map
    for _ in range(ATTEMPTS if config_map is None else 1):
        if current is None:
            current = client.get(CONFIG_MAP, name, namespace)
            if current is None:
                raise BackendError(f"record {name} is gone")
        if requeueing(current):
            raise BackendError(f"{_job(name)} is being requeued already; try again later")
        meta = current.get("metadata") or {}
        try:
            client.merge_patch(CONFIG_MAP, name, namespace, {"metadata": {
                "resourceVersion": meta.get("resourceVersion"),
                "annotations": {REQUEUEING_ANNOTATION: str(int(time.time()))}}})
            return True
        except KubeError as e:
            if e.status != 409:
                raise
        current = None
    return False


def unclaim(client: KubeClient, namespace: str, name: str) -> None:
    """Remove the mark after a requeue that failed (best effort: the mark expires anyway)."""
    try:
        client.merge_patch(CONFIG_MAP, name, namespace,
                           {"metadata": {"annotations": {REQUEUEING_ANNOTATION: None}}})
    except KubeError:
        pass


def write_end(client: KubeClient, config_map: Mapping[str, Any], record: JobRecord,
              patch: Dict[str, Any]) -> JobRecord:
    """Write the ended ``record`` (its merge ``patch``) into the record ``config_map`` at the
    resourceVersion it was read at; what the job is then: ``record``, or
    :func:`being_requeued` when a requeue's mark is there (then or once read again after a
    conflict), or the end another writer recorded meanwhile (scancel's, node 0's: the first
    end written is the job's, never overwritten by one derived from an older read). A write
    that fails otherwise is left for the next look (``record`` shown)."""
    meta = config_map.get("metadata") or {}
    name, namespace = meta.get("name", ""), meta.get("namespace")
    current: Optional[Mapping[str, Any]] = config_map
    for _ in range(ATTEMPTS):
        if current is None:
            try:
                current = client.get(CONFIG_MAP, name, namespace)
            except KubeError:
                return record
            if current is None:
                return record
            if not requeueing(current) and _settled(current):
                return _recorded(current, record)
        if requeueing(current):
            return being_requeued(record)
        body = dict(patch, metadata=dict(patch.get("metadata") or {}, resourceVersion=(
            current.get("metadata") or {}).get("resourceVersion")))
        try:
            client.merge_patch(CONFIG_MAP, name, namespace, body)
            return record
        except KubeError as e:
            if e.status != 409:
                return record  # another command may have written it; the next look tries
        current = None
    return being_requeued(record)  # the record keeps changing: not ended, for now


def _job(name: str) -> str:
    number = name.rsplit("-", 1)[-1]
    return f"job {number}" if number.isdigit() else name


def _settled(config_map: Mapping[str, Any]) -> bool:
    """Whether the record holds an end already (its state label is no longer active)."""
    from parsers.vocabulary import ACTIVE, STATE

    labels = (config_map.get("metadata") or {}).get("labels") or {}
    return labels.get(STATE, ACTIVE) != ACTIVE


def _recorded(config_map: Mapping[str, Any], derived: JobRecord) -> JobRecord:
    """The end the record holds (``derived`` when it cannot be read)."""
    from sbatch_k8s.backends.kubernetes.history.records import record_from_config_map

    try:
        return record_from_config_map(config_map)[0]
    except ValueError:
        return derived
