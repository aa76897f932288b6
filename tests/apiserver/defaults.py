"""Server-side defaulting on create, per kind (what a real server fills in).

Pods get the defaults clients read back (restartPolicy, dnsPolicy, schedulerName,
terminationGracePeriodSeconds, service account, requests from limits, QoS class, the default
not-ready/unreachable tolerations) and ``status.phase: Pending`` (then the registry's
admission adds their ServiceAccount's API-access volume: :mod:`.service_accounts`); Jobs
get parallelism, completions, backoffLimit, completionMode, suspend, the generated selector and the
controller-uid/job-name template labels; Services a ClusterIP; Namespaces ``phase: Active``;
Secrets fold ``stringData`` into ``data``. Resources with a status subresource start with an
empty status, as the real registry strategies make them.
"""

from __future__ import annotations

import base64
import itertools
import threading
from typing import Any, Dict, List

from tests.apiserver.resources import Resource

Obj = Dict[str, Any]

_service_ips = itertools.count(10)
_ip_lock = threading.Lock()

DEFAULT_TOLERATIONS: List[Obj] = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
     "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
     "tolerationSeconds": 300},
]


def _container_defaults(container: Obj) -> None:
    image = str(container.get("image", ""))
    tag = image.rsplit("/", 1)[-1]
    latest = "@" not in image and (":" not in tag or tag.endswith(":latest"))
    container.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    resources = container.setdefault("resources", {})
    limits = resources.get("limits") or {}
    if limits:
        requests = resources.setdefault("requests", {})
        for name, value in limits.items():
            requests.setdefault(name, value)


def pod_spec_defaults(spec: Obj, restart_policy: str = "Always") -> None:
    """Defaults of a pod spec (also applied to Job templates)."""
    spec.setdefault("restartPolicy", restart_policy)
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        _container_defaults(container)


def qos_class(spec: Obj) -> str:
    """``Guaranteed``, ``Burstable`` or ``BestEffort`` from the containers' resources."""
    containers = spec.get("containers") or []
    requests = [(c.get("resources") or {}).get("requests") or {} for c in containers]
    limits = [(c.get("resources") or {}).get("limits") or {} for c in containers]
    if not any(requests) and not any(limits):
        return "BestEffort"
    guaranteed = all(
        all(lim.get(r) is not None and str(lim.get(r)) == str(req.get(r, lim.get(r)))
            for r in ("cpu", "memory"))
        for req, lim in zip(requests, limits))
    return "Guaranteed" if guaranteed else "Burstable"


def _pod(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    pod_spec_defaults(spec)
    spec.setdefault("serviceAccountName", spec.get("serviceAccount") or "default")
    spec.setdefault("serviceAccount", spec["serviceAccountName"])
    spec.setdefault("priority", 0)
    spec.setdefault("enableServiceLinks", True)
    tolerations = spec.setdefault("tolerations", [])
    for default in DEFAULT_TOLERATIONS:
        if not any(t.get("key") == default["key"] for t in tolerations):
            tolerations.append(dict(default))
    obj["status"] = {"phase": "Pending", "qosClass": qos_class(spec)}


def _job(obj: Obj) -> None:
    meta, spec = obj["metadata"], obj.setdefault("spec", {})
    uid, name = meta["uid"], meta["name"]
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 2147483647 if spec.get("backoffLimitPerIndex") else 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy",
                    "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed")
    template = spec.setdefault("template", {})
    labels = template.setdefault("metadata", {}).setdefault("labels", {})
    if not spec.get("manualSelector"):
        spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
        labels.update({"batch.kubernetes.io/controller-uid": uid,
                       "batch.kubernetes.io/job-name": name, "controller-uid": uid,
                       "job-name": name})
    pod_spec_defaults(template.setdefault("spec", {}), restart_policy="")
    if template["spec"]["restartPolicy"] == "":
        del template["spec"]["restartPolicy"]


def _service(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    if spec.get("clusterIP") != "None":
        with _ip_lock:
            n = next(_service_ips)
        spec.setdefault("clusterIP", f"10.96.{n // 250}.{n % 250 + 1}")
    spec.setdefault("clusterIPs", [spec["clusterIP"]])
    spec.setdefault("sessionAffinity", "None")
    spec.setdefault("ipFamilies", ["IPv4"])
    spec.setdefault("ipFamilyPolicy", "SingleStack")
    spec.setdefault("internalTrafficPolicy", "Cluster")
    for port in spec.get("ports") or []:
        port.setdefault("protocol", "TCP")
        port.setdefault("targetPort", port.get("port"))
    obj["status"] = {"loadBalancer": {}}


def _namespace(obj: Obj) -> None:
    name = obj["metadata"]["name"]
    obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = name
    obj["spec"] = {"finalizers": ["kubernetes"]}
    obj["status"] = {"phase": "Active"}


def _secret(obj: Obj) -> None:
    obj.setdefault("type", "Opaque")
    for key, value in (obj.pop("stringData", None) or {}).items():
        obj.setdefault("data", {})[key] = base64.b64encode(str(value).encode()).decode()


def _crd(obj: Obj) -> None:
    names = (obj.get("spec") or {}).get("names") or {}
    obj["status"] = {
        "acceptedNames": names, "storedVersions": [
            v["name"] for v in obj.get("spec", {}).get("versions", []) if v.get("storage")],
        "conditions": [{"type": t, "status": "True", "reason": r, "message": m,
                        "lastTransitionTime": obj["metadata"]["creationTimestamp"]}
                       for t, r, m in (("NamesAccepted", "NoConflicts", "no conflicts found"),
                                       ("Established", "InitialNamesAccepted",
                                        "the initial names have been accepted"))]}


CREATE_DEFAULTS = {"/pods": _pod, "batch/jobs": _job, "/services": _service,
                   "/namespaces": _namespace, "/secrets": _secret,
                   "apiextensions.k8s.io/customresourcedefinitions": _crd}


def on_create(resource: Resource, obj: Obj) -> None:
    """Fill in server defaults and the initial status of a new object, in place."""
    if resource.status_on_create == "clear" and resource.key not in CREATE_DEFAULTS:
        obj.pop("status", None)
    if resource.status_on_create == "clear" and resource.key == "batch/jobs":
        obj["status"] = {}
    handler = CREATE_DEFAULTS.get(resource.key)
    if handler:
        handler(obj)


def on_update(resource: Resource, obj: Obj) -> None:
    """Defaults re-applied on update (Secrets' ``stringData``)."""
    if resource.key == "/secrets":
        _secret(obj)
