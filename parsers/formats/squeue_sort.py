"""The order squeue lists jobs and steps in (``src/squeue/sort.c``).

squeue first orders jobs by start time (latest first, never-started last), then applies the
``-S`` keys from the last to the first with a stable sort, so the first key wins; ``-`` before
a key reverses it. The default is ``P,t,-p``: partition, compact state as text (so ``CG`` <
``PD`` < ``R``), priority descending. Steps default to ``P,i``: partition, then job id and step
number (numbered steps before ``batch`` and ``extern``). Records that compare equal keep the
caller's order, which should be the controller's: ascending job id, except that a pending
array remainder comes after the tasks split off it (slurmctld re-appends the remainder each
time a task starts); when one array is loaded by id (``squeue -j 103``) the controller
returns its pending rest first, then its tasks newest first. Jobs that never started are
ranked by a comparator that always says "after", which glibc's merge sort (before glibc
2.37) turns into a reversal; that is kept.

Keys squeue accepts but does not sort by (``c f h n O``) and the vestigial ``b`` are ignored;
any other letter is an error, raised here as Slurm words it.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from parsers.input_errors import EXIT_SUBMIT_ERROR, SlurmInputError
from parsers.formats import job_values as jv
from parsers.formats.squeue_steps import StepView, step_number, step_run_time_s
from parsers.formats.states import is_pending, state_compact
from parsers.job_records import JobRecord
from parsers.values.hostlist import expand_hostlist
from parsers.values.hostranges import split_host

DEFAULT_JOB_SORT = "P,t,-p"
DEFAULT_STEP_SORT = "P,i"
START_SORT = "S"
NO_VAL = 0xFFFFFFFE
INFINITE = 0xFFFFFFFF
CLUSTER = "cluster"

Key = Callable[[Any, int], Any]


def _first_host(node_list: str) -> Tuple[str, int]:
    """``hostlist_cmp_first`` on sorted lists: the smallest host as (prefix, number)."""
    try:
        hosts = expand_hostlist(node_list)
    except ValueError:
        hosts = []
    keys = [(prefix, -1 if number is None else number)
            for prefix, number, _width in map(split_host, hosts)]
    return min(keys) if keys else ("", -1)


def _job_id_key(job: JobRecord, now: int) -> Tuple[int, int]:
    if job.array_task_id is None:
        return (job.job_id, NO_VAL)
    return (job.array_job_id if job.array_job_id is not None else job.job_id,
            job.array_task_id)


def _time_limit_key(job: JobRecord, now: int) -> int:
    if job.time_limit_min is None:
        return NO_VAL
    return job.time_limit_min or INFINITE


def _time_left_key(job: JobRecord, now: int) -> int:
    if not jv.has_time_limit(job):
        return INFINITE
    return 60 * int(job.time_limit_min or 0) - jv.time_used_s(job, now)


def _effective_start(job: JobRecord, now: int) -> int:
    start = jv.shown_start(job, now) or 0
    return now if is_pending(job.state) and start < now else start


#: ``-S`` letters for jobs → sort key; None marks letters squeue accepts and ignores.
JOB_SORT_KEYS: Dict[str, Optional[Key]] = {
    "B": lambda j, n: j.batch_host,
    "b": None, "c": None, "f": None, "h": None, "n": None, "O": None,
    "C": lambda j, n: j.cpus,
    "d": lambda j, n: 0,
    "D": lambda j, n: j.node_count,
    "e": lambda j, n: jv.expected_end(j, n) or 0,
    "g": lambda j, n: j.group,
    "G": lambda j, n: j.gid,
    "H": lambda j, n: 0, "I": lambda j, n: 0, "J": lambda j, n: 0, "z": lambda j, n: 0,
    "i": _job_id_key,
    "j": lambda j, n: j.name,
    "l": _time_limit_key,
    "L": _time_left_key,
    "m": lambda j, n: j.min_memory_mb or 0,
    "M": lambda j, n: jv.time_used_s(j, n),
    "N": lambda j, n: _first_host(j.node_list),
    "p": lambda j, n: j.priority,
    "P": lambda j, n: j.partition.encode(),
    "Q": lambda j, n: j.priority,
    "S": _effective_start,
    "t": lambda j, n: state_compact(j.state).encode(),
    "T": lambda j, n: j.state.encode(),
    "u": lambda j, n: j.user.encode(),
    "U": lambda j, n: j.uid,
    "v": lambda j, n: b"",
    "V": lambda j, n: j.submit_time or 0,
}

#: ``-S`` letters for steps; letters not listed are ignored silently.
STEP_SORT_KEYS: Dict[str, Optional[Key]] = {
    "b": None,
    "i": lambda v, n: (v[0].job_id, step_number(v[1].step_id)),
    "N": lambda v, n: _first_host(v[1].node_list),
    "P": lambda v, n: v[0].partition.encode(),
    "l": lambda v, n: INFINITE,
    "S": lambda v, n: v[1].start_time or 0,
    "M": lambda v, n: step_run_time_s(v[1], n),
    "u": lambda v, n: v[0].user.encode(),
    "U": lambda v, n: v[0].uid,
}


def _sort_keys(spec: str) -> List[Tuple[str, bool]]:
    """The ``(key, reversed)`` pairs of ``spec``, last first, as sort.c walks them."""
    keys: List[Tuple[str, bool]] = []
    i = len(spec) - 1
    while i >= 0:
        char = spec[i]
        if char in ",+-":
            i -= 1
            continue
        if i + 1 >= len(CLUSTER) and spec[i + 1 - len(CLUSTER):i + 1].lower() == CLUSTER:
            start = i + 1 - len(CLUSTER)
            keys.append((CLUSTER, start > 0 and spec[start - 1] == "-"))
            i = start - 1
            continue
        keys.append((char, i > 0 and spec[i - 1] == "-"))
        i -= 1
    return keys


def check_job_sort(spec: str) -> None:
    """Raise squeue's ``Invalid sort specification: X`` for a letter it does not know."""
    for key, _reverse in _sort_keys(spec):
        if key != CLUSTER and key not in JOB_SORT_KEYS:
            raise SlurmInputError(f"Invalid sort specification: {key}",
                                  exit_code=EXIT_SUBMIT_ERROR)


