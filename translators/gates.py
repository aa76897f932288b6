"""Why a workload is created suspended: ``--hold``, ``--dependency``, ``--begin``.

A job that may not start yet is created with its workload suspended (no pods), as slurmctld
keeps it pending. Two kinds of reasons keep it so, and each leaves its own mark on the
workload, so whoever may resume it (a command's reconcile pass, node 0's runtime of the job
it waits for, the controller; :mod:`sbatch_k8s.runtime.cluster.release`) knows what still holds it:

* a hold (``--hold``, ``scontrol hold``): annotation ``sbatch-k8s.io/hold``, lifted only by
  ``scontrol release``;
* gates (``--dependency``, ``--begin``): annotations ``sbatch-k8s.io/dependency`` (the
  expression as slurmctld prints it) and ``sbatch-k8s.io/begin`` (the moment, local time as
  ``sbatch-k8s.io/submit-time``), removed when the job becomes eligible.

The workload is resumed once it carries neither. Pure: ``--begin`` is resolved against the
submit time the caller gives, so a begin time already past holds nothing.

**Kueue** (a partition with ``queue``). Kueue owns ``suspend`` of the workloads it queues: it
resumes one when it admits it, so a hold written in ``suspend`` would be undone at once. A
held or gated workload is therefore created suspended *without* Kueue's labels
(``kueue.x-k8s.io/queue-name``, ``…/priority-class``): Kueue manages only labelled jobs (with
its default ``manageJobsWithoutQueueName: false``), so it never sees the job while it may
not start — no Workload object, no quota reserved, no queue position taken by a job that may
wait for days. The labels wait in the annotation ``sbatch-k8s.io/release-labels`` (JSON);
releasing adds them and removes the annotation in one write, leaving ``suspend`` to Kueue,
which queues the job from then on (squeue: ``PD (Priority)`` until admitted). Kueue allows
the queue label to change while a job is suspended (its webhook refuses it only on a running
job), and ``scontrol hold`` of a queued job moves the labels back into the annotation.
Scheduling gates were the other candidate; they were not chosen because the pods of a gated
job exist only after Kueue admitted it, so a held job would hold its quota while it waits.

**Volcano** (``gang = "volcano"``). The PodGroup is created with the workload, but a
suspended workload has no pods, so nothing can start; the PodGroup reserves nothing either
(no ``minResources``: Volcano's enqueue step has nothing to reserve for it). Once released,
the pods are created with the PodGroup's annotation and start together or not at all.
"""

from __future__ import annotations

import datetime
import json
from typing import Dict, Mapping, Optional, Tuple

from parsers.jobspec import JobSpec
from parsers.vocabulary import BEGIN, DEPENDENCY, RELEASE_LABELS


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


def queue_metadata(queue_labels: Mapping[str, str], waits: bool
                   ) -> Tuple[Dict[str, str], Dict[str, str]]:
    """The workload's Kueue labels and annotations: the labels themselves when the job may
    start at once, else none and the :data:`RELEASE_LABELS` annotation holding them (module
    docstring)."""
    if not queue_labels:
        return {}, {}
    if not waits:
        return dict(queue_labels), {}
    return {}, {RELEASE_LABELS: json.dumps(dict(queue_labels), sort_keys=True,
                                           separators=(",", ":"))}
