"""Fixtures of the platform-mode tests: one scratch cluster per module (namespaces need
root and ``unshare``)."""

from __future__ import annotations

import os
import shutil
from typing import Iterator

import pytest

from tests.platform.harness import PlatformCluster


@pytest.fixture(scope="module")
def cluster() -> Iterator[PlatformCluster]:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("platform-mode containers need root and unshare (mount/UTS namespaces)")
    made = PlatformCluster()
    try:
        yield made
    finally:
        made.close()
