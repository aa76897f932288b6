"""The batch/v1 Job controller (Indexed and NonIndexed), after ``pkg/controller/job`` v1.29.

Per Job, each pass: account finished pods once (Succeeded → ``succeeded`` and, when Indexed,
``completedIndexes``; Failed, or deleted before finishing under the default
``podReplacementPolicy``, → ``failed`` unless a podFailurePolicy rule says ``Ignore``), drop the
``batch.kubernetes.io/job-tracking`` finalizer of accounted pods, then decide:

1. failure — a ``FailJob`` rule (reason ``PodFailurePolicy``), ``failed > backoffLimit``
   (``BackoffLimitExceeded``) or ``activeDeadlineSeconds`` passed (``DeadlineExceeded``):
   delete the active pods (counted as failed), conditions ``FailureTarget`` and ``Failed``;
2. success — all indexes (or ``completions`` pods) succeeded, or a ``successPolicy`` rule
   matched: delete remaining pods, ``SuccessCriteriaMet`` and ``Complete``, ``completionTime``;
3. suspended — delete active pods (not counted), ``Suspended=True``, no ``startTime``;
4. running — ``startTime``, ``Suspended=False/JobResumed`` after a resume, create the missing
   pods (lowest indexes first, at most ``parallelism`` active), delete extras and duplicates.

Status also carries ``active``, ``ready``, ``terminating`` and ``uncountedTerminatedPods: {}``.
Finished Jobs with ``ttlSecondsAfterFinished`` are deleted (Background) when it expires.
Terminal conditions are set at once (1.29 does not wait for pods to terminate; 1.31 does).
With ``backoffLimitPerIndex``, a replacement pod carries its index's earlier failures in the
annotations ``batch.kubernetes.io/job-index-failure-count`` and, when some were ignored by a
podFailurePolicy ``Ignore`` rule, ``job-index-ignored-failure-count``
(``addIndexFailureCountAnnotation``). Not emulated: the per-index limits themselves
(``backoffLimitPerIndex``/``maxFailedIndexes``/``FailIndex``), pod backoff delays,
``Events``, ``managedBy`` other than the default (such Jobs are left alone, as intended).
"""

from __future__ import annotations

import copy
import time
from typing import Any, Dict, List, Optional, Set, Tuple

from tests.apiserver import errors, metadata
from tests.apiserver.events import record_event
from tests.apiserver.job_pods import (TRACKING_FINALIZER, format_indexes, is_ready,
                                      match_failure_policy, new_pod, parse_indexes, pod_index,
                                      success_policy_met)
from tests.apiserver.job_status import JobStatus
from tests.apiserver.loops import Loop
from tests.apiserver.store import Obj

TERMINAL = ("Succeeded", "Failed")
DEFAULT_MANAGER = "kubernetes.io/job-controller"


def _phase(pod: Obj) -> str:
    return (pod.get("status") or {}).get("phase") or "Pending"


def _terminating(pod: Obj) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp")) and _phase(pod) not in TERMINAL


