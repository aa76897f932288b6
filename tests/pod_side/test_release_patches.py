"""The writes that hold and release a workload (:mod:`sbatch_k8s.runtime.cluster.workload_gates`):
plain partitions flip ``suspend``; on a Kueue partition a held workload is taken out of Kueue's
hands (its labels kept aside) and released by giving them back, ``suspend`` left to Kueue. Runs on
Python 3.8."""

from __future__ import annotations

import json

from parsers.vocabulary import RELEASE_LABELS
from sbatch_k8s.runtime.cluster.workload_gates import hold_patch, release_patch

QUEUE = "kueue.x-k8s.io/queue-name"
PRIORITY = "kueue.x-k8s.io/priority-class"


def test_plain_workload_is_resumed_and_suspended() -> None:
    assert release_patch("Job", {}) == {"spec": {"suspend": False}}
    assert release_patch("PyTorchJob", {}) == {"spec": {"runPolicy": {"suspend": False}}}
    assert hold_patch("MPIJob", {"labels": {"a": "b"}}) == \
        {"spec": {"runPolicy": {"suspend": True}}}


def test_kueue_workload_gets_its_labels_back_and_keeps_suspend() -> None:
    kept = json.dumps({QUEUE: "team", PRIORITY: "high"})
    assert release_patch("Job", {"annotations": {RELEASE_LABELS: kept}}) == {
        "metadata": {"labels": {QUEUE: "team", PRIORITY: "high"},
                     "annotations": {RELEASE_LABELS: None}}}


def test_holding_a_queued_workload_takes_it_out_of_kueue() -> None:
    patch = hold_patch("JobSet", {"labels": {QUEUE: "team", "x": "y"}})
    assert patch["spec"] == {"suspend": True}
    assert patch["metadata"]["labels"] == {QUEUE: None}
    assert json.loads(patch["metadata"]["annotations"][RELEASE_LABELS]) == {QUEUE: "team"}
