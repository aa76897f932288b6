"""The requeue mark (:mod:`sbatch_k8s.backends.kubernetes.requeue.mark`) against an API
server, through the real client: a requeue claims the record exclusively; while the mark is
on, no look and no node 0 writes an end into the record or shows the job ended — not even a
look that read the record before the claim; a requeue that fails removes its mark."""

from __future__ import annotations

import json
import time
from typing import Any, Dict, Tuple

import pytest

from parsers.job_records import JobRecord, with_changes
from sbatch_k8s.backends.kubernetes.api.client import KubeClient, connect
from sbatch_k8s.backends.kubernetes.read.cluster_jobs import ClusterView, joined_records
from sbatch_k8s.backends.kubernetes.api.kinds import CONFIG_MAP, JOB
from sbatch_k8s.backends.kubernetes.history.records import (
    final_patch,
    record_config_map,
    record_from_config_map,
)
from sbatch_k8s.backends.kubernetes.requeue.requeue import requeue_on_cluster
from sbatch_k8s.backends.kubernetes.requeue.mark import claim, unclaim, write_end
from sbatch_k8s.operation_errors import BackendError
from sbatch_k8s.runtime.cluster.job_end import RECORDED, REQUEUEING, record_end
from sbatch_k8s.runtime.cluster.release import REQUEUEING_ANNOTATION
from tests.kube.harness import context_namespace
from tests.unit.kubernetes.cluster_objects import pod, report, terminated
from tests.unit.kubernetes.test_records import submitted

NAME = "sbatch-k8s-job-1234"
REF = {"apiVersion": "batch/v1", "kind": "Job", "name": "llm-1234"}


@pytest.fixture
def api(cluster: Any) -> Tuple[KubeClient, str]:
    """The client and namespace, with job 1234's record: running since a minute."""
    client = connect({"KUBECONFIG": cluster.kubeconfig})
    namespace = context_namespace(cluster.kubeconfig)
    running = with_changes(submitted(), state="RUNNING", start_time=int(time.time()) - 60,
                           node_count=1)
    client.create(record_config_map(running, REF), namespace)
    return client, namespace


def _record(client: KubeClient, namespace: str) -> Dict[str, Any]:
    found = client.get(CONFIG_MAP, NAME, namespace)
    assert found is not None
    return found


def _state(config_map: Dict[str, Any]) -> Tuple[str, str]:
    return (config_map["metadata"]["labels"]["sbatch-k8s.io/state"],
            json.loads(config_map["data"]["record.json"])["state"])


def _cancelled(config_map: Dict[str, Any]) -> JobRecord:
    stored, _ = record_from_config_map(config_map)
    return with_changes(stored, state="CANCELLED", end_time=int(time.time()))


def test_a_claim_is_exclusive(api: Tuple[KubeClient, str]) -> None:
    client, namespace = api
    before = _record(client, namespace)
    assert claim(client, namespace, NAME)
    assert REQUEUEING_ANNOTATION in _record(client, namespace)["metadata"]["annotations"]
    with pytest.raises(BackendError, match="job 1234 is being requeued already"):
        claim(client, namespace, NAME)
    unclaim(client, namespace, NAME)
    assert REQUEUEING_ANNOTATION not in (
        _record(client, namespace)["metadata"].get("annotations") or {})
    # A claim at a resourceVersion someone changed since (the reconcile pass's) fails.
    assert not claim(client, namespace, NAME, before)


def test_no_end_is_written_over_a_requeue_mark(api: Tuple[KubeClient, str]) -> None:
    client, namespace = api
    read_before = _record(client, namespace)  # a look reads the record…
    assert claim(client, namespace, NAME)     # …a requeue claims it, node 0's run ends…
    ended = _cancelled(read_before)
    shown = write_end(client, read_before, ended, final_patch(ended))  # …the look ends it?
    assert (shown.state, shown.reason) == ("COMPLETING", "None")
    assert _state(_record(client, namespace)) == ("active", "RUNNING")
    unclaim(client, namespace, NAME)
    fresh = _record(client, namespace)
    assert write_end(client, fresh, ended, final_patch(ended)).state == "CANCELLED"
    assert _state(_record(client, namespace)) == ("CANCELLED", "CANCELLED")


def test_a_look_shows_a_marked_job_completing_and_writes_nothing(
        api: Tuple[KubeClient, str]) -> None:
    client, namespace = api
    assert claim(client, namespace, NAME)
    marked = _record(client, namespace)
    stored, ref = record_from_config_map(marked)
    node0 = pod("Job", 0, "Failed", terminated(0, report=report("CANCELLED")))
    node0["metadata"]["labels"]["sbatch-k8s.io/job-id"] = "1234"
    now = int(time.time())
    for pods in ([node0], []):  # the run ended; then its pods and workload gone
        view = ClusterView([(stored, ref, marked)], {}, {"1234": pods} if pods else {})
        (shown,) = joined_records(client, view, now)
        assert (shown.state, shown.reason) == ("COMPLETING", "None")
    assert _record(client, namespace)["metadata"]["resourceVersion"] == \
        marked["metadata"]["resourceVersion"]


def test_node_0_records_no_end_under_the_mark(api: Tuple[KubeClient, str]) -> None:
    client, namespace = api
    ended = dict(report("COMPLETED"), node_list="llm-1234-0", batch_host="llm-1234-0")
    assert claim(client, namespace, NAME)
    assert record_end(client, namespace, 1234, ended) == REQUEUEING  # type: ignore[arg-type]
    assert "report.json" not in _record(client, namespace)["data"]
    unclaim(client, namespace, NAME)
    assert record_end(client, namespace, 1234, ended) == RECORDED  # type: ignore[arg-type]
    assert _record(client, namespace)["metadata"]["labels"]["sbatch-k8s.io/state"] == \
        "COMPLETED"


def test_a_requeue_that_fails_removes_its_mark(api: Tuple[KubeClient, str]) -> None:
    client, namespace = api
    stored, ref = record_from_config_map(_record(client, namespace))
    with pytest.raises(BackendError, match="no longer exists"):  # its workload is gone
        requeue_on_cluster(client, stored, ref, JOB, namespace, delay_s=0)
    assert REQUEUEING_ANNOTATION not in (
        _record(client, namespace)["metadata"].get("annotations") or {})


def test_an_end_derived_from_an_older_read_never_overwrites_a_recorded_one(
        api: Tuple[KubeClient, str]) -> None:
    """A look read the record while the job ran; scancel then wrote CANCELLED; the look, which
    derived another end from its older read (the workload gone), gets a conflict, reads the
    record again and shows the cancel instead of writing its own end over it."""
    client, namespace = api
    read_before = _record(client, namespace)
    client.merge_patch(CONFIG_MAP, NAME, namespace, final_patch(_cancelled(read_before)))
    stored, _ = record_from_config_map(read_before)
    derived = with_changes(stored, state="NODE_FAIL", end_time=int(time.time()))
    shown = write_end(client, read_before, derived, final_patch(derived))
    assert shown.state == "CANCELLED"
    assert _state(_record(client, namespace)) == ("CANCELLED", "CANCELLED")
