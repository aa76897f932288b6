"""The garbage collector and namespace loops.

- A dependent (``metadata.ownerReferences``) whose owners are all gone (no object with that
  uid) is deleted in the background, as the real garbage collector does.
- An owner deleting with the ``foregroundDeletion`` finalizer gets its dependents deleted and
  loses the finalizer once none remain; one with the ``orphan`` finalizer has the owner
  reference removed from its dependents, then loses the finalizer.
- A terminating namespace has its contents deleted and is removed once empty.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from tests.apiserver import errors
from tests.apiserver.loops import Loop
from tests.apiserver.resources import Resource
from tests.apiserver.store import Obj

Entry = Tuple[Resource, Obj]


class GarbageCollector(Loop):
    """See the module docstring."""

    poll_s = 1.0

    def reconcile(self) -> None:
        everything: List[Entry] = []
        for key in self.api.store.keys():
            res = self.api.resources.by_key(key)
            if res is not None:
                everything += [(res, obj) for obj in self.api.store.peek(key)]
        by_uid = {obj["metadata"].get("uid"): (res, obj) for res, obj in everything}
        dependents: Dict[str, List[Entry]] = {}
        for res, obj in everything:
            for ref in obj["metadata"].get("ownerReferences") or []:
                dependents.setdefault(ref.get("uid", ""), []).append((res, obj))
        for res, obj in everything:
            self._collect(res, obj, by_uid)
        for res, obj in everything:
            finalizers = obj["metadata"].get("finalizers") or []
            if not obj["metadata"].get("deletionTimestamp"):
                continue
            uid = obj["metadata"]["uid"]
            if "orphan" in finalizers:
                self._orphan(uid, dependents.get(uid, []))
                self._drop_finalizer(res, obj, "orphan")
            elif "foregroundDeletion" in finalizers:
                live = [d for d in dependents.get(uid, []) if d[1]["metadata"]["uid"] in by_uid]
                for dep_res, dep in live:
                    self._delete_object(dep_res, dep, "Foreground")
                if not live:
                    self._drop_finalizer(res, obj, "foregroundDeletion")
        self._namespaces(everything)

    def _collect(self, res: Resource, obj: Obj, by_uid: Dict[str, Entry]) -> None:
        refs = obj["metadata"].get("ownerReferences") or []
        if not refs or obj["metadata"].get("deletionTimestamp"):
            return
        owners = [by_uid.get(ref.get("uid", "")) for ref in refs]
        if all(owner is None for owner in owners):
            self._delete_object(res, obj, "Background")
            return
        foreground = [o for o in owners if o is not None
                      and "foregroundDeletion" in (o[1]["metadata"].get("finalizers") or [])
                      and o[1]["metadata"].get("deletionTimestamp")]
        if foreground and all(o is None or o in foreground for o in owners):
            self._delete_object(res, obj, "Foreground")

    def _delete_object(self, res: Resource, obj: Obj, policy: str) -> None:
        meta = obj["metadata"]
        if meta.get("deletionTimestamp"):
            return
        try:
            self.api.delete(res, meta.get("namespace", ""), meta["name"],
                            {"propagationPolicy": policy,
                             "preconditions": {"uid": meta["uid"]}})
        except errors.ApiError as error:
            if error.code not in (404, 409):
                raise

    def _orphan(self, owner_uid: str, deps: List[Entry]) -> None:
        for res, dep in deps:
            def strip(current: Obj) -> Optional[Obj]:
                refs = current["metadata"].get("ownerReferences") or []
                kept = [r for r in refs if r.get("uid") != owner_uid]
                if len(kept) == len(refs):
                    return None
                if kept:
                    current["metadata"]["ownerReferences"] = kept
                else:
                    current["metadata"].pop("ownerReferences", None)
                return current
            meta = dep["metadata"]
            self.api.update_with(res, meta.get("namespace", ""), meta["name"], strip)

    def _drop_finalizer(self, res: Resource, obj: Obj, finalizer: str) -> None:
        def drop(current: Obj) -> Optional[Obj]:
            finalizers = current["metadata"].get("finalizers") or []
            if finalizer not in finalizers:
                return None
            current["metadata"]["finalizers"] = [f for f in finalizers if f != finalizer]
            return current
        meta = obj["metadata"]
        self.api.update_with(res, meta.get("namespace", ""), meta["name"], drop)

    def _namespaces(self, everything: List[Entry]) -> None:
        terminating = {obj["metadata"]["name"] for res, obj in everything
                       if res.key == "/namespaces" and obj["metadata"].get("deletionTimestamp")}
        if not terminating:
            return
        remaining = {name: 0 for name in terminating}
        for res, obj in everything:
            namespace = obj["metadata"].get("namespace", "")
            if res.namespaced and namespace in terminating:
                remaining[namespace] += 1
                self._delete_object(res, obj, "Background")
        for name, count in remaining.items():
            if count == 0:
                self.api.finalize_namespace(name)
