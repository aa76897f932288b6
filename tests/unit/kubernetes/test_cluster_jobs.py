"""Joining records with what the cluster shows (:mod:`sbatch_k8s.backends.kubernetes.cluster_jobs`):
a record whose workload is not there yet is being submitted, not vanished."""

from __future__ import annotations

from sbatch_k8s.backends.kubernetes.cluster_jobs import (
    SUBMIT_GRACE_S,
    ClusterView,
    joined_records,
)
from sbatch_k8s.backends.kubernetes.records import record_config_map
from tests.unit.kubernetes.test_records import submitted

REF = {"apiVersion": "batch/v1", "kind": "Job", "name": "llm-1234", "namespace": "ns"}


def _alone() -> ClusterView:
    """A job's record, with neither workload nor pods."""
    record = submitted()
    return ClusterView([(record, dict(REF), record_config_map(record, REF))], {}, {})


def test_a_record_without_workload_is_being_submitted_while_young() -> None:
    submit_time = submitted().submit_time
    assert submit_time is not None
    young = joined_records(None, _alone(), submit_time + 1,  # type: ignore[arg-type]
                           reconcile=False)  # one second after sbatch
    assert [(r.state, r.reason) for r in young] == [("PENDING", submitted().reason)]
    old = joined_records(None, _alone(), submit_time + SUBMIT_GRACE_S,
                         reconcile=False)  # type: ignore[arg-type]
    assert [(r.state, r.reason) for r in old] == [("NODE_FAIL", "NodeDown")]
