"""Leader election through a ``coordination.k8s.io/v1`` Lease, as client-go's leaderelection
does it, reduced: one holder at a time acts; the others stand by.

A candidate takes the Lease when it does not exist (create), when it already holds it, or
when its holder stopped renewing (``renewTime`` older than ``leaseDurationSeconds``); every
write names the resourceVersion it read, so two candidates never both win (409: the other
did). The holder renews every :data:`RENEW_EVERY_S`; a holder that cannot renew within the
lease's duration stops acting before anyone else may take over. On a clean stop the holder
gives the Lease up (empty ``holderIdentity``) so a standby takes over at once.
"""

from __future__ import annotations

import datetime
import time
from typing import Any, Dict, Optional

from sbatch_k8s.backends.kubernetes.api.client import KubeClient, KubeError

LEASE_SECONDS = 15
RENEW_EVERY_S = 5.0


def _micro_time(moment: float) -> str:
    stamp = datetime.datetime.fromtimestamp(moment, datetime.timezone.utc)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse_time(text: Optional[str]) -> float:
    if not text:
        return 0.0
    clean = text.rstrip("Z").split(".")[0]
    stamp = datetime.datetime.strptime(clean, "%Y-%m-%dT%H:%M:%S")
    return stamp.replace(tzinfo=datetime.timezone.utc).timestamp()


class LeaseElector:
    """One candidate for the Lease ``name`` in ``namespace``."""

    def __init__(self, client: KubeClient, namespace: str, name: str, identity: str,
                 lease_s: int = LEASE_SECONDS) -> None:
        self.client = client
        self.path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}"
        self.collection = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
        self.name = name
        self.identity = identity
        self.lease_s = lease_s
        #: When this candidate last renewed (monotonic); 0: it does not hold the Lease.
        self.renewed_at = 0.0

    @property
    def leading(self) -> bool:
        """Whether this candidate holds the Lease and renewed it recently enough to act."""
        return self.renewed_at > 0 and time.monotonic() - self.renewed_at < self.lease_s

    def _spec(self, current: Dict[str, Any], now: float) -> Dict[str, Any]:
        spec = dict(current.get("spec") or {})
        if spec.get("holderIdentity") != self.identity:
            spec["acquireTime"] = _micro_time(now)
            spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + \
                (1 if spec.get("holderIdentity") else 0)
        spec.update(holderIdentity=self.identity, leaseDurationSeconds=self.lease_s,
                    renewTime=_micro_time(now))
        return spec

    def try_acquire_or_renew(self) -> bool:
        """One attempt; whether this candidate now leads."""
        now = time.time()
        started = time.monotonic()
        try:
            current = self.client.request("GET", self.path, retry=False)
        except KubeError as e:
            if e.status != 404:
                return self._lost()
            body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": self.name}, "spec": self._spec({}, now)}
            try:
                self.client.request("POST", self.collection, body=body, retry=False)
            except KubeError:
                return self._lost()
            self.renewed_at = started
            return True
        spec = current.get("spec") or {}
        holder = spec.get("holderIdentity")
        expired = _parse_time(spec.get("renewTime")) + \
            int(spec.get("leaseDurationSeconds") or self.lease_s) < now
        if holder and holder != self.identity and not expired:
            self.renewed_at = 0.0
            return False
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": current["metadata"], "spec": self._spec(current, now)}
        try:
            self.client.request("PUT", self.path, body=body, retry=False)
        except KubeError:
            return self._lost()
        self.renewed_at = started
        return True

    def _lost(self) -> bool:
        """A failed attempt: still leading until the last renewal's lease runs out."""
        if not self.leading:
            self.renewed_at = 0.0
        return self.leading

    def release(self) -> None:
        """Give the Lease up (best effort)."""
        if not self.renewed_at:
            return
        self.renewed_at = 0.0
        try:
            current = self.client.request("GET", self.path, retry=False)
            if (current.get("spec") or {}).get("holderIdentity") != self.identity:
                return
            spec = dict(current["spec"], holderIdentity="")
            self.client.request("PUT", self.path, retry=False, body={
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": current["metadata"], "spec": spec})
        except KubeError:
            pass
