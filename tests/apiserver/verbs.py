"""The verbs behind the URLs: create, get, list, update, patch, delete, deletecollection,
and the pod subresources ``binding`` and ``eviction`` (``log`` streams: :mod:`.pod_logs`).
"""

from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from tests.apiserver import errors, metadata
from tests.apiserver.registry import Api
from tests.apiserver.routing import Route
from tests.apiserver.selectors import make_filter
from tests.apiserver.store import Obj



class Reply(NamedTuple):
    """A complete (non-streaming) answer: code, JSON-able body (or text), extra headers."""

    code: int
    body: Any
    headers: Tuple[Tuple[str, str], ...] = ()


# What the real pods/binding and pods/eviction answer (the Python client cannot deserialize
# it as a V1Binding: call create_namespaced_binding with _preload_content=False).
BINDING_SUCCESS = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                   "code": 201}
DELETE_OPTION_PARAMS = ("gracePeriodSeconds", "propagationPolicy", "orphanDependents")


def _dry_run(query: Dict[str, str], body: Any) -> bool:
    if query.get("dryRun") == "All":
        return True
    if query.get("dryRun"):
        raise errors.bad_request(f'Invalid dry run value: "{query["dryRun"]}"')
    return isinstance(body, dict) and body.get("dryRun") == ["All"]


def delete_options(query: Dict[str, str], body: Any) -> Dict[str, Any]:
    """DeleteOptions from the body, overridden by query parameters."""
    options = dict(body) if isinstance(body, dict) else {}
    for key in DELETE_OPTION_PARAMS:
        if key in query:
            value: Any = query[key]
            if key == "gracePeriodSeconds":
                value = int(value)
            elif key == "orphanDependents":
                value = value.lower() in ("1", "t", "true")
            options[key] = value
    return options


def _success(res_qualified: str, name: str, uid: Optional[str]) -> Dict[str, Any]:
    plural, _, group = res_qualified.partition(".")
    details: Dict[str, Any] = {"name": name}
    if group:
        details["group"] = group
    details["kind"] = plural
    if uid:
        details["uid"] = uid
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "details": details}


def execute(api: Api, verb: str, route: Route, query: Dict[str, str], body: Any,
            content_type: str) -> Reply:
    """Run one non-watch verb and build the reply."""
    res, ns, name, sub = route.resource, route.namespace or "", route.name, route.subresource
    if res.namespaced and not route.namespace and verb not in ("list", "deletecollection"):
        raise errors.resource_not_found()
    if sub in ("binding", "eviction"):
        return _pod_action(api, route, body)
    if res.key == "/bindings":
        if verb != "create":
            raise errors.method_not_allowed()
        pod_name = ((body or {}).get("metadata") or {}).get("name", "")
        return _pod_action(api, Route(api.resources.lookup("", "v1", "pods"), ns, pod_name,
                                      "binding", False), body)
    if verb == "create":
        dry = _dry_run(query, body)
        return Reply(201, api.create(res, ns, body, dry_run=dry))
    if verb == "get":
        return Reply(200, api.get(res, ns, name or ""))
    if verb == "list":
        return Reply(200, _list(api, route, query))
    if verb == "update":
        return Reply(200, api.replace(res, ns, name or "", body, sub, _dry_run(query, None)))
    if verb == "patch":
        return Reply(200, api.patch(res, ns, name or "", body, content_type, sub,
                                    _dry_run(query, None)))
    if verb == "delete":
        options = delete_options(query, body)
        obj, removed, warnings = api.delete(res, ns, name or "", options,
                                            _dry_run(query, body))
        headers = tuple(("Warning", w) for w in warnings)
        if removed and not res.returns_deleted_object:
            return Reply(200, _success(res.qualified, name or "", obj["metadata"].get("uid")),
                         headers)
        return Reply(200, obj, headers)
    if verb == "deletecollection":
        return _delete_collection(api, route, query, body)
    raise errors.method_not_allowed()


