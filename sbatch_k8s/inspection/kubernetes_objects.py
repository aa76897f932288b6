"""A job's objects as the API server has them: the workload, the job's ConfigMap and
Service, the job's Secret without its data (and only when the caller may read it: users may
not), and the pods; and the job description the ConfigMap holds."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Union

from parsers.job_records import JobRecord
from sbatch_k8s.backends.kubernetes.api.client import KubeError
from sbatch_k8s.backends.kubernetes.api.kinds import (
    CONFIG_MAP,
    POD,
    SECRET,
    SERVICE,
    WORKLOADS,
    Kind,
)
from sbatch_k8s.inspection.kubernetes_job import locate_job, pods_by_index
from sbatch_k8s.inspection.values import Unavailable


def objects(backend: Any, record: JobRecord) -> Union[List[Dict[str, Any]], Unavailable]:
    """The job's objects as the API server has them: workload, ConfigMap, Service, Secret
    (metadata and type only, when the caller may read it at all), pods."""
    located = locate_job(backend, record)
    if located is None:
        return Unavailable("the cluster holds no objects of this job any more")
    ref, namespace = located
    found: List[Dict[str, Any]] = []
    kind = next((k for k in WORKLOADS if k.api_version == ref.get("apiVersion")
                 and k.kind == ref.get("kind")), None)
    name = ref.get("name") or ""
    try:
        for wanted in ([kind] if kind else []) + [CONFIG_MAP, SERVICE]:
            got = backend.client.get(wanted, name, namespace) if name else None
            if got is not None:
                found.append(_typed(wanted, got))
        secret = _secret_metadata(backend, name, namespace) if name else None
        if secret is not None:
            found.append(_typed(SECRET, secret))
        pods = pods_by_index(backend, record, namespace)
        found.extend(_typed(POD, pods[index]) for index in sorted(pods))
    except KubeError as e:
        return Unavailable(str(e))
    if not found:
        return Unavailable("the job's workload and pods are gone (only its record is kept)")
    return found


def _typed(kind: Kind, found: Mapping[str, Any]) -> Dict[str, Any]:
    """``found`` with its ``apiVersion`` and ``kind`` first, as ``kubectl get -o yaml``
    shows it (the items of a LIST come without them)."""
    rest = {k: v for k, v in found.items() if k not in ("apiVersion", "kind")}
    return {"apiVersion": kind.api_version, "kind": kind.kind, **rest}


#: What of a Secret is never shown: its data, and the copy of it ``kubectl apply`` keeps in an
#: annotation (``sbatch --k8s-print | kubectl apply -f -``).
SECRET_DATA_FIELDS = ("data", "stringData")
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _secret_metadata(backend: Any, name: str, namespace: str) -> Optional[Dict[str, Any]]:
    """The job's Secret without its data; None when it is gone or the caller may not read
    Secrets (users may not: the cluster's RBAC keeps their environment from them)."""
    try:
        got = backend.client.get(SECRET, name, namespace)
    except KubeError as e:
        if e.status in (401, 403):
            return None
        raise
    if got is None:
        return None
    shown = {k: v for k, v in got.items() if k not in SECRET_DATA_FIELDS}
    metadata = dict(shown.get("metadata") or {})
    if LAST_APPLIED in (metadata.get("annotations") or {}):
        metadata["annotations"] = {k: v for k, v in metadata["annotations"].items()
                                   if k != LAST_APPLIED}
    shown["metadata"] = metadata
    return shown


def description(backend: Any, record: JobRecord) -> Optional[Dict[str, Any]]:
    """The job description (the ConfigMap's ``job.json``), None when it is gone."""
    import json

    from parsers.vocabulary import DESCRIPTION_KEY

    located = locate_job(backend, record)
    name = (located[0].get("name") or "") if located else ""
    if not name:
        return None
    try:
        config_map = backend.client.get(CONFIG_MAP, name, located[1])
        found = json.loads(((config_map or {}).get("data") or {}).get(DESCRIPTION_KEY) or "")
    except (KubeError, ValueError):
        return None
    return found if isinstance(found, dict) else None
