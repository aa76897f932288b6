"""A Job's status being rebuilt by the controller: counters, fields and conditions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional

from tests.apiserver import metadata


@dataclass
class JobStatus:
    """Wraps the status dict; ``None`` values remove fields, as omitempty does."""

    data: Dict[str, Any]

    def get(self, name: str) -> Any:
        """A field's value (None when absent)."""
        return self.data.get(name)

    def set(self, name: str, value: Any) -> None:
        """Set a field; None removes it."""
        if value is None:
            self.data.pop(name, None)
        else:
            self.data[name] = value

    def bump(self, name: str) -> None:
        """Add one to a counter."""
        self.data[name] = int(self.data.get(name) or 0) + 1

    def has_condition(self, kind: str, status: str) -> bool:
        """True when condition ``kind`` has ``status``."""
        return any(c.get("type") == kind and c.get("status") == status
                   for c in self.data.get("conditions") or [])

    def condition(self, kind: str, status: str, reason: str, message: str) -> None:
        """Set a condition; probe and transition times move when it changes."""
        conditions = self.data.setdefault("conditions", [])
        stamp = metadata.rfc3339()
        for existing in conditions:
            if existing.get("type") == kind:
                if (existing.get("status"), existing.get("reason"),
                        existing.get("message")) != (status, reason, message):
                    existing.update(status=status, reason=reason, message=message,
                                    lastProbeTime=stamp, lastTransitionTime=stamp)
                return
        conditions.append({"type": kind, "status": status, "reason": reason,
                           "message": message, "lastProbeTime": stamp,
                           "lastTransitionTime": stamp})

    def finished(self) -> bool:
        """True once Complete or Failed is True."""
        return self.has_condition("Complete", "True") or self.has_condition("Failed", "True")

    def finished_at(self) -> Optional[str]:
        """When the Job finished (completionTime, or the Failed condition's transition)."""
        if self.has_condition("Complete", "True"):
            return self.data.get("completionTime")
        for existing in self.data.get("conditions") or []:
            if existing.get("type") == "Failed" and existing.get("status") == "True":
                return existing.get("lastTransitionTime")
        return None
