"""The downward API: pod fields and container resources as strings, as a kubelet renders them.

Shared by environment variables (``valueFrom.fieldRef`` / ``resourceFieldRef``) and
``downwardAPI`` volumes. ``status.podIP`` is the address the pod really uses (``127.10.x.y``),
not the ``10.10.x.y`` the kubelet reports to the API server: a process that binds its pod IP
must get one it can bind.
"""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction
from typing import Any, Dict, Mapping, NamedTuple

from tests.kubelet.errors import PrepareError

_SUFFIXES = {
    "": 1, "m": Fraction(1, 1000), "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
    "P": 10**15, "E": 10**18, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40,
    "Pi": 2**50, "Ei": 2**60,
}
_QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$")
_SUBSCRIPT = re.compile(r"^metadata\.(labels|annotations)\['(.+)'\]$")


class PodContext(NamedTuple):
    """What the kubelet knows about a pod besides its manifest."""

    pod: Dict[str, Any]
    pod_ip: str                       # the address the pod binds (127.10.x.y)
    host_ip: str                      # the node's reported address
    allocatable: Mapping[str, str]    # the node's allocatable resources (limit defaults)


def parse_quantity(text: Any) -> Fraction:
    """A Kubernetes quantity (``500m``, ``16Gi``, ``1e3``, ``2``) as an exact number."""
    match = _QUANTITY.match(str(text).strip())
    if not match or match.group(2) not in _SUFFIXES:
        raise ValueError(f"not a quantity: {text!r}")
    return Fraction(match.group(1)) * _SUFFIXES[match.group(2)]


def _map_as_text(values: Mapping[str, str]) -> str:
    """Labels or annotations as a downward API file shows them: ``key="value"`` lines."""
    return "\n".join(f"{k}={json.dumps(values[k])}" for k in sorted(values))


def field_value(context: PodContext, path: str) -> str:
    """The value of ``fieldRef.fieldPath`` for this pod."""
    pod = context.pod
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    subscript = _SUBSCRIPT.match(path)
    if subscript:
        return str((meta.get(subscript.group(1)) or {}).get(subscript.group(2), ""))
    simple = {
        "metadata.name": meta.get("name", ""),
        "metadata.namespace": meta.get("namespace", ""),
        "metadata.uid": meta.get("uid", ""),
        "spec.nodeName": spec.get("nodeName", ""),
        "spec.serviceAccountName": spec.get("serviceAccountName", ""),
        "status.podIP": context.pod_ip,
        "status.podIPs": context.pod_ip,
        "status.hostIP": context.host_ip,
        "status.hostIPs": context.host_ip,
    }
    if path in simple:
        return str(simple[path] or "")
    if path in ("metadata.labels", "metadata.annotations"):
        return _map_as_text(meta.get(path.split(".")[1]) or {})
    raise PrepareError("CreateContainerConfigError", f"unsupported fieldPath {path!r}",
                       permanent=True)


def resource_value(context: PodContext, container_name: str, resource: str,
                   divisor: Any = None) -> str:
    """The value of ``resourceFieldRef`` (``limits.cpu``, ``requests.memory``, …).

    As a kubelet does: a missing request is the limit, a missing limit is the node's
    allocatable amount, the value is
    divided by ``divisor`` (default 1) and rounded up to an integer.
    """
    spec = context.pod.get("spec") or {}
    containers = list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
    container = next((c for c in containers if c.get("name") == container_name), None)
    if container is None or "." not in resource:
        raise PrepareError("CreateContainerConfigError",
                           f"resourceFieldRef {resource!r} of unknown container "
                           f"{container_name!r}", permanent=True)
    kind, name = resource.split(".", 1)
    amounts = (container.get("resources") or {}).get(kind) or {}
    amount = amounts.get(name)
    if amount is None and kind == "requests":
        amount = ((container.get("resources") or {}).get("limits") or {}).get(name)
    if amount is None and kind == "limits":
        amount = context.allocatable.get(name)
    if amount is None:
        amount = 0
    value = parse_quantity(amount) / parse_quantity(divisor or 1)
    return str(math.ceil(value))
