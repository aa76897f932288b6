"""Which jobs a reporting command acts on: its filters as pure functions over job records.

Backends build :class:`~parsers.job_records.JobRecord` values (from the local job database, or
from cluster state) and ask these functions which records a request selects, so that every
backend applies the very same rules. What needs the system is resolved by the caller and
passed in: user names to uids, a ``-w`` node file to its host names.

scancel follows ``_filter_job_records`` and ``_verify_job_ids`` of ``src/scancel/scancel.c``
(Slurm 22.05): filters compare exactly (``xstrcmp``); only pending, running and suspended
jobs can match; ``-w`` selects jobs whose nodes intersect the list; ``--reservation`` and
``--wckey`` compare with the record's own fields (sbatch-k8s jobs have neither today, so
they match no job, as Slurm's filters match no job without one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Collection, FrozenSet, Optional, Sequence

from parsers.formats.states import stored_state
from parsers.input_errors import ValueSyntaxError
from parsers.job_records import PENDING, RUNNING, SUSPENDED, JobRecord
from parsers.report_options.ids import JobId
from parsers.values.hostlist import expand_hostlist

if TYPE_CHECKING:
    from parsers.report_options.sacct_options import SacctQuery
    from parsers.report_options.scancel_options import ScancelRequest

#: The states scancel's filters can select (``_filter_job_records``).
SCANCEL_STATES = (PENDING, RUNNING, SUSPENDED)


def hosts_of(node_list: str) -> FrozenSet[str]:
    """The host names of a compressed node list; a malformed list names none (as Slurm's
    ``hostset_create`` of a bad string)."""
    if not node_list:
        return frozenset()
    try:
        return frozenset(expand_hostlist(node_list))
    except ValueSyntaxError:
        return frozenset()


def _wckey_matches(job_key: str, wanted: str) -> bool:
    """A ``*`` before a job's wckey marks a default one; ``--wckey=name`` matches both."""
    if not wanted.startswith("*") and job_key.startswith("*"):
        job_key = job_key[1:]
    return job_key == wanted


def scancel_selects(record: JobRecord, request: "ScancelRequest",
                    uid: Optional[int] = None,
                    hosts: Optional[Collection[str]] = None) -> bool:
    """Whether ``record`` passes every scancel filter of ``request``.

    ``uid`` is the resolved ``-u``/``--me`` user (None: no user filter); ``hosts`` the
    expanded ``-w`` list (None: no node filter; empty: a list that names no host).
    """
    if record.state not in SCANCEL_STATES:
        return False
    exact = ((request.account, record.account), (request.name, record.name),
             (request.partition, record.partition), (request.qos, record.qos),
             (request.reservation, record.reservation), (request.state, record.state))
    if any(wanted is not None and wanted != value for wanted, value in exact):
        return False
    if uid is not None and record.uid != uid:
        return False
    if hosts is not None and not (hosts_of(record.node_list) & set(hosts)):
        return False
    if request.wckey is not None and not _wckey_matches(record.wckey, request.wckey):
        return False
    return True


def id_names(selected: JobId, record: JobRecord) -> bool:
    """Whether a scancel job id names ``record``: the job itself, every element of an array
    (``12`` or ``12_*``), or one element (``12_3``)."""
    if selected.all_tasks:
        return selected.job_id == record.array_job_id
    if selected.array_task_id is not None:
        return (selected.job_id == record.array_job_id
                and selected.array_task_id == record.array_task_id)
    if selected.job_id == record.job_id:
        return True
    return selected.job_id == record.array_job_id and selected.step is None


