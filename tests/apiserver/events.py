"""Events the control plane records, as a real one does: the Job controller's
``SuccessfulCreate`` for each pod it creates, the scheduler's ``Scheduled`` for each pod it
binds (``kubectl describe`` and ``sbatch-k8s events`` show them). Best effort, as in
client-go's event recorder: an event that cannot be stored is dropped."""

from __future__ import annotations

from typing import Any

from tests.apiserver import errors, metadata
from tests.apiserver.store import Obj


def record_event(api: Any, involved: Obj, api_version: str, kind: str, reason: str,
                 message: str, component: str) -> None:
    """A ``Normal`` event about ``involved`` (a ``kind`` of ``api_version``) from
    ``component``."""
    meta = involved["metadata"]
    now = metadata.rfc3339()
    event = {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"generateName": f"{meta['name']}.", "namespace": meta["namespace"]},
        "involvedObject": {"apiVersion": api_version, "kind": kind, "name": meta["name"],
                           "namespace": meta["namespace"], "uid": meta.get("uid", "")},
        "type": "Normal", "reason": reason, "message": message, "count": 1,
        "firstTimestamp": now, "lastTimestamp": now, "source": {"component": component},
        "reportingComponent": "", "reportingInstance": ""}
    try:
        api.create(api.resources.lookup("", "v1", "events"), meta["namespace"], event)
    except errors.ApiError:
        pass
