"""The semantic API: create, get, list, update, patch with the real server's rules.

Both the HTTP layer and the control loops call this class, so a controller's writes obey the
same optimistic concurrency, status-subresource separation, validation and events as a
client's. Deletion is in :mod:`tests.apiserver.deletion` (a mixin of :class:`Api`).
"""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any, Callable, List, Optional, Tuple

from tests.apiserver import defaults, errors, metadata, patches, validation
from tests.apiserver.deletion import Deletion
from tests.apiserver.resources import Resource, Resources
from tests.apiserver.store import Obj, Store, clone

CRD_KEY = "apiextensions.k8s.io/customresourcedefinitions"
NAMESPACES = "/namespaces"


class Api(Deletion):
    """Operations on stored objects; every error is an :class:`~errors.ApiError`."""

    def __init__(self, store: Store, resources: Resources) -> None:
        self.store = store
        self.resources = resources
        #: The cluster CA (PEM) when the server speaks TLS: every namespace gets it as the
        #: ``kube-root-ca.crt`` ConfigMap and pods' API-access volumes project it.
        self.root_ca_pem: Optional[str] = None
        from tests.apiserver.admission_policy import PolicyAdmission

        #: The stored ValidatingAdmissionPolicies, checked on every client's write.
        self.admission = PolicyAdmission(self)

    def admit(self, operation: str, res: Resource, namespace: str, name: str,
              obj: Optional[Obj], old: Optional[Obj], subresource: str = "",
              dry_run: bool = False) -> None:
        """Check a client's write against the stored admission policies (the emulated
        controllers' own writes are not checked: :mod:`.admission_policy`)."""
        from tests.apiserver.admission_policy import BINDINGS, Request, current_user

        info = current_user()
        if info is None or not self.store.list(BINDINGS, None):
            return
        self.admission.check(Request(info, operation, res, namespace, name, subresource,
                                     clone(obj) if obj is not None else None,
                                     clone(old) if old is not None else None, dry_run))

    # -- reads ---------------------------------------------------------------------------
    def get(self, res: Resource, namespace: str, name: str) -> Obj:
        """One object, 404 when absent."""
        found = self.store.get(res.key, namespace if res.namespaced else "", name)
        if found is None:
            raise errors.not_found(res.qualified, name)
        return self._dress(res, found)

    def find(self, res: Resource, namespace: str, name: str) -> Optional[Obj]:
        """One object or None (for controllers)."""
        found = self.store.get(res.key, namespace if res.namespaced else "", name)
        return self._dress(res, found) if found is not None else None

    def list(self, res: Resource, namespace: Optional[str],
             matches: Callable[[Obj], bool] = lambda o: True, limit: int = 0,
             continue_token: str = "") -> Tuple[List[Obj], str, str, Optional[int]]:
        """Matching objects, the list resourceVersion, a continue token and remaining count."""
        with self.store.lock:
            rv = str(self.store.rv)
            items = [self._dress(res, o) for o in self.store.list(res.key, namespace or None)]
        items = [o for o in items if matches(o)]
        if continue_token:
            try:
                after = json.loads(base64.urlsafe_b64decode(continue_token.encode()))["start"]
            except (ValueError, KeyError, TypeError):
                raise errors.bad_request("continue key is not valid") from None
            items = [o for o in items if _sort_key(o) > tuple(after)]
        if limit and len(items) > limit:
            rest = len(items) - limit
            items = items[:limit]
            token = base64.urlsafe_b64encode(json.dumps(
                {"rv": rv, "start": list(_sort_key(items[-1]))}).encode()).decode()
            return items, rv, token, rest
        return items, rv, "", None

    @staticmethod
    def _dress(res: Resource, obj: Obj) -> Obj:
        """Stamp ``apiVersion``/``kind`` of the requested version onto a stored object."""
        obj["apiVersion"], obj["kind"] = res.api_version, res.kind
        return obj

    # -- create --------------------------------------------------------------------------
    def create(self, res: Resource, namespace: str, body: Any, dry_run: bool = False) -> Obj:
        """Create (201 semantics): defaults, validation, uid, generateName, namespace checks."""
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request was not a JSON object")
        obj = clone(body)
        meta = obj.setdefault("metadata", {})
        if meta.get("resourceVersion"):
            raise errors.ApiError(500, "InternalError",
                                  "resourceVersion should not be set on objects to be created")
        if res.namespaced:
            if meta.get("namespace") and meta["namespace"] != namespace:
                raise errors.bad_request("the namespace of the provided object does not match "
                                         "the namespace sent on the request")
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        self._dress(res, obj)
        with self.store.lock:
            if res.namespaced:
                self._check_namespace(res, namespace, meta.get("name")
                                      or meta.get("generateName", ""))
            if not meta.get("name") and meta.get("generateName"):
                meta["name"] = self._generate_name(res, namespace, meta["generateName"])
            meta["uid"] = str(uuid.uuid4())
            meta["creationTimestamp"] = metadata.rfc3339()
            for key in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
                meta.pop(key, None)
            if res.custom or "spec" in obj or res.key == "batch/jobs":
                meta["generation"] = 1
            defaults.on_create(res, obj)
            if res.key == "/pods":
                from tests.apiserver.service_accounts import admit_pod

                admit_pod(obj, tls=self.root_ca_pem is not None)
            validation.validate(res, obj)
            if self.store.get(res.key, meta.get("namespace", ""), meta["name"]) is not None:
                raise errors.already_exists(res.qualified, meta["name"])
            self.admit("CREATE", res, meta.get("namespace", ""), meta["name"], obj, None,
                       dry_run=dry_run)
            if dry_run:
                return obj
            stored = self.store.put(res.key, obj)
            self._after_write(res, stored)
            return self._dress(res, stored)

    def _check_namespace(self, res: Resource, namespace: str, name: str) -> None:
        ns = self.store.get(NAMESPACES, "", namespace)
        if ns is None:
            raise errors.not_found("namespaces", namespace)
        if ns["metadata"].get("deletionTimestamp"):
            raise errors.namespace_terminating(namespace, res.qualified, name)

    def _generate_name(self, res: Resource, namespace: str, prefix: str) -> str:
        for _ in range(100):
            name = prefix[:58] + metadata.random_suffix()
            if self.store.get(res.key, namespace if res.namespaced else "", name) is None:
                return name
        raise errors.ApiError(500, "InternalError", "could not generate a unique name")

    def _after_write(self, res: Resource, stored: Obj) -> None:
        """Side effects of a write: CRDs (un)serve resources, namespaces get their SA (and,
        over TLS, the root CA ConfigMap, as the root-ca-cert-publisher gives them)."""
        if res.key == CRD_KEY:
            self.resources.add_crd(stored)
        elif res.key == NAMESPACES and not stored["metadata"].get("deletionTimestamp"):
            name = stored["metadata"]["name"]
            if self.store.get("/serviceaccounts", name, "default") is None:
                self.store.put("/serviceaccounts", {
                    "apiVersion": "v1", "kind": "ServiceAccount",
                    "metadata": {"name": "default", "namespace": name,
                                 "uid": str(uuid.uuid4()),
                                 "creationTimestamp": metadata.rfc3339()}})
            from tests.apiserver.service_accounts import ROOT_CA, root_ca_config_map

            if self.root_ca_pem is not None and \
                    self.store.get("/configmaps", name, ROOT_CA) is None:
                self.store.put("/configmaps", root_ca_config_map(name, self.root_ca_pem))

    # -- update and patch -----------------------------------------------------------------
    def replace(self, res: Resource, namespace: str, name: str, body: Any,
                subresource: str = "", dry_run: bool = False) -> Obj:
        """PUT: optimistic concurrency on ``metadata.resourceVersion`` (409 when stale)."""
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request was not a JSON object")
        meta = body.get("metadata") or {}
        if meta.get("name") and meta["name"] != name:
            raise errors.bad_request(f"the name of the object ({meta['name']}) does not match "
                                     f"the name on the URL ({name})")
        if res.namespaced and meta.get("namespace") and meta["namespace"] != namespace:
            raise errors.bad_request("the namespace of the provided object does not match "
                                     "the namespace sent on the request")
        with self.store.lock:
            current = self.get(res, namespace, name)
            return self._write(res, current, clone(body), subresource, dry_run, admit=True)

    def patch(self, res: Resource, namespace: str, name: str, body: Any, content_type: str,
              subresource: str = "", dry_run: bool = False) -> Obj:
        """PATCH with merge, strategic merge or JSON patch; a resourceVersion in it is checked."""
        if not patches.strategic_supported(res.custom, content_type):
            raise errors.unsupported_media_type(content_type)
        with self.store.lock:
            current = self.get(res, namespace, name)
            patched = patches.apply_patch(clone(current), body, content_type)
            if not isinstance(patched, dict):
                raise errors.bad_request("the patched object is not a JSON object")
            return self._write(res, current, patched, subresource, dry_run, admit=True)

    def update_with(self, res: Resource, namespace: str, name: str,
                    mutate: Callable[[Obj], Optional[Obj]], subresource: str = "") -> Optional[Obj]:
        """Read, mutate and write back under the lock (controllers' guaranteed update).

        ``mutate`` edits the object in place and returns None to skip writing, else the object.
        Returns the stored object, or None when it is absent or unchanged.
        """
        with self.store.lock:
            current = self.find(res, namespace, name)
            if current is None:
                return None
            changed = mutate(clone(current))
            if changed is None or changed == current:
                return None
            return self._write(res, current, changed, subresource, False)

    def _write(self, res: Resource, current: Obj, new: Obj, subresource: str,
               dry_run: bool, admit: bool = False) -> Obj:
        sent_rv = (new.get("metadata") or {}).get("resourceVersion")
        name = current["metadata"]["name"]
        if sent_rv and sent_rv != current["metadata"]["resourceVersion"]:
            raise errors.conflict(res.qualified, name, errors.STALE_DETAIL)
        if subresource == "status":
            status = new.get("status")
            new = clone(current)
            if status is None:
                new.pop("status", None)
            else:
                new["status"] = status
        elif "status" in res.subresources:
            new.pop("status", None)
            if "status" in current:
                new["status"] = current["status"]
        metadata.carry_over(current, new)
        self._dress(res, new)
        defaults.on_update(res, new)
        validation.validate(res, new)
        if subresource != "status":
            validation.validate_update(res, current, new)
        meta = new["metadata"]
        if meta.get("deletionTimestamp"):
            added = set(meta.get("finalizers") or []) - set(
                current["metadata"].get("finalizers") or [])
            if added:
                raise errors.invalid(res.kind, name, [errors.invalid_cause(
                    "metadata.finalizers", sorted(added)[0],
                    "no new finalizers can be added if the object is being deleted")],
                    res.group)
        if admit:
            self.admit("UPDATE", res, meta.get("namespace", ""), name, new, current,
                       subresource, dry_run)
        if dry_run:
            return new
        if meta.get("deletionTimestamp") and not meta.get("finalizers") and \
                not meta.get("deletionGracePeriodSeconds") and res.key != NAMESPACES:
            return self._remove(res, new)
        stored = self.store.put(res.key, new)
        self._after_write(res, stored)
        return self._dress(res, stored)


def _sort_key(obj: Obj) -> Tuple[str, str]:
    meta = obj.get("metadata") or {}
    return meta.get("namespace", ""), meta.get("name", "")