def named_steps(record: JobRecord, selected: Optional[Sequence[JobId]]
                ) -> Optional[FrozenSet[str]]:
    """The steps of ``record`` sacct's ``-j`` lists on their own: None when it names the job
    itself (its line and every step's), else the step ids named for it (``-j 7.1`` lists
    step 1 alone; ``-j 7.5`` of a job without step 5, nothing — and ``-X`` the job's line,
    the allocation the steps belong to)."""
    if selected is None:
        return None
    steps = set()
    for wanted in selected:
        names_record = (wanted.job_id == record.job_id and wanted.array_task_id is None) or (
            wanted.job_id == record.array_job_id and (
                wanted.all_tasks or wanted.array_task_id in (None, record.array_task_id)))
        if not names_record:
            continue
        if wanted.step is None:
            return None
        steps.add(wanted.step)
    return frozenset(steps)


def no_match_line(request: "ScancelRequest") -> str:
    """What ``scancel -v`` says when no job passes the filters (Slurm's order, and its
    trailing blank)."""
    parts = [("account", request.account), ("job_name", request.name),
             ("nodelist", request.nodelist), ("partition", request.partition),
             ("qos", request.qos), ("reservation", request.reservation),
             ("state", request.state), ("user_name", request.user),
             ("wckey", request.wckey)]
    listed = "".join(f"{key}={value} " for key, value in parts if value is not None)
    return f"No active jobs match ALL job filters, including: {listed}"


def _named(value: str, wanted: Optional[Sequence[str]]) -> bool:
    return wanted is None or value in wanted


def _in_range(value: Optional[int], low: Optional[int], high: Optional[int]) -> bool:
    if low is None and high is None:
        return True
    if value is None:
        return False
    return (low is None or value >= low) and (high is None or value <= high)


def sacct_selects(record: JobRecord, query: "SacctQuery",
                  uids: Optional[Collection[int]] = None,
                  hosts: Optional[Collection[str]] = None) -> bool:
    """Whether sacct lists ``record`` for ``query`` (the conditions slurmdbd applies).

    ``uids``: the users to list (None: everyone); ``hosts``: the expanded ``-N`` list.
    Names compare exactly, ``-C`` as a substring of the job's constraints, ``-R`` against
    the job's (last) reason, ``-g`` against the group name or gid, ``-W`` against the job's
    wckey (a default one's ``*`` ignored). Jobs have no association id here, so ``-x``
    selects none.
    """
    if uids is not None and record.uid not in uids:
        return False
    if not (_named(record.name, query.names) and _named(record.partition, query.partitions)
            and _named(record.account, query.accounts) and _named(record.qos, query.qos)):
        return False
    if query.states is not None and stored_state(record.state) not in query.states:
        return False
    if query.groups is not None and not (record.group in query.groups
                                         or str(record.gid) in query.groups):
        return False
    if query.reasons is not None and record.reason.lower() not in {
            r.lower() for r in query.reasons}:
        return False
    if query.constraints is not None and not any(c in record.features
                                                 for c in query.constraints):
        return False
    if query.wckeys is not None and not any(_wckey_matches(record.wckey, w)
                                            for w in query.wckeys):
        return False
    if query.associations is not None:
        return False
    if hosts is not None and not (hosts_of(record.node_list) & set(hosts)):
        return False
    if not _in_range(record.time_limit_min, query.timelimit_min, query.timelimit_max):
        return False
    if not (_in_range(record.node_count, query.nnodes_min, query.nnodes_max)
            and _in_range(record.cpus, query.ncpus_min, query.ncpus_max)):
        return False
    if query.jobs is not None and not any(_sacct_names(j, record) for j in query.jobs):
        return False
    return True


def _sacct_names(selected: JobId, record: JobRecord) -> bool:
    if selected.job_id == record.job_id:
        return True
    return (selected.job_id == record.array_job_id
            and selected.array_task_id in (None, record.array_task_id))


def truncated_to(record: JobRecord, start: int, end: int) -> JobRecord:
    """``sacct -T``: the job's start and end clipped to the window ``[start, end)``."""
    from parsers.job_records import with_changes

    changes = {}
    if record.start_time is not None and record.start_time < start:
        changes["start_time"] = start
    if record.end_time is not None and record.end_time > end:
        changes["end_time"] = end
    return with_changes(record, **changes) if changes else record
