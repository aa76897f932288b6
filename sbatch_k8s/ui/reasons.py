"""Why a pending job waits, in one sentence: what it waits for, and what would let it start.

One row per reason squeue can show for a pending job (``%r``) on either backend; the
sentence is filled from the job's record (its dependency, begin time, partition, what it
asks for). A reason without a row is still said, plainly, never guessed at.
"""

from __future__ import annotations

import time
from typing import Dict, NamedTuple

from parsers.formats import job_values as jv
from parsers.job_records import PENDING, JobRecord


class Explanation(NamedTuple):
    """What the job waits for, and what would let it start (``str.format`` fields from
    :func:`_facts`)."""

    waits_for: str
    starts_when: str


REASONS: Dict[str, Explanation] = {
    "Resources": Explanation(
        "free resources: it asks for {asks} and partition {partition} has not that much "
        "free now",
        "running jobs end and free enough of it (or submit it asking for less)"),
    "Priority": Explanation(
        "its turn: jobs ahead of it in partition {partition} go first (on a cluster with "
        "Kueue: its queue has not admitted it yet)",
        "the jobs ahead of it have started"),
    "Dependency": Explanation(
        "its dependencies ({dependency})",
        "they are satisfied"),
    "DependencyNeverSatisfied": Explanation(
        "dependencies that can never be satisfied ({dependency})",
        "nothing: it will not start; cancel it and submit it again without them"),
    "BeginTime": Explanation(
        "its begin time ({begin})",
        "that time comes"),
    "JobHeldUser": Explanation(
        "a release: its user held it (sbatch --hold or scontrol hold)",
        "it is released (Release, or scontrol release {job})"),
    "JobHeldAdmin": Explanation(
        "a release by an operator, who held it",
        "an operator releases it"),
    "job requeued in held state": Explanation(
        "a release: it was requeued held (scontrol requeuehold)",
        "it is released (Release, or scontrol release {job})"),
    "JobArrayTaskLimit": Explanation(
        "its array's limit of {limit} elements running at once",
        "another element of the array ends"),
    "None": Explanation(
        "the scheduler: it was just submitted, or its pods are being created and placed",
        "its nodes are placed, which needs no action"),
}


def _asks(record: JobRecord) -> str:
    parts = [f"{record.node_count} node(s)", f"{record.cpus} CPU(s)"]
    memory = jv.total_memory_mb(record)
    if memory:
        parts.append(f"{jv.memory_text(memory)} of memory")
    if record.gres:
        parts.append(record.gres)
    return ", ".join(parts)


def _facts(record: JobRecord) -> Dict[str, str]:
    begin = record.begin_time or record.eligible_time
    return {
        "asks": _asks(record), "partition": record.partition or "?",
        "dependency": record.dependency or "none recorded",
        "begin": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(begin)) if begin
        else "not recorded",
        "job": record.job_id_text,
        "limit": str(record.array_throttle) if record.array_throttle else "?",
    }


def pending_sentence(record: JobRecord) -> str:
    """One sentence for a pending job ("" for any other)."""
    if record.state != PENDING:
        return ""
    explanation = REASONS.get(record.reason)
    if explanation is None:
        return f"Pending ({record.reason})."
    facts = _facts(record)
    return (f"Waiting for {explanation.waits_for.format(**facts)}; it starts when "
            f"{explanation.starts_when.format(**facts)}.")
