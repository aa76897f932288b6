"""A command that looks again and again (``logs -f``, ``sbatch --wait``, the console) keeps
no database connection per look: each is closed when the look ends, not when the garbage
collector next runs a full pass (a connection sits in a reference cycle; ``logs -f`` held
some 70 open descriptors of jobs.db after 45 s)."""

from __future__ import annotations

import gc
import os
import time
from typing import Callable, Dict, Iterator, List

import pytest

from sbatch_k8s.backends import open_backend
from sbatch_k8s.backends.local.selection import cancel_targets, scancel_records
from sbatch_k8s.inspection.job_lookup import find_job, has_ended
from tests.local.harness import LocalSlurm, job_id_of


def _open_databases() -> int:
    """This process's open descriptors of a ``jobs.db``."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").endswith("jobs.db")
        except OSError:     # the listing's own descriptor, closed meanwhile
            pass
    return count


@pytest.fixture
def no_collector() -> Iterator[None]:
    """The garbage collector off: only explicit closes free a connection."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_every_look_closes_its_connection(slurm: LocalSlurm, no_collector: None) -> None:
    """Each read and action of the local backend, done 20 times, leaves no descriptor
    open."""
    job = job_id_of(slurm.run("sbatch", "--hold", "--wrap", "true").stdout)
    backend = open_backend(slurm.env)
    record = find_job(backend, str(job))
    assert record is not None
    now = int(time.time())
    looks: Dict[str, Callable[[], object]] = {
        "find_job": lambda: find_job(backend, str(job)),
        "has_ended": lambda: has_ended(backend, record),
        "job_records": lambda: backend.job_records(True, now),
        "accounting_records": lambda: backend.accounting_records(0, now + 60, [job]),
        "running_steps": lambda: backend.running_steps(record),
        "partition_nodes": lambda: backend.cluster.partition_nodes(),
        "known": lambda: backend.lookup.known(job),
        "hold": lambda: backend.set_hold(job, "JobHeldUser"),
        "scancel_records": lambda: scancel_records(slurm.env),
        "cancel_targets": lambda: cancel_targets(slurm.env, job, None),
        "requeue": lambda: backend.requeue(job),
        "cancel": lambda: backend.cancel(job),      # then already ended, 19 times
    }
    left: List[str] = []
    for name, look in looks.items():
        before = _open_databases()
        for _ in range(20):
            look()
        if _open_databases() != before:
            left.append(f"{name}: {_open_databases() - before}")
    assert left == []
