"""Resource quantities (``500m``, ``2``, ``1Gi``, ``1e3``) as numbers, for the scheduler."""

from __future__ import annotations

import re
from typing import Any, Dict

SUFFIXES: Dict[str, float] = {
    "n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
    "P": 1e15, "E": 1e18, "Ki": 2.0 ** 10, "Mi": 2.0 ** 20, "Gi": 2.0 ** 30, "Ti": 2.0 ** 40,
    "Pi": 2.0 ** 50, "Ei": 2.0 ** 60,
}
_QUANTITY = re.compile(r"^([+-]?[0-9.]+)([eE][+-]?[0-9]+|[a-zA-Z]*)$")


def parse_quantity(value: Any) -> float:
    """The numeric value of a quantity; ValueError when malformed."""
    if isinstance(value, (int, float)):
        return float(value)
    found = _QUANTITY.match(str(value).strip())
    if not found:
        raise ValueError(f"quantities must match the regular expression "
                         f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {value!r}")
    number, suffix = found.groups()
    if suffix[:1] in ("e", "E"):
        return float(number + suffix)
    if suffix not in SUFFIXES:
        raise ValueError(f"unknown quantity suffix in {value!r}")
    return float(number) * SUFFIXES[suffix]


def pod_requests(spec: Dict[str, Any]) -> Dict[str, float]:
    """Effective requests: containers summed, at least each init container, plus overhead."""
    total: Dict[str, float] = {}
    for container in spec.get("containers") or []:
        for name, value in ((container.get("resources") or {}).get("requests") or {}).items():
            total[name] = total.get(name, 0.0) + parse_quantity(value)
    for container in spec.get("initContainers") or []:
        for name, value in ((container.get("resources") or {}).get("requests") or {}).items():
            total[name] = max(total.get(name, 0.0), parse_quantity(value))
    for name, value in (spec.get("overhead") or {}).items():
        total[name] = total.get(name, 0.0) + parse_quantity(value)
    return total
