"""Why a workload is created suspended: ``--hold``, ``--dependency``, ``--begin``.

A job that may not start yet is created with its workload suspended (no pods), as slurmctld
keeps it pending. Two kinds of reasons keep it so, and each leaves its own mark on the
workload, so whoever may resume it (a command's reconcile pass, node 0's runtime of the job
it waits for, the controller; :mod:`sbatch_k8s.runtime.release`) knows what still holds it:

* a hold (``--hold``, ``scontrol hold``): annotation ``sbatch-k8s.io/hold``, lifted only by
  ``scontrol release``;
* gates (``--dependency``, ``--begin``): annotations ``sbatch-k8s.io/dependency`` (the
  expression as slurmctld prints it) and ``sbatch-k8s.io/begin`` (the moment, local time as
  ``sbatch-k8s.io/submit-time``), removed when the job becomes eligible.

The workload is resumed once it carries neither. Pure: ``--begin`` is resolved against the
submit time the caller gives, so a begin time already past holds nothing.
"""

from __future__ import annotations

import datetime
from typing import Dict, Optional

from parsers.jobspec import JobSpec
from translators.metadata import BEGIN, DEPENDENCY


def begin_moment(job: JobSpec, submit_time: str) -> Optional[datetime.datetime]:
    """The moment ``--begin`` names (naive local time), None without ``--begin``."""
    if job.begin is None:
        return None
    from parsers.values.begin import resolve_begin

    return resolve_begin(job.begin, datetime.datetime.fromisoformat(submit_time))


def gate_annotations(job: JobSpec, submit_time: str) -> Dict[str, str]:
    """The workload's gate annotations: the dependency and a begin time still ahead."""
    gates: Dict[str, str] = {}
    if job.dependency is not None and job.dependency.clauses:
        gates[DEPENDENCY] = job.dependency.format()
    begin = begin_moment(job, submit_time)
    if begin is not None and begin > datetime.datetime.fromisoformat(submit_time):
        gates[BEGIN] = begin.isoformat(timespec="seconds")
    return gates


def starts_suspended(job: JobSpec, submit_time: str) -> bool:
    """Whether the workload is created suspended: held, or gated."""
    return job.hold or bool(gate_annotations(job, submit_time))