class JobController(Loop):
    """See the module docstring."""

    keys = ("batch/jobs", "/pods")

    def __init__(self, api: Any) -> None:
        super().__init__(api)
        self.jobs = self.resource("batch", "v1", "jobs")
        self.pods = self.resource("", "v1", "pods")
        self._accounted: Dict[str, Set[str]] = {}   # job uid → pod uids already accounted
        self._removed: Set[str] = set()              # pods deleted on purpose: never failures
        self._start_times: Dict[str, float] = {}         # job uid → precise start time
        #: job uid → index → [failures counted, failures ignored] (``backoffLimitPerIndex``)
        self._index_failures: Dict[str, Dict[int, List[int]]] = {}

    def reconcile(self) -> None:
        owned: Dict[str, List[Obj]] = {}
        for pod in self.api.store.peek("/pods"):
            for ref in pod["metadata"].get("ownerReferences") or []:
                if ref.get("controller") and ref.get("kind") == "Job":
                    owned.setdefault(ref.get("uid", ""), []).append(pod)
        live = set()
        for job in self.api.store.peek("batch/jobs"):
            uid = job["metadata"]["uid"]
            live.add(uid)
            if (job.get("spec") or {}).get("managedBy", DEFAULT_MANAGER) != DEFAULT_MANAGER:
                continue
            self._sync(job, owned.get(uid, []))
        for uid, pods in owned.items():
            if uid not in live:
                for pod in pods:
                    self._release(pod)

    # -- one Job ---------------------------------------------------------------------------
    def _sync(self, job: Obj, pods: List[Obj]) -> None:
        meta, spec = job["metadata"], job.get("spec") or {}
        if meta.get("deletionTimestamp"):
            for pod in pods:
                self._release(pod)
            return
        status = JobStatus(copy.deepcopy(job.get("status") or {}))
        accounted = self._accounted.setdefault(meta["uid"], set())
        indexed = spec.get("completionMode") == "Indexed"
        completions = spec.get("completions")
        fail = self._account(job, pods, status, accounted, indexed, completions)
        active = [p for p in pods if _phase(p) not in TERMINAL
                  and not p["metadata"].get("deletionTimestamp")]
        if status.finished():
            self._delete_all(active, counted_as_failed=False)
            active = []
        else:
            active = self._decide(job, status, pods, active, fail, indexed, completions)
        for pod in pods:
            if pod["metadata"]["uid"] in accounted or status.finished():
                self._release(pod)
        self._write_status(job, status, pods, active)
        self._expire(job, status)

    def _account(self, job: Obj, pods: List[Obj], status: JobStatus, accounted: Set[str],
                 indexed: bool, completions: Optional[int]) -> Optional[Tuple[str, str]]:
        """Count newly finished pods; return a FailJob (reason, message) if a rule says so."""
        replace_terminating = (job.get("spec") or {}).get(
            "podReplacementPolicy", "TerminatingOrFailed") == "TerminatingOrFailed"
        done = parse_indexes(status.get("completedIndexes"))
        fail: Optional[Tuple[str, str]] = None
        for pod in pods:
            uid, phase = pod["metadata"]["uid"], _phase(pod)
            if uid in accounted:
                continue
            if phase == "Succeeded":
                accounted.add(uid)
                status.bump("succeeded")
                index = pod_index(pod)
                if indexed and index is not None and index < int(completions or 0):
                    done.add(index)
            elif phase == "Failed" or (pod["metadata"].get("deletionTimestamp")
                                       and replace_terminating):
                accounted.add(uid)
                if uid in self._removed:
                    continue
                verdict = match_failure_policy(job, pod) if phase == "Failed" else None
                self._count_index_failure(job, pod, bool(verdict and verdict[0] == "Ignore"))
                if verdict and verdict[0] == "Ignore":
                    continue
                status.bump("failed")
                if verdict and verdict[0] == "FailJob" and fail is None:
                    fail = ("PodFailurePolicy", verdict[1])
        if indexed:
            status.set("completedIndexes", format_indexes(done) or None)
        return fail

    def _count_index_failure(self, job: Obj, pod: Obj, ignored: bool) -> None:
        """Remember a failure of ``pod``'s index for its replacement (module docstring)."""
        index = pod_index(pod)
        if (job.get("spec") or {}).get("backoffLimitPerIndex") is None or index is None:
            return
        counts = self._index_failures.setdefault(job["metadata"]["uid"], {})
        counts.setdefault(index, [0, 0])[1 if ignored else 0] += 1

    def _decide(self, job: Obj, status: JobStatus, pods: List[Obj], active: List[Obj],
                fail: Optional[Tuple[str, str]], indexed: bool,
                completions: Optional[int]) -> List[Obj]:
        """Apply the first of failure, success, suspension, running; return active pods."""
        spec, uid = job.get("spec") or {}, job["metadata"]["uid"]
        if fail is None and int(status.get("failed") or 0) > int(spec.get("backoffLimit", 6)):
            fail = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
        deadline = spec.get("activeDeadlineSeconds")
        if fail is None and deadline is not None and status.get("startTime") and \
                not spec.get("suspend"):
            started = self._start_times.get(uid) or metadata.parse_rfc3339(status.get("startTime"))
            if time.time() - started >= int(deadline):
                fail = ("DeadlineExceeded", "Job was active longer than specified deadline")
        if fail is not None:
            for _ in active:
                status.bump("failed")
            self._delete_all(active, counted_as_failed=True)
            status.condition("FailureTarget", "True", *fail)
            status.condition("Failed", "True", *fail)
            return []
        success = self._success(job, status, indexed, completions, active)
        if success is not None:
            self._delete_all(active, counted_as_failed=False)
            status.condition("SuccessCriteriaMet", "True", *success)
            status.condition("Complete", "True", *success)
            status.set("completionTime", metadata.rfc3339())
            return []
        if spec.get("suspend"):
            self._delete_all(active, counted_as_failed=False)
            status.condition("Suspended", "True", "JobSuspended", "Job suspended")
            status.set("startTime", None)
            self._start_times.pop(uid, None)
            return []
        if status.has_condition("Suspended", "True"):
            status.condition("Suspended", "False", "JobResumed", "Job resumed")
        if not status.get("startTime"):
            self._start_times[uid] = time.time()
            status.set("startTime", metadata.rfc3339(self._start_times[uid]))
        return self._scale(job, status, pods, active, indexed, completions)

    def _success(self, job: Obj, status: JobStatus, indexed: bool, completions: Optional[int],
                 active: List[Obj]) -> Optional[Tuple[str, str]]:
        succeeded = int(status.get("succeeded") or 0)
        if indexed:
            done = parse_indexes(status.get("completedIndexes"))
            rule = success_policy_met(job, done)
            if rule is not None:
                return "SuccessPolicy", f"Matched rules at index {rule}"
            if len(done) >= int(completions or 0):
                return "CompletionsReached", "Reached expected number of succeeded pods"
            return None
        if completions is not None:
            if succeeded >= int(completions):
                return "CompletionsReached", "Reached expected number of succeeded pods"
            return None
        if succeeded > 0 and not active:
            return "CompletionsReached", "Reached expected number of succeeded pods"
        return None

    def _scale(self, job: Obj, status: JobStatus, pods: List[Obj], active: List[Obj],
               indexed: bool, completions: Optional[int]) -> List[Obj]:
        spec = job.get("spec") or {}
        parallelism = int(spec.get("parallelism", 1))
        keep: List[Obj] = []
        extra: List[Obj] = []
        seen: Set[Optional[int]] = set()
        for pod in sorted(active, key=lambda p: int(p["metadata"]["resourceVersion"])):
            index = pod_index(pod) if indexed else None
            out_of_range = indexed and (index is None or index >= int(completions or 0))
            if (indexed and index in seen) or out_of_range:
                extra.append(pod)
            else:
                seen.add(index)
                keep.append(pod)
        if indexed:
            done = parse_indexes(status.get("completedIndexes"))
            terminating = {pod_index(p) for p in pods if _terminating(p)} \
                if spec.get("podReplacementPolicy") == "Failed" else set()
            missing = [i for i in range(int(completions or 0))
                       if i not in done and i not in seen and i not in terminating]
        else:
            remaining = (int(completions) - int(status.get("succeeded") or 0)
                         if completions is not None else parallelism)
            missing = [None] * max(0, min(parallelism, remaining) - len(keep))
        if len(keep) > parallelism:
            keep.sort(key=lambda p: (pod_index(p) or 0, p["metadata"]["name"]))
            extra += keep[parallelism:]
            keep = keep[:parallelism]
        self._delete_all(extra, counted_as_failed=False)
        for index in missing[:max(0, parallelism - len(keep))]:
            try:
                failures = self._index_failures.get(job["metadata"]["uid"], {}).get(index)
                keep.append(self.api.create(self.pods, job["metadata"]["namespace"],
                                            new_pod(job, index, failures)))
            except errors.ApiError:
                break
            record_event(self.api, job, "batch/v1", "Job", "SuccessfulCreate",
                         f"Created pod: {keep[-1]['metadata']['name']}", "job-controller")
        return keep

    # -- writes ----------------------------------------------------------------------------
    def _delete_all(self, pods: List[Obj], counted_as_failed: bool) -> None:
        for pod in pods:
            meta = pod["metadata"]
            if not counted_as_failed:
                self._removed.add(meta["uid"])
            else:
                job_uid = next((r["uid"] for r in meta.get("ownerReferences") or []
                                if r.get("controller")), "")
                self._accounted.setdefault(job_uid, set()).add(meta["uid"])
            try:
                self.api.delete(self.pods, meta["namespace"], meta["name"], {})
            except errors.ApiError as error:
                if error.code != 404:
                    raise

    def _release(self, pod: Obj) -> None:
        """Remove the tracking finalizer (the pod may then disappear)."""
        if TRACKING_FINALIZER not in (pod["metadata"].get("finalizers") or []):
            return

        def drop(current: Obj) -> Optional[Obj]:
            finalizers = current["metadata"].get("finalizers") or []
            if TRACKING_FINALIZER not in finalizers:
                return None
            current["metadata"]["finalizers"] = [f for f in finalizers
                                                 if f != TRACKING_FINALIZER]
            return current
        meta = pod["metadata"]
        self.api.update_with(self.pods, meta["namespace"], meta["name"], drop)

    def _write_status(self, job: Obj, status: JobStatus, pods: List[Obj],
                      active: List[Obj]) -> None:
        live = [p for p in active if not p["metadata"].get("deletionTimestamp")]
        status.set("active", len(live) or None)
        status.set("ready", sum(1 for p in live if is_ready(p)))
        status.set("terminating", sum(1 for p in pods if _terminating(p)))
        status.set("uncountedTerminatedPods", {})
        wanted = status.data
        if wanted == (job.get("status") or {}):
            return
        meta = job["metadata"]

        def put(current: Obj) -> Optional[Obj]:
            if current["metadata"]["uid"] != meta["uid"]:
                return None
            current["status"] = wanted
            return current
        self.api.update_with(self.jobs, meta["namespace"], meta["name"], put, "status")

    def _expire(self, job: Obj, status: JobStatus) -> None:
        ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
        finished_at = status.finished_at()
        if ttl is None or finished_at is None:
            return
        if time.time() >= metadata.parse_rfc3339(finished_at) + int(ttl):
            meta = job["metadata"]
            try:
                self.api.delete(self.jobs, meta["namespace"], meta["name"],
                                {"propagationPolicy": "Background",
                                 "preconditions": {"uid": meta["uid"]}})
            except errors.ApiError as error:
                if error.code not in (404, 409):
                    raise
