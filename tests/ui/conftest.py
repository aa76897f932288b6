"""Fixtures of the console's suite: a private local cluster and the console serving it."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from tests.local.harness import LocalSlurm
from tests.ui.harness import RunningConsole


@pytest.fixture
def slurm(tmp_path: Path) -> Iterator[LocalSlurm]:
    """A private local cluster (default configuration)."""
    cluster = LocalSlurm(tmp_path)
    yield cluster
    cluster.cleanup()


@pytest.fixture
def console(slurm: LocalSlurm) -> Iterator[RunningConsole]:
    """``sbatch-k8s ui`` on that cluster, started in its working directory."""
    running = RunningConsole(slurm.env, slurm.work, "--interval", "0.5")
    yield running
    running.stop()
