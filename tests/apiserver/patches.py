"""PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902), strategic merge patch.

Strategic merge is approximated the way most clients rely on it: maps merge recursively, and
lists whose items are objects merge by their patch key (``name`` for containers, volumes, env,
ports...; ``type`` for conditions; ``mountPath`` for volumeMounts...). ``$patch: delete`` on an
item removes it and ``$patch: replace`` on a map replaces it; other lists are replaced.
"""

from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional

from tests.apiserver import errors

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"

# Merge keys of lists of objects, by field name (the x-kubernetes-patch-merge-key of core types).
MERGE_KEYS: Dict[str, str] = {
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name",
    "volumes": "name", "env": "name", "ports": "containerPort", "volumeMounts": "mountPath",
    "volumeDevices": "devicePath", "conditions": "type", "imagePullSecrets": "name",
    "hostAliases": "ip", "resourceClaims": "name", "schedulingGates": "name",
    "ownerReferences": "uid", "containerStatuses": "name", "initContainerStatuses": "name",
    "topologySpreadConstraints": "topologyKey", "tolerations": "key", "taints": "key",
    "replicatedJobs": "name", "addresses": "type",
}


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: maps merge, ``null`` deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def strategic_merge(target: Any, patch: Any, field: str = "") -> Any:
    """Strategic merge patch (approximation described in the module docstring)."""
    if isinstance(patch, dict):
        if patch.get("$patch") == "replace":
            return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
        result = dict(target) if isinstance(target, dict) else {}
        for key, value in patch.items():
            if key.startswith("$"):
                continue
            if value is None:
                result.pop(key, None)
            else:
                result[key] = strategic_merge(result.get(key), value, key)
        return result
    if isinstance(patch, list) and field in MERGE_KEYS and isinstance(target, list) and \
            all(isinstance(i, dict) for i in patch + target):
        return _merge_list(target, patch, MERGE_KEYS[field])
    return copy.deepcopy(patch)


def _merge_list(target: List[Any], patch: List[Any], key: str) -> List[Any]:
    merged = [copy.deepcopy(i) for i in target]
    for item in patch:
        index = next((i for i, old in enumerate(merged) if old.get(key) == item.get(key)), None)
        if item.get("$patch") == "delete":
            if index is not None:
                merged.pop(index)
        elif index is None:
            merged.append({k: v for k, v in item.items() if k != "$patch"})
        else:
            merged[index] = strategic_merge(merged[index], item)
    return merged


def _pointer(path: str) -> List[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise errors.ApiError(422, "Invalid", f"invalid JSON pointer: {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _parent(doc: Any, parts: List[str]) -> Any:
    node = doc
    for part in parts[:-1]:
        node = _child(node, part)
    return node


def _child(node: Any, part: str) -> Any:
    try:
        return node[int(part)] if isinstance(node, list) else node[part]
    except (KeyError, IndexError, ValueError, TypeError):
        raise _missing(part) from None


def _missing(part: str) -> errors.ApiError:
    return errors.ApiError(422, "Invalid",
                           f"the server rejected our request due to an error in our request: "
                           f"jsonpatch: path component {part!r} not found")


def _add(doc: Any, parts: List[str], value: Any) -> Any:
    if not parts:
        return value
    parent, last = _parent(doc, parts), parts[-1]
    if isinstance(parent, list):
        index = len(parent) if last == "-" else int(last)
        if not 0 <= index <= len(parent):
            raise _missing(last)
        parent.insert(index, value)
    elif isinstance(parent, dict):
        parent[last] = value
    else:
        raise _missing(last)
    return doc


def _remove(doc: Any, parts: List[str]) -> Any:
    parent, last = _parent(doc, parts), parts[-1]
    _child(parent, last)
    if isinstance(parent, list):
        return parent.pop(int(last))
    return parent.pop(last)


def json_patch(doc: Any, operations: Any) -> Any:
    """RFC 6902 (add, remove, replace, move, copy, test) on a copy of ``doc``."""
    if not isinstance(operations, list):
        raise errors.bad_request("json: cannot unmarshal object into Go value of type "
                                 "jsonpatch.Patch")
    doc = copy.deepcopy(doc)
    for op in operations:
        name, parts = op.get("op"), _pointer(op.get("path", ""))
        if name == "add":
            doc = _add(doc, parts, copy.deepcopy(op.get("value")))
        elif name == "remove":
            _remove(doc, parts)
        elif name == "replace":
            _remove(doc, parts)
            doc = _add(doc, parts, copy.deepcopy(op.get("value")))
        elif name in ("move", "copy"):
            source = _pointer(op.get("from", ""))
            value = _remove(doc, source) if name == "move" else copy.deepcopy(
                _child(_parent(doc, source), source[-1]) if source else doc)
            doc = _add(doc, parts, value)
        elif name == "test":
            current = _child(_parent(doc, parts), parts[-1]) if parts else doc
            if current != op.get("value"):
                raise errors.ApiError(422, "Invalid",
                                      f"the server rejected our request due to an error in "
                                      f"our request: testing value {op.get('path')} failed")
        else:
            raise errors.bad_request(f"Unexpected kind: {name}")
    return doc


def apply_patch(doc: Any, body: Any, content_type: str) -> Any:
    """Apply a PATCH body of the given content type (without parameters) to ``doc``."""
    if content_type == JSON_PATCH:
        return json_patch(doc, body)
    if not isinstance(body, dict):
        raise errors.bad_request("json: cannot unmarshal array into Go value of type "
                                 "map[string]interface {}")
    if content_type == MERGE:
        return merge_patch(doc, body)
    if content_type in (STRATEGIC, APPLY):
        return strategic_merge(doc, body)
    raise errors.unsupported_media_type(content_type)


def strategic_supported(custom: bool, content_type: Optional[str]) -> bool:
    """Custom resources refuse strategic merge patch (415), as the real server does."""
    return not (custom and content_type == STRATEGIC)
