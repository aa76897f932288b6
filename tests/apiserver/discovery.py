"""Discovery documents (``/version``, ``/api``, ``/apis``, ``/apis/{g}``, resource lists).

Derived from :class:`~tests.apiserver.resources.Resources`, in the legacy (unaggregated) JSON
form the official Python client and ``kubectl`` both accept.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from tests.apiserver.resources import VERBS, Resource, Resources

GIT_VERSION = "v1.29.0"

SUBRESOURCE_VERBS: Dict[str, List[str]] = {
    "status": ["get", "patch", "update"], "binding": ["create"], "log": ["get"],
    "eviction": ["create"], "finalize": ["update"],
}
SUBRESOURCE_KINDS: Dict[str, str] = {"binding": "Binding", "eviction": "Eviction"}


def version_info() -> Dict[str, str]:
    """``/version``."""
    major, minor = GIT_VERSION[1:].split(".")[:2]
    return {"major": major, "minor": minor, "gitVersion": GIT_VERSION,
            "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
            "buildDate": "2023-12-13T08:43:21Z", "goVersion": "go1.21.5", "compiler": "gc",
            "platform": "linux/amd64"}


def core_versions() -> Dict[str, Any]:
    """``/api``."""
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                            "serverAddress": "127.0.0.1"}]}


def _group(name: str, versions: List[str]) -> Dict[str, Any]:
    entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": entries, "preferredVersion": entries[0]}


def group_list(resources: Resources) -> Dict[str, Any]:
    """``/apis``."""
    return {"kind": "APIGroupList", "apiVersion": "v1",
            "groups": [_group(g, v) for g, v in resources.groups().items()]}


def group(resources: Resources, name: str) -> Optional[Dict[str, Any]]:
    """``/apis/{group}``, or None when the group is not served."""
    versions = resources.groups().get(name)
    if not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group(name, versions)}


def _entry(row: Resource) -> Dict[str, Any]:
    entry: Dict[str, Any] = {"name": row.plural, "singularName": row.singular,
                             "namespaced": row.namespaced, "kind": row.kind, "verbs": VERBS}
    if row.short_names:
        entry["shortNames"] = list(row.short_names)
    return entry


def resource_list(resources: Resources, group_name: str,
                  version: str) -> Optional[Dict[str, Any]]:
    """``/api/v1`` or ``/apis/{group}/{version}``, or None when nothing is served there."""
    rows = sorted((r for r in resources.all()
                   if r.group == group_name and r.version == version), key=lambda r: r.plural)
    if not rows:
        return None
    entries: List[Dict[str, Any]] = []
    for row in rows:
        entries.append(_entry(row))
        for sub in row.subresources:
            entries.append({"name": f"{row.plural}/{sub}", "singularName": "",
                            "namespaced": row.namespaced,
                            "kind": SUBRESOURCE_KINDS.get(sub, row.kind),
                            "verbs": SUBRESOURCE_VERBS.get(sub, ["get"])})
    return {"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": f"{group_name}/{version}" if group_name else version,
            "resources": entries}
