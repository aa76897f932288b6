"""The console's one seam to where jobs run: :class:`JobsSource`.

Everything the console reads or does goes through here, and only this package of the console
imports the backends (:func:`sbatch_k8s.backends.open_backend` and the :class:`~sbatch_k8s.
backends.base.Backend` verbs), the job inspection the commands share
(:mod:`sbatch_k8s.inspection`: nodes, logs, events, objects) and the commands' own modules
(import contracts in pyproject.toml and tests/unit/test_import_rules.py): when the backend
interface changes, this package and the inspection alone change with it.

Selections are the commands' own: the job table's filters are squeue's options, read by
squeue's parser and applied by squeue's selection; the history is sacct's, likewise. What
the backends cannot tell is an :class:`~sbatch_k8s.inspection.values.Unavailable`.

A backend is opened once per thread (the console's handlers run in a thread pool; a
backend's connections are not shared between threads).
"""

from __future__ import annotations

import os
import threading
import time
from typing import TYPE_CHECKING, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from parsers.job_records import JobRecord, StepRecord
from sbatch_k8s.inspection.values import EventView, LogSource, NodeView, Unavailable
from sbatch_k8s.ui.samples import SampleHistory
from sbatch_k8s.ui.views import ActionResult, Identity, LintResult, Submission, SubmitResult

if TYPE_CHECKING:
    from parsers.formats.sinfo_fields import PartitionInfo
    from sbatch_k8s.backends.base import Backend
    from sbatch_k8s.inspection.file_logs import LogHandle
    from sbatch_k8s.inspection.inspector import JobInspector

#: Why a job has no resource charts.
NO_SAMPLES = ("no resource figures for this job yet: running steps are sampled every "
              "--acctg-freq seconds (30 by default, never with --acctg-freq=0), ended ones "
              "keep their totals")


