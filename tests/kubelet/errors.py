"""Why a pod cannot start, in a kubelet's words.

A kubelet that cannot prepare a pod keeps it ``Pending`` and retries (a ConfigMap may be
created later): :class:`PrepareError` carries the waiting reason a kubelet reports
(``CreateContainerConfigError``, ``FailedMount``) and whether retrying can ever help. The
test kubelet fails the pod at once when it cannot (a volume type it does not emulate), so
that a test sees a clear message instead of a pod pending forever.
"""

from __future__ import annotations


class PrepareError(Exception):
    """A pod's environment or volumes cannot be made ready (yet)."""

    def __init__(self, reason: str, message: str, permanent: bool = False) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.permanent = permanent
