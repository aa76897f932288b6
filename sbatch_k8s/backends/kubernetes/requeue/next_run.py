"""What a requeue makes of a job on a cluster: its record, its earlier run, its workload's copy.

Pure: :mod:`.requeue` reads the cluster and writes what these functions return. As
slurmctld's requeue does, the record goes back to PENDING with reason ``BeginTime``, the
restart count one higher and the submit time now; the copy of the workload is its manifest
without what the API server generated for the old one, its pods' environment carrying the
restart count (:func:`with_restart_count`: the runtime exports it as ``SLURM_RESTART_COUNT``
and ``%r`` of the output file names). The
run that ended is kept in the record's ``requeued_runs``, ended ``REQUEUED`` at the requeue
with its steps (a running one's closed as a cancel closes them), for ``sacct --duplicates``.
``requeuehold`` creates the copy held (suspended, hold annotation ``user``), pending with
slurmctld's reason ``job requeued in held state`` until ``scontrol release``.

Slurm keeps a requeued job ``PD (BeginTime)`` until its earlier run's credentials expired:
121 s after the requeue (``SBATCHK8S_REQUEUE_DELAY`` seconds instead, as on the local
backend). The copy is created suspended with the ``--begin`` gate
(:mod:`translators.gates`: annotation ``sbatch-k8s.io/begin``, on a Kueue partition without
Kueue's labels), its record ``begin_time`` that moment and labelled waiting, so the usual
release pass (any command's look, the controller; :mod:`sbatch_k8s.runtime.cluster.release`) lets it
start when the time comes. With no delay the copy is created free to start.

The cluster requeues too: a job that may be requeued whose run ended ``NODE_FAIL`` or
``PREEMPTED`` (:data:`REQUEUED_ENDS`: a lost node, an evicted or preempted pod; the pod failure
policy fails the Job on a disruption) is requeued by the next reconcile pass
(:mod:`..read.cluster_jobs`), that run kept as it ended.
"""

from __future__ import annotations

import copy
from typing import Any, Dict, List, Mapping, Optional

from parsers.job_records import PENDING, REQUEUED, JobRecord, with_changes
from sbatch_k8s.backends.kubernetes.read.workload_view import SUSPEND_FIELD
from sbatch_k8s.backends.requeue_rules import REQUEUED_ENDS
from sbatch_k8s.runtime.cluster.release import HELD_REQUEUE_REASON
from sbatch_k8s.runtime.cluster.workload_gates import hold_patch
from parsers.vocabulary import BEGIN, HOLD

#: Labels and annotations the API server's controllers add to a workload and its template.
GENERATED_KEYS = ("controller-uid", "batch.kubernetes.io/controller-uid", "job-name",
                  "batch.kubernetes.io/job-name")
#: The reason a requeued job pends with, as slurmctld shows it (with ``requeuehold``:
#: :data:`~sbatch_k8s.runtime.cluster.release.HELD_REQUEUE_REASON`).
REQUEUED_REASON = "BeginTime"


def _without_generated(mapping: Optional[Mapping[str, str]]) -> Dict[str, str]:
    return {k: v for k, v in (mapping or {}).items() if k not in GENERATED_KEYS}


