"""Why a job's pods are being stopped, as node 0 asks the API server
(:mod:`sbatch_k8s.runtime.cluster.end_cause`): the record cancelled by scancel, a requeue's mark,
the workload deleted or suspended, or only pods taken away."""

from __future__ import annotations

import json
import time
from typing import Any, Dict, Optional

from sbatch_k8s.runtime.cluster.end_cause import CANCEL, REQUEUE, SUSPENDED, WORKLOAD_LIVES, \
    ask_cluster, record_says
from sbatch_k8s.runtime.cluster.kube_api import ApiError, KubeApi
from parsers.vocabulary import RECORD_KEY
from sbatch_k8s.runtime.cluster.release import REQUEUEING_ANNOTATION, STATE_LABEL


class FakeApi(KubeApi):
    """GETs answered from a dict of path → object (missing: 404)."""

    def __init__(self, objects: Dict[str, Any]) -> None:
        super().__init__("http://unused", "/nonexistent", None, "ns")
        self.objects = objects

    def request(self, method: str, path: str, query: Optional[Dict[str, str]] = None,
                body: Any = None, content_type: str = "") -> Any:
        assert method == "GET"
        if path not in self.objects:
            raise ApiError(f"GET {path}: not found", 404)
        return self.objects[path]


NS = "/api/v1/namespaces/ns"
JOB = "/apis/batch/v1/namespaces/ns/jobs/llm-7"


def _record(state: str = "RUNNING", label: str = "active",
            annotations: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    return {"metadata": {"labels": {STATE_LABEL: label}, "annotations": annotations or {}},
            "data": {RECORD_KEY: json.dumps({"state": state})}}


def _pod() -> Dict[str, Any]:
    return {"metadata": {"name": "llm-7-0-abcde", "ownerReferences": [
        {"apiVersion": "batch/v1", "kind": "Job", "name": "llm-7", "controller": True}]}}


def _ask(objects: Dict[str, Any]) -> str:
    return ask_cluster(FakeApi(objects), "ns", 7, "llm-7-0-abcde")


def test_scancel_writes_the_record_first() -> None:
    assert record_says(_record("CANCELLED", "CANCELLED")) == CANCEL
    assert record_says(_record("CANCELLED")) == CANCEL
    assert record_says(_record()) is None
    marked = _record(annotations={REQUEUEING_ANNOTATION: str(int(time.time()))})
    assert record_says(marked) == REQUEUE


def test_the_workload_gone_or_deleting_is_its_owners_cancel() -> None:
    base = {f"{NS}/configmaps/sbatch-k8s-job-7": _record(), f"{NS}/pods/llm-7-0-abcde": _pod()}
    assert _ask(base) == CANCEL                                      # the Job is gone
    deleting = {"metadata": {"name": "llm-7", "deletionTimestamp": "2026-11-28T00:00:00Z"}}
    assert _ask(dict(base, **{JOB: deleting})) == CANCEL
    assert _ask(dict(base, **{JOB: {"metadata": {"name": "llm-7"}}})) == WORKLOAD_LIVES
    suspended = {"metadata": {"name": "llm-7"}, "spec": {"suspend": True}}
    assert _ask(dict(base, **{JOB: suspended})) == SUSPENDED


def test_the_records_word_comes_first() -> None:
    objects = {f"{NS}/configmaps/sbatch-k8s-job-7": _record("CANCELLED", "CANCELLED"),
               f"{NS}/pods/llm-7-0-abcde": _pod(), JOB: {"metadata": {"name": "llm-7"}}}
    assert _ask(objects) == CANCEL


def test_a_slow_or_failing_api_server_is_asked_again_before_node_0_decides(
        monkeypatch: Any) -> None:
    """A pod deleted alone is a node failure, even when the API server answers only at the
    third try (at one try, a loaded server on real nodes made it a cancel)."""
    import asyncio

    from sbatch_k8s.runtime.cluster import end_cause
    from sbatch_k8s.runtime.batch_host.stop_judge import NODE_FAIL, StopJudge

    monkeypatch.setattr(end_cause, "ASK_RETRY_S", 0.01)
    answers = [ApiError("GET: timed out"), ApiError("GET: 503", 503), WORKLOAD_LIVES]

    def ask() -> str:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    state, _ = asyncio.run(StopJudge(7, ask).own_stop(has_peers=False))
    assert state == NODE_FAIL and answers == []
