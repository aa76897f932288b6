"""Values derived from a job record that several reports print the same way.

Times follow squeue's ``job_time_used`` and scontrol's ``RunTime``; memory and TRES strings
follow what slurmctld stores (``mem=1G`` for 1024 MiB). ``time_limit_min`` of None means no
``--time`` was given, so the partition's limit applies (unlimited here); 0 is ``UNLIMITED``.
"""

from __future__ import annotations

from typing import Optional, TypeVar

from parsers.formats.cells import convert_num_unit
from parsers.formats.states import base_state, is_pending
from parsers.job_records import JobRecord

NULL = None  # a C NULL string: squeue and scontrol print "(null)"
#: Epoch seconds, whole (records) or not (the local job database).
Moment = TypeVar("Moment", int, float)


def text_or_null(text: str) -> Optional[str]:
    """An empty record string is a NULL pointer in Slurm's job record."""
    return text if text else NULL


def time_used_s(job: JobRecord, now: int) -> int:
    """``job_time_used``: 0 while pending or never started, else end (or now) minus start."""
    if job.start_time is None or is_pending(job.state):
        return 0
    if base_state(job.state) in ("RUNNING", "SUSPENDED") or job.end_time is None:
        return max(now - job.start_time, 0)
    return max(job.end_time - job.start_time, 0)


def has_time_limit(job: JobRecord) -> bool:
    """True when a finite ``--time`` applies."""
    return bool(job.time_limit_min)


def shown_start(job: JobRecord, now: int) -> Optional[int]:
    """The start time slurmctld holds for the job, as ``scontrol`` ``StartTime=``, ``squeue``
    ``%S``/``StartTime`` and ``-S S`` use it: when the job started; for a pending job its begin
    time (``--begin``, or the end of a requeue's delay) while that lies ahead, whatever else it
    waits for (a hold, a dependency); else None (``Unknown``/``N/A``): slurmctld would show
    its backfill estimate, which sbatch-k8s does not make. (``sacct``'s ``Start`` is the
    actual start only: accounting has none while a job is pending.)"""
    if is_pending(job.state):
        begin = job.begin_time
        return begin if begin is not None and begin > now else None
    return job.start_time


def eligible_from(begin_time: Optional[Moment], waits: bool, now: Moment) -> Optional[Moment]:
    """``EligibleTime`` as slurmctld sets it when a job is submitted, held or released: its
    begin time while that lies ahead (held or waiting for a dependency alike), else None
    while it ``waits`` (held, or a dependency not yet met), else ``now``."""
    if begin_time is not None and begin_time > now:
        return begin_time
    return None if waits else now


def expected_end(job: JobRecord, now: int) -> Optional[int]:
    """The job's end as the controller records it: actual end, or the start it shows
    (:func:`shown_start`) plus a finite limit."""
    if job.end_time is not None:
        return job.end_time
    start = shown_start(job, now)
    if start is not None and has_time_limit(job):
        return start + 60 * int(job.time_limit_min or 0)
    return None


def min_cpus_per_node(job: JobRecord) -> int:
    """``pn_min_cpus``: CPUs per task times tasks per node (1 task when not given)."""
    return job.cpus_per_task * (job.ntasks_per_node or 1)


def num_tasks(job: JobRecord) -> int:
    """Tasks the job asked for (``--ntasks``, else tasks per node times nodes, else 1)."""
    if job.ntasks is not None:
        return job.ntasks
    if job.ntasks_per_node:
        return job.ntasks_per_node * job.node_count
    return max(job.node_count, 1) if job.ntasks_per_node is None and job.node_count > 1 else 1


def total_memory_mb(job: JobRecord) -> int:
    """Memory of the whole job: per CPU times CPUs, or per node times nodes."""
    per = job.min_memory_mb or 0
    return per * (job.cpus if job.memory_per_cpu else job.node_count)


def memory_text(mem_mb: int) -> str:
    """MiB as Slurm prints them exactly (``256M``, ``1G``, ``1.50G``)."""
    return convert_num_unit(mem_mb, "M")


def tres_text(job: JobRecord) -> str:
    """``TRES=``: the record's own string, else ``cpu=…,mem=…,node=…,billing=…``."""
    if job.tres:
        return job.tres
    parts = [f"cpu={job.cpus}"]
    if job.min_memory_mb:
        parts.append(f"mem={memory_text(total_memory_mb(job))}")
    parts += [f"node={job.node_count}", f"billing={job.cpus}"]
    return ",".join(parts)


def tres_per_node(job: JobRecord) -> Optional[str]:
    """``tres_per_node`` as 22.05 prints it (``gres:gpu:1``), None when no GRES was asked."""
    if not job.gres:
        return None
    return job.gres if job.gres.startswith("gres") else f"gres:{job.gres}"


#: ``job_oversubscribe_string`` by the record's ``exclusive`` value.
OVERSUBSCRIBE_BY_EXCLUSIVE = {"user": "USER", "mcs": "MCS", "topo": "TOPO"}


def oversubscribe_text(job: JobRecord) -> str:
    """``OK`` (may share), ``NO`` (``--exclusive``), ``USER``/``MCS``/``TOPO``."""
    if job.exclusive is None:
        return "OK"
    return OVERSUBSCRIBE_BY_EXCLUSIVE.get(job.exclusive.lower(), "NO")


def exit_code_text(code: int, signal: int) -> str:
    """``exit:signal`` (``0:0``, ``1:0``, ``0:15``)."""
    return f"{code}:{signal}"


def array_job_id(job: JobRecord) -> int:
    """The array's base id, or the job's own id when it is no array."""
    if job.array_job_id is not None and (job.array_task_id is not None
                                         or job.array_pending is not None):
        return job.array_job_id
    return job.job_id
