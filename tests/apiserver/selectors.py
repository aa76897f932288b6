"""Label and field selectors, parsed and matched as the real API server does.

Label selectors: ``a=b``, ``a==b``, ``a!=b``, ``a in (x,y)``, ``a notin (x,y)``, ``a``, ``!a``,
comma-separated (AND). Field selectors: ``path=value``, ``path==value``, ``path!=value`` on the
fields each resource supports (:data:`FIELDS`); others are rejected with the real message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from tests.apiserver import errors

Obj = Dict[str, Any]

# Field-selector paths the real server accepts, beyond metadata.name and metadata.namespace.
FIELDS: Dict[str, Tuple[str, ...]] = {
    "/pods": ("spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
              "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP",
              "status.nominatedNodeName"),
    "/nodes": ("spec.unschedulable",),
    "/secrets": ("type",),
    "/namespaces": ("status.phase",),
    "/events": ("involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                "involvedObject.uid", "involvedObject.apiVersion",
                "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason",
                "reportingComponent", "source", "type"),
    "batch/jobs": ("status.successful",),
}


@dataclass(frozen=True)
class Requirement:
    """One label term: ``key``, operator (``=``, ``!=``, ``in``, ``notin``, ``exists``, ``!``)."""

    key: str
    op: str
    values: Tuple[str, ...] = ()

    def matches(self, labels: Dict[str, str]) -> bool:
        """True when ``labels`` satisfy the term."""
        present = self.key in labels
        value = labels.get(self.key)
        if self.op == "exists":
            return present
        if self.op == "!":
            return not present
        if self.op in ("=", "in"):
            return present and value in self.values
        return not present or value not in self.values  # != and notin


_TERM = re.compile(r"\s*(!?)\s*([A-Za-z0-9._/-]+)\s*(?:(==|=|!=)\s*([A-Za-z0-9._-]*)|"
                   r"\s(in|notin)\s*\(([^)]*)\))?\s*$")


def _split_terms(text: str) -> List[str]:
    """Split on commas outside parentheses."""
    terms, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += char == "("
        depth -= char == ")"
        if char == "," and depth == 0:
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return [t for t in terms if t.strip()]


def parse_labels(text: Optional[str]) -> List[Requirement]:
    """Parse a ``labelSelector``; 400 BadRequest on a malformed one."""
    requirements: List[Requirement] = []
    for term in _split_terms(text or ""):
        found = _TERM.match(term)
        if not found or (found.group(1) and (found.group(3) or found.group(5))):
            raise errors.bad_request(f"unable to parse requirement: found '{term.strip()}', "
                                     f"expected: in, notin, =, ==, !=, gt, lt")
        neg, key, op, value, set_op, set_values = found.groups()
        if set_op:
            values = tuple(v.strip() for v in set_values.split(",") if v.strip())
            requirements.append(Requirement(key, set_op, values))
        elif op:
            requirements.append(Requirement(key, "!=" if op == "!=" else "=", (value,)))
        else:
            requirements.append(Requirement(key, "!" if neg else "exists"))
    return requirements


def match_selector_dict(selector: Optional[Obj], labels: Dict[str, str]) -> bool:
    """Match a ``LabelSelector`` object (``matchLabels`` + ``matchExpressions``)."""
    if not selector:
        return True
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    ops = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}
    for expr in selector.get("matchExpressions") or []:
        term = Requirement(expr["key"], ops[expr["operator"]], tuple(expr.get("values") or ()))
        if not term.matches(labels):
            return False
    return True


def field_value(obj: Obj, path: str) -> str:
    """The string form of a dotted field as field selectors compare it ('' when absent)."""
    current: Any = obj
    for part in path.split("."):
        current = current.get(part) if isinstance(current, dict) else None
    if isinstance(current, bool):
        return "true" if current else "false"
    if path == "source" and isinstance(current, dict):
        return str(current.get("component", ""))
    return "" if current is None else str(current)


def parse_fields(text: Optional[str], key: str, kind: str,
                 api_version: str) -> List[Tuple[str, str, str]]:
    """Parse a ``fieldSelector`` into ``(path, op, value)``; 400 on unsupported fields."""
    allowed = ("metadata.name", "metadata.namespace") + FIELDS.get(key, ())
    parsed: List[Tuple[str, str, str]] = []
    for term in _split_terms(text or ""):
        found = re.match(r"\s*([^=!\s]+)\s*(==|=|!=)\s*(.*?)\s*$", term)
        if not found:
            raise errors.bad_request(f"invalid selector: '{text}'; can't understand '{term}'")
        path, op, value = found.groups()
        if path not in allowed:
            raise errors.bad_request(
                f'field label not supported: {path}' if key.startswith("/") else
                f'"{path}" is not a known field selector: only "metadata.name", '
                f'"metadata.namespace"')
        parsed.append((path, "!=" if op == "!=" else "=", value))
    return parsed


def make_filter(label_text: Optional[str], field_text: Optional[str], key: str, kind: str,
                api_version: str) -> Callable[[Obj], bool]:
    """One predicate for both selectors of a list or watch request."""
    labels = parse_labels(label_text)
    fields = parse_fields(field_text, key, kind, api_version)

    def matches(obj: Obj) -> bool:
        obj_labels = obj.get("metadata", {}).get("labels") or {}
        if not all(r.matches(obj_labels) for r in labels):
            return False
        for path, op, value in fields:
            if (field_value(obj, path) == value) != (op == "="):
                return False
        return True
    return matches
