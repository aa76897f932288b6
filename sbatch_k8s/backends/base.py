"""The backend seam: the few verbs every Slurm command needs from wherever jobs run.

A command never imports a backend: it asks :func:`sbatch_k8s.backends.open_backend` for the
one chosen for this environment and talks to it through :class:`Backend`. Two backends exist:
``local`` (jobs run on this machine, state in SQLite) and ``kubernetes`` (jobs are workloads
on a cluster, state in the API server). Records are Slurm's (:mod:`parsers.records`), so the
reports print the same way whatever answered them.
"""

from __future__ import annotations

import abc
from typing import List, Optional

from parsers.jobspec import JobSpec, SubmitOptions
from parsers.records import JobRecord

#: Outcomes of :meth:`Backend.cancel` and :meth:`Backend.set_hold`, per job.
DONE, FINISHED, UNKNOWN, REFUSED = "done", "finished", "unknown", "refused"


class Backend(abc.ABC):
    """Where jobs run and what is known about them."""

    #: ``local`` or ``kubernetes``.
    name: str = ""

    @abc.abstractmethod
    def describe(self) -> str:
        """One line for ``-v``: the backend and what it talks to (context, namespace…)."""

    @abc.abstractmethod
    def submit(self, job: JobSpec, submit: SubmitOptions) -> int:
        """Submit a checked job; print what sbatch prints; sbatch's exit code (the job's
        with ``--wait``)."""

    @abc.abstractmethod
    def job_records(self, include_finished: bool, now: int) -> List[JobRecord]:
        """Jobs squeue and scontrol show: active ones, and recently finished ones when
        ``include_finished``."""

    @abc.abstractmethod
    def accounting_records(self, start: int, end: int,
                           job_ids: Optional[List[int]]) -> List[JobRecord]:
        """Jobs sacct shows: those active in ``[start, end)`` or named (with their steps)."""

    @abc.abstractmethod
    def cancel(self, job_id: int, uid: int, signum: Optional[int] = None,
               batch: bool = False, full: bool = False, step: Optional[int] = None) -> str:
        """Cancel (or with ``signum`` signal) one job or step: one of the outcomes above."""

    @abc.abstractmethod
    def set_hold(self, job_id: int, hold: bool, uid: int) -> str:
        """``scontrol hold`` (``hold``) or ``release`` one pending job: one of the outcomes."""