def _start_time_order(jobs: List[JobRecord], now: int, reverse: bool) -> List[JobRecord]:
    """``_sort_job_by_time_start`` under glibc's merge sort: started jobs by start time, then
    the never-started ones — which that comparator always ranks after the other element, so
    the merge sort hands them back in reverse order."""
    started = sorted((j for j in jobs if jv.shown_start(j, now)),
                     key=lambda j: _effective_start(j, now), reverse=reverse)
    return started + [j for j in jobs if not jv.shown_start(j, now)][::-1]


def sort_jobs(jobs: Sequence[JobRecord], spec: Optional[str], now: int) -> List[JobRecord]:
    """Jobs in squeue's order for ``-S spec`` (None: the default ``P,t,-p``)."""
    ordered = _start_time_order(list(jobs), now, reverse=True)
    for key, reverse in _sort_keys(spec or DEFAULT_JOB_SORT):
        if key == CLUSTER:
            continue
        if key not in JOB_SORT_KEYS:
            check_job_sort(key)
        function = JOB_SORT_KEYS[key]
        if key == "S":
            ordered = _start_time_order(ordered, now, reverse)
        elif function is not None:
            ordered = sorted(ordered, key=lambda j: function(j, now), reverse=reverse)
    return ordered


def sort_steps(steps: Sequence[StepView], spec: Optional[str], now: int) -> List[StepView]:
    """Steps in ``squeue -s`` order for ``-S spec`` (None: ``P,i``)."""
    ordered = list(steps)
    for key, reverse in _sort_keys(spec or DEFAULT_STEP_SORT):
        function = STEP_SORT_KEYS.get(key)
        if function is not None:
            ordered = sorted(ordered, key=lambda v: function(v, now), reverse=reverse)
    return ordered
