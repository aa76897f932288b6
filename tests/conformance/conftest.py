"""The conformance suite runs only with ``pytest --with-real-slurm``: it starts the real Slurm
22.05 of ``../shared/tools/real-slurm`` (or finds it running) and compares our commands with
its commands, case by case."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Iterator

import pytest

from tests.conformance.sides import OurSlurm, RealSlurm, start_real_slurm

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    if config.getoption("--with-real-slurm"):
        return
    skip = pytest.mark.skip(reason="conformance against real Slurm: opt in with "
                                   "pytest --with-real-slurm")
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def real(tmp_path_factory: pytest.TempPathFactory) -> RealSlurm:
    """The real Slurm (started by start.sh if needed; never stopped: others use it too)."""
    try:
        conf = start_real_slurm()
    except RuntimeError as e:
        pytest.skip(f"real Slurm cannot run here: {e}")
    return RealSlurm(tmp_path_factory.mktemp("real"), conf)


@pytest.fixture(scope="session")
def ours(tmp_path_factory: pytest.TempPathFactory, real: RealSlurm) -> Iterator[OurSlurm]:
    """Our local backend, its job ids seeded next to real Slurm's (same number of digits,
    so column widths compare)."""
    side = OurSlurm(tmp_path_factory.mktemp("ours"))
    side.run("squeue")  # creates the job database
    last = real.run("sacct", "-a", "-X", "-n", "-P", "-o", "JobIDRaw",
                    "-S", "2000-01-01").stdout.split()
    first = max([int(x) for x in last if x.isdigit()] + [100]) + 1
    db = Path(side.local.state) / "jobs.db"
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE counters SET value=? WHERE name='job_id'", (first - 1,))
    yield side
    side.cleanup()
