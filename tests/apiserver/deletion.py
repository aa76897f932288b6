"""DELETE semantics: graceful pod deletion, finalizers, propagation policies, namespaces.

- A pod bound to a node and not yet finished is not removed: it gets ``deletionTimestamp`` and
  ``deletionGracePeriodSeconds`` (from the request, else ``terminationGracePeriodSeconds``) and
  waits for its kubelet to delete it again with ``gracePeriodSeconds=0``. Unbound or finished
  pods go at once.
- ``propagationPolicy`` Foreground and Orphan add the ``foregroundDeletion``/``orphan``
  finalizers, which the garbage collector resolves; Background (the default, except
  ``batch/v1`` Jobs whose default is Orphan, with the real server's warning) removes the owner
  now and lets the collector delete dependents.
- Objects with finalizers get ``deletionTimestamp`` and stay until the finalizers are removed.
- Namespaces turn ``Terminating``; the namespace loop empties and then removes them.
"""

from __future__ import annotations

import abc
from typing import Any, Dict, List, Optional, Tuple

from tests.apiserver import errors, metadata
from tests.apiserver.resources import Resource
from tests.apiserver.store import Obj, Store, clone

JOB_ORPHAN_WARNING = ('299 - "child pods are preserved by default when jobs are deleted; set '
                      'propagationPolicy=Background to remove them or set '
                      'propagationPolicy=Orphan to suppress this warning"')
PROPAGATION_FINALIZERS = {"Foreground": "foregroundDeletion", "Orphan": "orphan"}


class Deletion(abc.ABC):
    """Delete operations, mixed into :class:`tests.apiserver.registry.Api` (which reads)."""

    store: Store

    @abc.abstractmethod
    def get(self, res: Resource, namespace: str, name: str) -> Obj:
        """The stored object (the reading side of the API)."""

    def delete(self, res: Resource, namespace: str, name: str, options: Dict[str, Any],
               dry_run: bool = False) -> Tuple[Obj, bool, List[str]]:
        """Delete per ``options`` (DeleteOptions). Returns (object, removed now?, warnings)."""
        warnings: List[str] = []
        with self.store.lock:
            current = self.get(res, namespace, name)
            meta = current["metadata"]
            _check_preconditions(res, meta, options.get("preconditions") or {})
            self.admit("DELETE", res, namespace, name, None, current,  # type: ignore
                       dry_run=dry_run)
            policy = _policy(options)
            if policy is None and res.key == "batch/jobs":
                policy = "Orphan"
                warnings.append(JOB_ORPHAN_WARNING)
            new = clone(current)
            new_meta = new["metadata"]
            finalizers = list(new_meta.get("finalizers") or [])
            extra = PROPAGATION_FINALIZERS.get(policy or "")
            if extra and extra not in finalizers and not meta.get("deletionTimestamp"):
                finalizers.append(extra)
            if finalizers:
                new_meta["finalizers"] = finalizers
            if res.key == "/namespaces":
                return self._terminate_namespace(res, new, dry_run), False, warnings
            grace = self._grace_period(res, current, options.get("gracePeriodSeconds"))
            if grace or finalizers:
                if dry_run:
                    return new, False, warnings
                return self._mark_deleting(res, new, grace, bool(finalizers)), False, warnings
            if dry_run:
                return new, True, warnings
            return self._remove(res, new), True, warnings

    def _grace_period(self, res: Resource, pod: Obj, requested: Optional[Any]) -> int:
        """Seconds a pod may keep running, 0 when it can go now (not a pod, unbound, ended)."""
        if res.key != "/pods":
            return 0
        if not (pod.get("spec") or {}).get("nodeName"):
            return 0
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            return 0
        if requested is not None:
            grace = int(requested)
        else:
            grace = int((pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30))
        current = pod["metadata"].get("deletionGracePeriodSeconds")
        if current is not None and grace > int(current):
            grace = int(current)  # a repeated delete may shorten the period, never lengthen
        return grace

    def _mark_deleting(self, res: Resource, obj: Obj, grace: int, finalized: bool) -> Obj:
        meta = obj["metadata"]
        previous = meta.get("deletionTimestamp")
        if previous is None or grace < int(meta.get("deletionGracePeriodSeconds") or 0):
            meta["deletionTimestamp"] = metadata.rfc3339(
                metadata.parse_rfc3339(metadata.rfc3339()) + grace)
            meta["deletionGracePeriodSeconds"] = grace
        if not grace and not finalized:
            return self._remove(res, obj)
        if meta.get("generation") is not None and previous is None:
            meta["generation"] = int(meta["generation"]) + 1
        stored = self.store.put(res.key, obj)
        return dict(stored, apiVersion=res.api_version, kind=res.kind)

    def _terminate_namespace(self, res: Resource, ns: Obj, dry_run: bool) -> Obj:
        meta = ns["metadata"]
        if not meta.get("deletionTimestamp"):
            meta["deletionTimestamp"] = metadata.rfc3339()
            ns.setdefault("status", {})["phase"] = "Terminating"
        if dry_run:
            return ns
        stored = self.store.put(res.key, ns)
        return dict(stored, apiVersion=res.api_version, kind=res.kind)

    def _remove(self, res: Resource, final: Obj) -> Obj:
        """Remove now; a deleted CRD stops serving its resources and loses its objects."""
        meta = final["metadata"]
        gone = self.store.remove(res.key, meta.get("namespace", ""), meta["name"], final)
        if res.key == "apiextensions.k8s.io/customresourcedefinitions":
            spec = final.get("spec") or {}
            key = f"{spec.get('group', '')}/{(spec.get('names') or {}).get('plural', '')}"
            for obj in self.store.list(key):
                self.store.remove(key, obj["metadata"].get("namespace", ""),
                                  obj["metadata"]["name"])
            getattr(self, "resources").remove_crd(meta["name"])
        return dict(gone or final, apiVersion=res.api_version, kind=res.kind)

    def finalize_namespace(self, name: str) -> None:
        """Remove a terminating namespace (its contents already gone)."""
        with self.store.lock:
            self.store.remove("/namespaces", "", name)


def _policy(options: Dict[str, Any]) -> Optional[str]:
    policy = options.get("propagationPolicy")
    if policy is None and options.get("orphanDependents") is not None:
        policy = "Orphan" if options["orphanDependents"] else "Background"
    if policy not in (None, "Background", "Foreground", "Orphan"):
        raise errors.invalid("DeleteOptions", "", [errors.invalid_cause(
            "propagationPolicy", policy, 'propagationPolicy must be one of "Orphan", '
                                         '"Background", "Foreground", or nil')])
    return policy


def _check_preconditions(res: Resource, meta: Obj, pre: Dict[str, Any]) -> None:
    name = meta["name"]
    if pre.get("uid") and pre["uid"] != meta.get("uid"):
        raise errors.conflict(res.qualified, name,
                              f"Precondition failed: UID in precondition: {pre['uid']}, "
                              f"UID in object meta: {meta.get('uid')}")
    if pre.get("resourceVersion") and pre["resourceVersion"] != meta.get("resourceVersion"):
        raise errors.conflict(res.qualified, name,
                              f"Precondition failed: ResourceVersion in precondition: "
                              f"{pre['resourceVersion']}, ResourceVersion in object meta: "
                              f"{meta.get('resourceVersion')}")