def _list(api: Api, route: Route, query: Dict[str, str]) -> Dict[str, Any]:
    res = route.resource
    matches = make_filter(query.get("labelSelector"), query.get("fieldSelector"), res.key,
                          res.kind, res.api_version)
    items, rv, token, remaining = api.list(res, route.namespace, matches,
                                           int(query.get("limit") or 0),
                                           query.get("continue", ""))
    if not res.custom:
        for item in items:
            item.pop("apiVersion", None)
            item.pop("kind", None)
    meta: Dict[str, Any] = {"resourceVersion": rv}
    if token:
        meta["continue"] = token
        meta["remainingItemCount"] = remaining
    return {"kind": f"{res.kind}List", "apiVersion": res.api_version, "metadata": meta,
            "items": items}


def _delete_collection(api: Api, route: Route, query: Dict[str, str], body: Any) -> Reply:
    res = route.resource
    matches = make_filter(query.get("labelSelector"), query.get("fieldSelector"), res.key,
                          res.kind, res.api_version)
    items, rv, _, _ = api.list(res, route.namespace, matches)
    options = delete_options(query, body)
    gone: List[Obj] = []
    for item in items:
        meta = item["metadata"]
        try:
            obj, _, _ = api.delete(res, meta.get("namespace", ""), meta["name"], options,
                                   _dry_run(query, body))
            gone.append(obj)
        except errors.ApiError as error:
            if error.code != 404:
                raise
    return Reply(200, {"kind": f"{res.kind}List", "apiVersion": res.api_version,
                       "metadata": {"resourceVersion": rv}, "items": gone})


def _pod_action(api: Api, route: Route, body: Any) -> Reply:
    """POST pods/{name}/binding (bind to a node) or pods/{name}/eviction (delete with reason)."""
    res, ns, name = route.resource, route.namespace or "", route.name or ""
    if route.subresource == "binding":
        target = ((body or {}).get("target") or {}).get("name")
        if not target:
            raise errors.invalid("Binding", name, [errors.required_cause("target.name")])
        bind_pod(api, ns, name, target)
        return Reply(201, BINDING_SUCCESS)
    options = (body or {}).get("deleteOptions") or {}

    def disrupted(pod: Obj) -> Obj:
        set_condition(pod, "DisruptionTarget", "True", "EvictionByEvictionAPI",
                      "Eviction API: evicting")
        return pod
    api.update_with(res, ns, name, disrupted, "status")
    api.delete(res, ns, name, options)
    return Reply(201, BINDING_SUCCESS)


def bind_pod(api: Api, namespace: str, name: str, node: str) -> Obj:
    """Bind a pod to a node as ``pods/binding`` does (409 when already bound)."""
    res = api.resources.lookup("", "v1", "pods")
    assert res is not None
    with api.store.lock:
        pod = api.get(res, namespace, name)
        bound = (pod.get("spec") or {}).get("nodeName")
        if bound:
            raise errors.conflict("pods/binding", name,
                                  f'pod {name} is already assigned to node "{bound}"')
        if pod["metadata"].get("deletionTimestamp"):
            raise errors.conflict("pods/binding", name, f"pod {name} is being deleted, "
                                                        f"cannot be assigned to a host")
        pod["spec"]["nodeName"] = node
        set_condition(pod, "PodScheduled", "True", None, None)
        pod["metadata"].pop("resourceVersion", None)
        stored = api.store.put(res.key, pod)
        return stored


def set_condition(obj: Obj, kind: str, status: str, reason: Optional[str],
                  message: Optional[str]) -> bool:
    """Set a status condition (lastTransitionTime moves only when status changes).

    Returns True when anything changed.
    """
    conditions = obj.setdefault("status", {}).setdefault("conditions", [])
    wanted: Dict[str, Any] = {"type": kind, "status": status}
    if reason:
        wanted["reason"] = reason
    if message:
        wanted["message"] = message
    for condition in conditions:
        if condition.get("type") == kind:
            if all(condition.get(k) == v for k, v in wanted.items()):
                return False
            if condition.get("status") != status:
                condition["lastTransitionTime"] = metadata.rfc3339()
            for key in ("reason", "message"):
                condition.pop(key, None)
            condition.update(wanted)
            return True
    wanted["lastProbeTime"] = None
    wanted["lastTransitionTime"] = metadata.rfc3339()
    conditions.append(wanted)
    return True
