"""Which optional Kubernetes fields a cluster of a given minor version understands.

A field being in a version's API schema does not mean the feature is on (alpha gates are off by
default), so the table holds the first minor where each field works out of the box: beta
(enabled by default) or GA. Sources: the KEPs' ``kep.yaml`` milestones
(``reference/kubernetes.md`` §6).
"""

from __future__ import annotations

from typing import Dict

POD_FAILURE_POLICY = "job.podFailurePolicy"
ON_POD_CONDITIONS_OPTIONAL = "job.podFailurePolicy.rules.onPodConditions optional"
BACKOFF_LIMIT_PER_INDEX = "job.backoffLimitPerIndex"
SUCCESS_POLICY = "job.successPolicy"

#: Feature → first Kubernetes minor (1.x) where it is on by default.
FEATURE_MIN_MINOR: Dict[str, int] = {
    POD_FAILURE_POLICY: 26,            # KEP-3329: beta 1.26, GA 1.31
    ON_POD_CONDITIONS_OPTIONAL: 29,    # the 1.27/1.28 schemas require it in every rule
    BACKOFF_LIMIT_PER_INDEX: 29,       # KEP-3850: beta 1.29, GA 1.33
    SUCCESS_POLICY: 31,                # KEP-3998: beta 1.31, GA 1.33
}


def supports(feature: str, minor: int) -> bool:
    """True when Kubernetes 1.``minor`` has ``feature`` on by default."""
    return minor >= FEATURE_MIN_MINOR[feature]
