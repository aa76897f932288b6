"""The backend seam: the few verbs every Slurm command needs from wherever jobs run.

A command never imports a backend: it asks :func:`sbatch_k8s.backends.open_backend` for the
one chosen for this environment and talks to it through :class:`Backend`. Two backends exist:
``local`` (jobs run on this machine, state in SQLite) and ``kubernetes`` (jobs are workloads
on a cluster, state in the API server). Records are Slurm's (:mod:`parsers.job_records`), so the
reports print the same way whatever answered them.

The shape is torchx's scheduler API: the job verbs are few — ``submit`` (with ``wait``),
``job_records``/``accounting_records`` (list), ``running_steps``/``job_texts`` (describe),
``cancel``/``set_hold``/``requeue`` (control), ``attach``/``run_outside`` (the job's output)
— and take and return values; a backend prints only through :mod:`sbatch_k8s.user_messages`.
What is not about one job sits in three small facets: :class:`Identity` (who the caller
is), :class:`ClusterFacts` (where jobs run) and :class:`JobLookup` (which ids exist, for
scancel's and scontrol's selection).
"""

from __future__ import annotations

import abc
import dataclasses
import os
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

from parsers.formats.sinfo_fields import NodeInfo
from parsers.job_records import JobRecord, StepRecord
from translators.config import ClusterConfig

if TYPE_CHECKING:
    from parsers.allocation import NodeShape
    from sbatch_k8s.submission_plan import SubmissionPlan

#: Outcomes of :meth:`Backend.cancel`, :meth:`Backend.set_hold` and :meth:`Backend.requeue`,
#: per job; ``pending`` and ``disabled`` only of requeue (a job not started yet, or
#: submitted with ``--no-requeue``).
DONE, FINISHED, UNKNOWN, REFUSED = "done", "finished", "unknown", "refused"
NOT_STARTED, DISABLED = "pending", "disabled"
#: A requeue refused because the job is not a batch job (``srun`` outside a job made it).
BATCH_ONLY = "batch only"
#: Who creates a job for a step: ``srun`` outside a job (not a batch job, as in Slurm).
SRUN_COMMAND = "srun"


@dataclasses.dataclass(frozen=True)
class StartEstimate:
    """Where and when a job would start (``sbatch --test-only``): nothing was created."""

    job_id: int
    #: Local time, ``YYYY-MM-DDTHH:MM:SS`` as Slurm prints it.
    start: str
    processors: int
    #: The node names, compressed (``127.0.0.[2-3]``, ``llm-12-[0-1]``).
    nodes: str
    partition: str


@dataclasses.dataclass(frozen=True)
class Submitted:
    """What a submission made: the job ids (an array's elements in order; the first is the
    one sbatch names), or with ``--test-only`` only the estimate. The command prints it
    (:func:`parsers.formats.messages.submitted_line`) and, with ``--wait``, hands it back to
    :meth:`Backend.wait`."""

    job_ids: Tuple[int, ...]
    #: Where the backend put the jobs, for :meth:`Backend.wait` (a cluster: the namespace;
    #: this machine: empty).
    location: str = ""
    estimate: Optional[StartEstimate] = None


@dataclasses.dataclass(frozen=True)
class OutputSink:
    """Where a job's own output goes when a command shows it (``sattach``, ``srun`` outside
    a job): the file descriptors the command hands in, written whole and unbuffered (a
    follower thread may still write while the interpreter exits)."""

    out_fd: int = 1
    err_fd: int = 2

    def write(self, fd: int, data: bytes) -> None:
        """Every byte of ``data`` to ``fd``."""
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]

    def write_out(self, data: bytes) -> None:
        self.write(self.out_fd, data)

    def write_err(self, data: bytes) -> None:
        self.write(self.err_fd, data)


class Identity(abc.ABC):
    """Who runs the command, as the backend knows users. The owner checks use it (a
    cluster: the identity its API server authenticated, never a local uid)."""

    #: Whether ``sacct`` without ``-u``/``-a`` lists every user's jobs for an operator, as
    #: slurmdbd answers root and SlurmUser (the local backend keeps listing the caller's).
    operators_see_all: bool = False

    @abc.abstractmethod
    def caller_uid(self) -> int:
        """The uid of whoever runs the command."""

    @abc.abstractmethod
    def caller_name(self) -> str:
        """The caller's Slurm user name."""

    def caller_is_operator(self) -> bool:
        """Whether the caller is Slurm's operator (acts on any job; holds are admin's)."""
        return self.caller_uid() == 0

    @abc.abstractmethod
    def uid_of_user(self, name: str) -> Optional[int]:
        """The uid of a user name (``squeue -u alice``), None when there is no such user."""


class ProcessIdentity(Identity):
    """This machine's users: the process's uid, names from the password database."""

    def caller_uid(self) -> int:
        return os.getuid()

    def caller_name(self) -> str:
        """The password database's name of the uid (the uid itself when it has none)."""
        import pwd

        uid = self.caller_uid()
        try:
            return pwd.getpwuid(uid).pw_name
        except KeyError:
            return str(uid)

    def uid_of_user(self, name: str) -> Optional[int]:
        import pwd

        try:
            return pwd.getpwnam(name).pw_uid
        except KeyError:
            return None