def fresh_workload(workload: Mapping[str, Any], hold: bool = False,
                   begin: Optional[str] = None) -> Dict[str, Any]:
    """A manifest creating ``workload`` anew: its name, our labels and annotations and its
    spec, without what the API server generated (uid, status, a Job's selector and the
    labels that select its pods); not suspended, or with ``hold`` suspended and held by its
    user, or with ``begin`` (local time, ISO) suspended and gated until then — held or gated,
    out of Kueue's hands (:func:`sbatch_k8s.runtime.cluster.workload_gates.hold_patch`)."""
    meta = workload.get("metadata") or {}
    annotations = _without_generated(meta.get("annotations"))
    annotations.pop(HOLD, None)
    annotations.pop(BEGIN, None)
    if hold:
        annotations[HOLD] = "user"
    if begin is not None:
        annotations[BEGIN] = begin
    spec = copy.deepcopy(workload.get("spec") or {})
    if workload.get("kind") == "Job":
        spec.pop("selector", None)
        template_meta = (spec.get("template") or {}).get("metadata")
        if template_meta is not None:
            template_meta["labels"] = _without_generated(template_meta.get("labels"))
    labels = _without_generated(meta.get("labels"))
    waits = hold or begin is not None
    if waits:
        kept = hold_patch(str(workload["kind"]), {"labels": labels, "annotations": annotations})
        for key, value in ((kept.get("metadata") or {}).get("labels") or {}).items():
            if value is None:
                labels.pop(key, None)
        annotations.update((kept.get("metadata") or {}).get("annotations") or {})
    body: Dict[str, Any] = {"apiVersion": workload["apiVersion"], "kind": workload["kind"],
                            "metadata": {"name": meta["name"], "labels": labels,
                                         "annotations": annotations},
                            "spec": spec}
    *path, leaf = SUSPEND_FIELD.get(str(workload["kind"]), ("spec", "suspend"))
    holder = body
    for key in path:
        holder = holder.setdefault(key, {})
    holder[leaf] = waits
    return body


#: The requeues a workload's copy is the run after, in its pods' environment (the job's
#: ConfigMap is immutable): the runtime adds it to the description's restart count
#: (``sbatch_k8s.runtime.agent.node_setup.REQUEUED_VARIABLE``).
REQUEUED_VARIABLE = "SBATCHK8S_REQUEUED"


def _pod_specs(node: Any) -> List[Dict[str, Any]]:
    """Every pod spec (a mapping with ``containers``) inside a workload's ``spec``."""
    if isinstance(node, dict):
        if isinstance(node.get("containers"), list):
            return [node]
        return [found for value in node.values() for found in _pod_specs(value)]
    if isinstance(node, list):
        return [found for value in node for found in _pod_specs(value)]
    return []


def with_restart_count(workload: Dict[str, Any], count: int) -> Dict[str, Any]:
    """``workload`` whose every container has ``count`` as :data:`REQUEUED_VARIABLE`."""
    for spec in _pod_specs(workload.get("spec")):
        for container in spec["containers"]:
            env = [e for e in container.get("env") or [] if e.get("name") != REQUEUED_VARIABLE]
            container["env"] = env + [{"name": REQUEUED_VARIABLE, "value": str(count)}]
    return workload


def earlier_run(record: JobRecord, now: int) -> JobRecord:
    """The run of ``record`` a requeue at ``now`` ends, as slurmdbd keeps it: a run the
    cluster ended (:data:`REQUEUED_ENDS`) as it ended, else ``REQUEUED`` at ``now``; a run
    still going is closed as a cancel closes it (its exit code 0:0, its running steps
    CANCELLED), an ended one keeps its exit code and steps."""
    from sbatch_k8s.backends.kubernetes.history.record_steps import cancelled_steps
    from sbatch_k8s.backends.kubernetes.history.records import is_final

    if record.state in REQUEUED_ENDS:
        return with_changes(record, requeued_runs=())
    run = with_changes(record, state=REQUEUED, end_time=now, requeued_runs=())
    if is_final(record):
        return run
    return with_changes(run, exit_code=0, exit_signal=0, derived_exit_code=0,
                        cancelled_by=None, steps=cancelled_steps(record.steps, now))


def requeued_record(record: JobRecord, now: int, hold: bool = False,
                    delay_s: float = 0.0) -> JobRecord:
    """The record of a job requeued at ``now``: pending again (held with ``hold``) until
    ``delay_s`` later, one more restart, the run that ended kept among its earlier runs. A
    dependency it had was met (it ran): it waits for nothing else."""
    eligible = now + int(delay_s)
    return with_changes(record, state=PENDING,
                        reason=HELD_REQUEUE_REASON if hold else REQUEUED_REASON,
                        restarts=record.restarts + 1, submit_time=now, eligible_time=eligible,
                        begin_time=eligible if delay_s > 0 else None, dependency="",
                        start_time=None, end_time=None, exit_code=0, exit_signal=0,
                        derived_exit_code=0, steps=(), node_list="", batch_host="",
                        cancelled_by=None,
                        requeued_runs=record.requeued_runs + (earlier_run(record, now),))
