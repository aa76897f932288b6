"""A waiting job's workload: the annotations that keep it from starting, and the writes.

A job that may not start yet has a suspended workload carrying a hold (``scontrol hold``)
or gate annotations (``--dependency``, ``--begin``; :mod:`translators.gates`), on a Kueue
partition without Kueue's labels so that Kueue does not resume it. This module holds the
merge patches that hold such a workload, release it, lift its gates and delete it — the
workload half of :mod:`sbatch_k8s.runtime.cluster.release`, which decides when to act, and of
``scontrol hold``/``release`` on the login side. Writing is safe when several do it at once:
the workload is read fresh and patched at that resourceVersion (409: someone else acted
first), and a held workload is never resumed. ``api`` is anything with
``request(method, path, query, body, content_type)`` raising an error with ``.status``: the
pod's :class:`~sbatch_k8s.runtime.cluster.kube_api.KubeApi` or the login side's ``KubeClient``.
"""

from __future__ import annotations

from parsers.vocabulary import (
    HOLD,
    GATES,
    RELEASE_LABELS,
)
import json
from typing import Any, Dict, Mapping, Optional, Tuple

#: The workload's hold and gate annotations (:mod:`translators.metadata`, same keys).
#: On a held or gated workload of a Kueue partition: the Kueue labels it gets when it may
#: start, as JSON (:mod:`translators.gates`, same key).
#: The labels Kueue reads on a workload (moved into :data:`RELEASE_LABELS` by a hold).
KUEUE_LABELS = ("kueue.x-k8s.io/queue-name", "kueue.x-k8s.io/priority-class")
#: The pending reason of a job free to start, as Slurm names it.
ELIGIBLE = "None"
#: The hold annotation's value → the reason a held job shows.
HELD_REASONS = {"user": "JobHeldUser", "admin": "JobHeldAdmin"}
#: Workload kinds: their resource (plural) and where their ``suspend`` flag lives.
WORKLOAD_KINDS: Dict[str, Tuple[str, Tuple[str, ...]]] = {
    "Job": ("jobs", ("spec", "suspend")),
    "JobSet": ("jobsets", ("spec", "suspend")),
    "PyTorchJob": ("pytorchjobs", ("spec", "runPolicy", "suspend")),
    "MPIJob": ("mpijobs", ("spec", "runPolicy", "suspend")),
}
#: Times a record or workload is read again after a conflicting writer (409).
ATTEMPTS = 4


def workload_path(ref: Mapping[str, str]) -> Optional[str]:
    """The API path of the workload ``ref`` names (None: not a workload kind)."""
    kind = WORKLOAD_KINDS.get(ref.get("kind", ""))
    if kind is None or not ref.get("name") or not ref.get("apiVersion"):
        return None
    version = ref["apiVersion"]
    prefix = f"/api/{version}" if "/" not in version else f"/apis/{version}"
    return f"{prefix}/namespaces/{ref.get('namespace', 'default')}/{kind[0]}/{ref['name']}"


def _suspend_patch(kind: str, suspend: bool) -> Dict[str, Any]:
    *path, leaf = WORKLOAD_KINDS[kind][1]
    body: Dict[str, Any] = {leaf: suspend}
    for key in reversed(path):
        body = {key: body}
    return body


def release_patch(kind: str, meta: Mapping[str, Any]) -> Dict[str, Any]:
    """The merge patch that lets a workload (``meta``: its metadata) start: on a Kueue
    partition, Kueue's labels out of :data:`RELEASE_LABELS` — Kueue resumes it when it
    admits it (:mod:`translators.gates`) — else ``suspend: false``."""
    stored = (meta.get("annotations") or {}).get(RELEASE_LABELS)
    if not stored:
        return _suspend_patch(kind, False)
    try:
        labels = {str(k): str(v) for k, v in json.loads(stored).items()}
    except (ValueError, AttributeError):
        labels = {}
    return {"metadata": {"labels": labels, "annotations": {RELEASE_LABELS: None}}}


def hold_patch(kind: str, meta: Mapping[str, Any]) -> Dict[str, Any]:
    """The merge patch that keeps a pending workload from starting: suspended, and out of
    Kueue's hands (its labels moved into :data:`RELEASE_LABELS`, kept with those already
    there) so that Kueue does not resume it."""
    patch = _suspend_patch(kind, True)
    labels = meta.get("labels") or {}
    queued = {k: str(labels[k]) for k in KUEUE_LABELS if labels.get(k)}
    if queued:
        stored = (meta.get("annotations") or {}).get(RELEASE_LABELS)
        try:
            kept = dict(json.loads(stored)) if stored else {}
        except (ValueError, TypeError):
            kept = {}
        kept.update(queued)
        patch["metadata"] = {
            "labels": {k: None for k in queued},
            "annotations": {RELEASE_LABELS: json.dumps(kept, sort_keys=True,
                                                       separators=(",", ":"))}}
    return patch


def error_status(error: BaseException) -> int:
    """The HTTP status of a failed API request (0: none known)."""
    return int(getattr(error, "status", 0) or 0)


def lift_gates(api: Any, ref: Mapping[str, str]) -> Optional[str]:
    """Remove the workload's gate annotations and let it start unless it is held
    (:func:`release_patch`): the reason it now shows (``None``, or ``JobHeldUser``/
    ``JobHeldAdmin`` while held), None when it is gone (or not a workload)."""
    path = workload_path(ref)
    if path is None:
        return None
    for _ in range(ATTEMPTS):
        try:
            workload = api.request("GET", path)
        except Exception as e:
            if error_status(e) == 404:
                return None
            raise
        meta = workload.get("metadata") or {}
        hold = (meta.get("annotations") or {}).get(HOLD)
        patch = {} if hold else release_patch(ref["kind"], meta)
        released = patch.setdefault("metadata", {})
        released["resourceVersion"] = meta.get("resourceVersion")
        released.setdefault("annotations", {}).update({gate: None for gate in GATES})
        try:
            api.request("PATCH", path, body=patch, content_type="application/merge-patch+json")
            return HELD_REASONS.get(str(hold), "JobHeldUser") if hold else ELIGIBLE
        except Exception as e:
            if error_status(e) == 404:
                return None
            if error_status(e) != 409:
                raise
    raise RuntimeError(f"workload {ref.get('name')} kept changing")


def delete_workload(api: Any, ref: Mapping[str, str]) -> None:
    """Delete the workload (its pods and companions go with it); gone already is fine."""
    path = workload_path(ref)
    if path is None:
        return
    try:
        api.request("DELETE", path, {"propagationPolicy": "Background"})
    except Exception as e:
        if error_status(e) != 404:
            raise