class JobsSource:
    """Jobs, their details and actions, for one console (one user, one environment)."""

    def __init__(self, environ: Mapping[str, str], work_dir: str) -> None:
        self.environ: Dict[str, str] = dict(environ)
        self.work_dir = work_dir
        self._per_thread = threading.local()
        self._identity: Optional[Identity] = None
        self._samples = SampleHistory()

    # -- the backend -------------------------------------------------------------------

    @property
    def backend(self) -> "Backend":
        """This thread's backend (opened on first use)."""
        backend = getattr(self._per_thread, "backend", None)
        if backend is None:
            from sbatch_k8s.backends import open_backend

            backend = open_backend(self.environ)
            self._per_thread.backend = backend
        return backend

    @property
    def kind(self) -> str:
        """``local`` or ``kubernetes``."""
        return self.backend.name

    def identity(self) -> Identity:
        """Who the console acts as (the cluster's answer on Kubernetes), asked once."""
        if self._identity is None:
            backend = self.backend
            caller = backend.identity
            config = backend.config
            self._identity = Identity(
                user=caller.caller_name(), uid=caller.caller_uid(),
                operator=caller.caller_is_operator(),
                backend=backend.name, describe=backend.cluster.describe(),
                cluster=config.cluster_name,
                partitions=tuple(p.name for p in config.partitions),
                default_partition=config.default_partition or "", work_dir=self.work_dir)
        return self._identity

    def may_see(self, record: JobRecord) -> bool:
        """Operators see every user's jobs; others their own."""
        me = self.identity()
        return me.operator or record.uid == me.uid

    # -- jobs --------------------------------------------------------------------------

    def active_records(self, now: int) -> List[JobRecord]:
        """What squeue sees (recently finished jobs too), the caller's only unless an
        operator."""
        return [r for r in self.backend.job_records(True, now) if self.may_see(r)]

    def history_records(self, start: int, end: int) -> List[JobRecord]:
        """What sacct holds for ``[start, end)``, likewise restricted."""
        return [r for r in self.backend.accounting_records(start, end, None) if self.may_see(r)]

    def squeue_selection(self, records: Sequence[JobRecord], argv: Sequence[str],
                         now: int) -> List[JobRecord]:
        """``squeue ARGV`` over ``records``: squeue's parser, selection and order.
        SlurmInputError (squeue's words) for a bad filter."""
        from parsers.formats.squeue_select import expand_pending_arrays, select_jobs
        from parsers.formats.squeue_sort import sort_jobs
        from parsers.report_options.squeue_options import parse_squeue_args

        query = parse_squeue_args(list(argv), {})
        users = self._uids("squeue", query.users, query.me)
        chosen = sort_jobs(select_jobs(records, query, now, users, self.identity().uid),
                           query.sort, now)
        return expand_pending_arrays(chosen) if query.array_tasks else chosen

    def sacct_selection(self, records: Sequence[JobRecord], argv: Sequence[str],
                        now: int) -> List[JobRecord]:
        """``sacct ARGV`` over ``records`` (its filters; the window is the caller's)."""
        from parsers.job_filters import sacct_selects
        from parsers.report_options.sacct_options import parse_sacct_args

        query = parse_sacct_args(list(argv), {}, now)
        uids = self._uids("sacct", query.users, False)
        return [r for r in records if sacct_selects(r, query, uids)]

    def sacct_window(self, argv: Sequence[str], now: int) -> Tuple[int, int]:
        """The ``[start, end)`` window ``sacct ARGV`` reads (its ``-S``/``-E`` rules)."""
        from parsers.report_options.sacct_options import parse_sacct_args

        query = parse_sacct_args(list(argv), {}, now)
        return query.start_time, query.end_time

    def _uids(self, command: str, names: Optional[Sequence[str]], me: bool
              ) -> Optional[set]:
        from sbatch_k8s.cli.user_ids import resolve_users

        return resolve_users(command, names, me, self.backend)

    def find(self, job_text: str) -> Optional[JobRecord]:
        """The job ``12`` or array element ``12_3`` (pending ones on their array's line
        included), from squeue's view, else sacct's; None when unknown or not the
        caller's to see (:func:`sbatch_k8s.inspection.job_lookup.find_job`)."""
        from sbatch_k8s.inspection.job_lookup import find_job

        return find_job(self.backend, job_text, self.may_see)

    def with_history(self, record: JobRecord) -> JobRecord:
        """``record`` (squeue's view) with the steps and earlier runs sacct's record of the
        same job holds (squeue's records carry none on some backends)."""
        from sbatch_k8s.inspection.job_lookup import with_history

        return with_history(self.backend, record)

    def running_steps(self, record: JobRecord) -> List[StepRecord]:
        """The steps of a running job still running (``squeue -s``)."""
        return self.backend.running_steps(record) if record.state == "RUNNING" else []

    def script(self, record: JobRecord) -> Union[str, Unavailable]:
        """The batch script as submitted."""
        script, _ = self.backend.job_texts(record)
        if script is None:
            return Unavailable("the batch script was not kept for this job (or its "
                               "objects are gone)")
        return script

    def partitions(self) -> List["PartitionInfo"]:
        """The partitions and their nodes, as sinfo shows them."""
        from sbatch_k8s.cli.sinfo import partition_infos

        backend = self.backend
        return partition_infos(backend.config, backend.cluster.partition_nodes())

    # -- inside a job (sbatch_k8s.inspection, shared with sbatch-k8s logs|events|yaml) ------

    @property
    def inspector(self) -> "JobInspector":
        """This thread's job inspector (over this thread's backend)."""
        inspector = getattr(self._per_thread, "inspector", None)
        if inspector is None:
            from sbatch_k8s.inspection.inspector import JobInspector

            inspector = JobInspector(self.backend)
            self._per_thread.inspector = inspector
        return inspector

    def nodes(self, record: JobRecord) -> List[NodeView]:
        """The job's nodes (on a cluster: its pods) and their state."""
        return self.inspector.nodes(record)

    def log_sources(self, record: JobRecord) -> List[LogSource]:
        """Each node's log and the batch step's output files."""
        return self.inspector.log_sources(record)

    def log(self, record: JobRecord, key: str) -> Optional["LogHandle"]:
        """One log of :meth:`log_sources` to read or follow; None for an unknown key."""
        from sbatch_k8s.inspection.job_lookup import has_ended

        for source in self.log_sources(record):
            if source.key == key and source.available:
                return self.inspector.open_log(record, source,
                                               lambda: has_ended(self.backend, record))
        return None

    def events(self, record: JobRecord) -> List[EventView]:
        """What happened to the job, in time order: its record's moments, the runtime's
        (nodes up, steps, signals, requeues) and on a cluster its objects' Kubernetes
        events and what its pods' statuses say (an OOM kill)."""
        return self.inspector.events(record)

    def runtime_events(self, record: JobRecord) -> List[EventView]:
        """The runtime's own events alone (nodes up, steps with exit codes, signals,
        requeues), in time order."""
        return self.inspector.runtime_events(record)

    def yaml(self, record: JobRecord) -> Union[str, Unavailable]:
        """The job's objects as the cluster has them; locally the job's description."""
        return self.inspector.yaml_text(record)

    def samples(self, record: JobRecord) -> Union[Dict[str, object], Unavailable]:
        """Resource use over time per node (:mod:`sbatch_k8s.ui.samples`), from the usage
        the job's steps recorded."""
        series = self._samples.observe(self.with_history(record), time.time())
        return Unavailable(NO_SAMPLES) if series is None else series

    def jobs_on_nodes(self, now: int) -> Dict[str, List[str]]:
        """Node name (as :meth:`partitions` names nodes) → the running jobs on it."""
        running = [r for r in self.active_records(now) if r.state == "RUNNING"]
        return self.inspector.jobs_on_nodes(running)

    # -- actions -----------------------------------------------------------------------

    def cancel(self, record: JobRecord, step: Optional[str] = None,
               whole_array: bool = False) -> ActionResult:
        """``scancel`` of the job, element or step (``step``: ``0``, ``batch``…), or of
        every element of its array."""
        from sbatch_k8s.ui.jobs_source.actions import cancel

        return cancel(self.backend, record, step, whole_array)

    def hold(self, record: JobRecord) -> ActionResult:
        """``scontrol hold`` of a pending job."""
        from sbatch_k8s.ui.jobs_source.actions import hold

        return hold(self.backend, record, release=False)

    def release(self, record: JobRecord) -> ActionResult:
        """``scontrol release`` of a held job."""
        from sbatch_k8s.ui.jobs_source.actions import hold

        return hold(self.backend, record, release=True)

    def requeue(self, record: JobRecord) -> ActionResult:
        """``scontrol requeue`` of a started or finished job."""
        from sbatch_k8s.ui.jobs_source.actions import requeue

        return requeue(self.backend, record)

    def lint(self, script: str, argv: Sequence[str]) -> LintResult:
        """``sbatch ARGV --k8s-lint`` of ``script``."""
        from sbatch_k8s.ui.jobs_source.submission import lint

        return lint(script, argv, self.environ)

    def submit(self, script: str, script_name: str, argv: Sequence[str],
               work_dir: str) -> SubmitResult:
        """``sbatch ARGV SCRIPT`` in ``work_dir``, as from the user's shell."""
        from sbatch_k8s.ui.jobs_source.submission import submit

        return submit(script, script_name, argv, work_dir, self.environ)

    def resubmission(self, record: JobRecord) -> Union[Submission, Unavailable]:
        """What "submit again" would run for ``record``."""
        from sbatch_k8s.ui.jobs_source.submission import resubmission

        script = self.script(record)
        if isinstance(script, Unavailable):
            return script
        return resubmission(record, script)




def default_work_dir() -> str:
    """Where the console was started: the working directory of the jobs it submits."""
    return os.getcwd()
