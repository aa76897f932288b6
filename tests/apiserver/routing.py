"""URL parsing: which resource, namespace, name and subresource a request path names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

from tests.apiserver import errors
from tests.apiserver.resources import Resource, Resources

NAMESPACE_SUBRESOURCES = ("status", "finalize")


@dataclass(frozen=True)
class Route:
    """A resource request: ``namespace`` None means all namespaces (or cluster scope)."""

    resource: Resource
    namespace: Optional[str]
    name: Optional[str]
    subresource: str
    legacy_watch: bool


def split_prefix(parts: List[str]) -> Optional[tuple]:
    """(group, version, rest) of ``/api/v1/...`` or ``/apis/{g}/{v}/...``, else None."""
    if len(parts) >= 2 and parts[0] == "api":
        return "", parts[1], parts[2:]
    if len(parts) >= 3 and parts[0] == "apis":
        return parts[1], parts[2], parts[3:]
    return None


def resolve(resources: Resources, group: str, version: str, rest: List[str]) -> Route:
    """Map the path segments after the group/version prefix to a :class:`Route` (or 404)."""
    legacy_watch = bool(rest) and rest[0] == "watch"
    if legacy_watch:
        rest = rest[1:]
    namespace: Optional[str] = None
    if len(rest) >= 3 and rest[0] == "namespaces" and rest[2] not in NAMESPACE_SUBRESOURCES:
        namespace, rest = rest[1], rest[2:]
    if not rest or len(rest) > 3:
        raise errors.resource_not_found()
    resource = resources.lookup(group, version, rest[0])
    if resource is None or (namespace is not None and not resource.namespaced):
        raise errors.resource_not_found()
    name = rest[1] if len(rest) >= 2 else None
    subresource = rest[2] if len(rest) == 3 else ""
    if subresource and subresource not in resource.subresources:
        raise errors.resource_not_found()
    return Route(resource, namespace, name, subresource, legacy_watch)