class ClusterFacts(abc.ABC):
    """Where jobs run: what ``-v``, ``--k8s-lint``, sinfo and ``scontrol show partition``
    ask before (or without) any job."""

    @abc.abstractmethod
    def describe(self) -> str:
        """One line for ``-v``: the backend and what it talks to (context, namespace…)."""

    def node_shape(self) -> "Optional[NodeShape]":
        """The size of one node wherever this backend runs jobs, when every partition shares
        it (this machine's); None: each partition's configured size."""
        return None

    def check_plan(self, plan: "SubmissionPlan") -> None:
        """Raise the refusals only this backend can decide without creating anything (this
        machine's capacity); ``--k8s-lint`` asks before saying a job would be submitted."""

    @abc.abstractmethod
    def partition_nodes(self) -> Dict[str, Tuple[NodeInfo, ...]]:
        """The nodes of each configured partition, as sinfo lists them."""


class JobLookup(abc.ABC):
    """Which job ids exist: scancel's and scontrol's selection before they act."""

    @abc.abstractmethod
    def active_elements(self) -> List[JobRecord]:
        """Every job the controller still holds, one record per array element (what scancel
        filters), in job id order."""

    @abc.abstractmethod
    def expand_id(self, job_id: int, task: Optional[int]) -> List[int]:
        """The job ids one scancel id means: the job, every element of an array, or one
        element (``12_3``)."""

    @abc.abstractmethod
    def known(self, job_id: int) -> bool:
        """True when the job (or array) ``job_id`` exists at all, finished or not."""


class Backend(abc.ABC):
    """Where jobs run and what is known about them: the job verbs, and the facets."""

    #: ``local`` or ``kubernetes``.
    name: str = ""
    #: The configuration the backend was opened with.
    config: ClusterConfig
    identity: Identity
    cluster: ClusterFacts
    lookup: JobLookup

    @abc.abstractmethod
    def submit(self, plan: "SubmissionPlan") -> Submitted:
        """Submit a planned job (:mod:`sbatch_k8s.submission_plan`): what was created (with
        ``--test-only`` nothing: where it would start). Refusals raise."""

    @abc.abstractmethod
    def wait(self, submitted: Submitted) -> int:
        """``sbatch --wait``: return once every job of the submission has ended; the job's
        exit code (1 for a signal or a job that did not complete; an array's highest)."""

    @abc.abstractmethod
    def job_records(self, include_finished: bool, now: int,
                    job_ids: Optional[Sequence[int]] = None) -> List[JobRecord]:
        """Jobs squeue and scontrol show: active ones, and recently finished ones when
        ``include_finished``; with ``job_ids``, only jobs whose id or array id is among them
        (a narrowing the caller still checks: a backend may return more)."""

    @abc.abstractmethod
    def accounting_records(self, start: int, end: int,
                           job_ids: Optional[List[int]]) -> List[JobRecord]:
        """Jobs sacct shows: those active in ``[start, end)`` or named (with their steps)."""

    @abc.abstractmethod
    def running_steps(self, record: JobRecord) -> List[StepRecord]:
        """The steps of a running job still running (``squeue -s``)."""

    @abc.abstractmethod
    def job_texts(self, record: JobRecord) -> Tuple[Optional[str], Optional[Dict[str, str]]]:
        """The batch script and start environment of a job (``sacct -B``/``--env-vars``),
        each None where unknown."""

    @abc.abstractmethod
    def cancel(self, job_id: int, signum: Optional[int] = None, batch: bool = False,
               full: bool = False, step: Optional[int] = None) -> str:
        """Cancel (or with ``signum`` signal) one job or step for the caller
        (:attr:`identity`): one of the outcomes above."""

    @abc.abstractmethod
    def set_hold(self, job_id: int, reason: Optional[str]) -> str:
        """``scontrol hold``/``uhold`` (``reason``: JobHeldUser or JobHeldAdmin) or
        ``release`` (``reason`` None) one pending job for the caller: one of the outcomes."""

    @abc.abstractmethod
    def requeue(self, job_id: int, hold: bool = False) -> str:
        """``scontrol requeue`` (``requeuehold`` with ``hold``: held then): run one started
        or finished job again under its id, pending first, its restart count one higher: one
        of the outcomes."""

    def attach(self, job_id: int, write_files: bool, quiet: bool, sink: OutputSink) -> int:
        """``sattach``: copy the job's output to ``sink`` (following it while the job runs),
        or with ``write_files`` put its output files in its working directory; the exit code.
        AttachError with Slurm's reason when there is nothing to attach to. Here: the
        files are already in place (:mod:`sbatch_k8s.backends.attach_files`)."""
        from sbatch_k8s.backends.attach_files import attach_to_files, job_to_attach

        return attach_to_files(self, job_to_attach(self, job_id), write_files, quiet, sink)

    @abc.abstractmethod
    def run_outside(self, argv: List[str], sink: OutputSink) -> int:
        """``srun`` outside a job: a job of its own for the step, its output streamed to
        ``sink``; the step's exit code."""
