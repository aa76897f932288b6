"""Accounting on the Kubernetes backend (emulated API server, test kubelet): the same job as
the local backend's accounting test — sstat sees the running step's usage that node 0
published in the job's record, sacct and seff read the usage node 0 reported at the end."""

from __future__ import annotations

from typing import Any

import pytest

from tests.kube.harness import KubeSlurm
from tests.local.test_accounting import usage_story
# Fixtures of other modules (taken by name through ``request``):
from tests.kube.test_dependencies import account_kube  # noqa: F401

pytestmark = pytest.mark.slow


def test_usage_live_in_sstat_then_in_sacct_and_seff(request: pytest.FixtureRequest,
                                                    kubelet: Any) -> None:
    kube: KubeSlurm = request.getfixturevalue("account_kube")
    usage_story(kube)
