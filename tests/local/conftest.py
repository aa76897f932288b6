"""Fixtures of the local-backend suite (real processes, real sockets)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from tests.local.harness import LocalSlurm


@pytest.fixture
def slurm(tmp_path: Path) -> Iterator[LocalSlurm]:
    """A private local cluster (default configuration)."""
    cluster = LocalSlurm(tmp_path)
    yield cluster
    cluster.cleanup()


@pytest.fixture
def gpu_slurm(tmp_path: Path) -> Iterator[LocalSlurm]:
    """A private local cluster offering 4 (pretend) GPUs."""
    cluster = LocalSlurm(tmp_path, config="[local]\ngpus = 4\n")
    yield cluster
    cluster.cleanup()
