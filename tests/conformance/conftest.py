"""The conformance suite runs only with ``pytest --with-real-slurm``: it starts the real Slurm
22.05 of ``../shared/tools/real-slurm`` (or finds it running) and compares our commands with
its commands, case by case."""

from __future__ import annotations

import os
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


def first_job_id(real: RealSlurm) -> int:
    """Our first job id: ``$CONFORMANCE_FIRST_JOB_ID`` (1 plays a freshly purged cluster on
    our side), else above every id real Slurm has used and at least 101. The normalisation
    does not depend on the ids' widths; apart ranges only keep one side's id of one job from
    being the other side's id of another job in the same case."""
    chosen = os.environ.get("CONFORMANCE_FIRST_JOB_ID", "")
    if chosen:
        return int(chosen)
    used = real.run("sacct", "-a", "-X", "-n", "-P", "-o", "JobIDRaw",
                    "-S", "2000-01-01").stdout.split()
    return max([int(x) for x in used if x.isdigit()] + [100]) + 1


@pytest.fixture(scope="session")
def ours(tmp_path_factory: pytest.TempPathFactory, real: RealSlurm) -> Iterator[OurSlurm]:
    """Our local backend, its job ids starting at :func:`first_job_id`."""
    side = OurSlurm(tmp_path_factory.mktemp("ours"))
    side.run("squeue")  # creates the job database
    first = first_job_id(real)
    db = Path(side.local.state) / "jobs.db"
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE counters SET value=? WHERE name='job_id'", (first - 1,))
    yield side
    side.cleanup()
