"""In-memory stand-ins for the API server, for the kubelet's server-less tests.

:class:`FakeApi` answers the calls a pod worker makes (objects from dicts, status patches
recorded in order, deletions recorded) — the kubelet's side of the API, nothing more.
"""

from __future__ import annotations

import base64
import threading
from typing import Any, Dict, List, Optional, Tuple


def secret(name: str, **values: str) -> Dict[str, Any]:
    """A Secret manifest with ``values`` base64-encoded, as the server returns it."""
    return {"metadata": {"name": name},
            "data": {k: base64.b64encode(v.encode()).decode() for k, v in values.items()}}


class FakeApi:
    """ConfigMaps, Secrets and tokens from dicts; pod writes recorded."""

    def __init__(self, config_maps: Optional[Dict[str, Dict[str, Any]]] = None,
                 secrets: Optional[Dict[str, Dict[str, Any]]] = None) -> None:
        self.config_maps = dict(config_maps or {})
        self.secrets = dict(secrets or {})
        self.statuses: List[Dict[str, Any]] = []
        self.deleted: List[Tuple[str, str, str]] = []
        self.events: List[Dict[str, Any]] = []
        self.changed = threading.Condition()

    def config_map(self, namespace: str, name: str) -> Optional[Dict[str, Any]]:
        return self.config_maps.get(name)

    def secret(self, namespace: str, name: str) -> Optional[Dict[str, Any]]:
        return self.secrets.get(name)

    def service_account_token(self, namespace: str, service_account: str,
                              audience: Optional[str], expiration_s: int,
                              pod: Optional[Dict[str, Any]] = None) -> Optional[str]:
        return f"token-for-{namespace}-{service_account}"

    def patch_pod_status(self, namespace: str, name: str, status: Dict[str, Any]) -> bool:
        with self.changed:
            self.statuses.append(status)
            self.changed.notify_all()
        return True

    def delete_pod_now(self, namespace: str, name: str, uid: str) -> None:
        with self.changed:
            self.deleted.append((namespace, name, uid))
            self.changed.notify_all()

    def create_event(self, event: Dict[str, Any]) -> None:
        self.events.append(event)

    def wait_for(self, predicate: Any, timeout_s: float = 60.0) -> Any:
        """Wait until ``predicate(self)`` is truthy; its value (AssertionError on timeout)."""
        with self.changed:
            value = self.changed.wait_for(lambda: predicate(self), timeout_s)
        assert value, f"timed out; statuses: {[s.get('phase') for s in self.statuses]}"
        return value
