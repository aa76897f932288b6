"""A cluster job's record: the ConfigMap ``sbatch-k8s-job-<jobid>`` that ``sacct`` reads.

The record is created at submission (state PENDING) with **no ownerReference**, so it
outlives Kubernetes' garbage collection of the workload and ``sacct`` answers from any machine
with the kubeconfig. Its labels let one LIST find records by job, user, partition, array and
state (``active`` until the job is final, then the final Slurm state); the annotation
``sbatch-k8s.io/end-time`` (epoch seconds, set when final) drives retention.

Data keys: ``record.json`` holds the :class:`~parsers.job_records.JobRecord` fields (steps as a
list of :class:`~parsers.job_records.StepRecord` field dicts, and ``steps_dropped`` when node 0's
report had to leave early steps out); ``workload.json`` names the workload
(``apiVersion kind name namespace``). The reference has its own key so that
:func:`final_patch`, a JSON merge patch that replaces ``record.json`` whole, need not know it.
``report.json``, when node 0 had API access, is its own report of the job's end (the JSON of
its termination message with its nodes); a record that has it is read as ended so
(:func:`reported_record`), whatever happened to the pods since. ``running-steps.json``, when
node 0 has API access, lists its running and last ended numbered steps while the job runs
(:mod:`sbatch_k8s.runtime.cluster.step_publisher`): read into the stored record's steps, shown by
``squeue -s`` and ``sacct`` through :func:`live_record` (and the ended ones node 0's report
left out kept by it and :func:`reported_record`), and removed by :func:`final_patch`.

While the job is active, :func:`live_record` overlays what the workload and its pods show
(:mod:`..read.job_state`). A job whose workload and pods are all gone while its record is still
active ended unobserved (deleted by its TTL before any command looked, or by hand): it is recorded
as NODE_FAIL (reason NodeDown), as slurmctld records a batch job that vanished from its node; its
real end is unknown, so its end time is when it was found gone.
"""

from __future__ import annotations

from parsers.vocabulary import (
    RECORD_PREFIX,
    KIND as KIND_LABEL,
    RECORD_KIND,
    STATE as STATE_LABEL,
    ACTIVE,
    END_TIME as END_TIME_ANNOTATION,
    RECORD_KEY,
    WORKLOAD_KEY,
    REPORT_KEY,
    RUNNING_STEPS_KEY,
)
import json
from dataclasses import fields
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from parsers.job_records import (
    BOOT_FAIL,
    CANCELLED,
    COMPLETED,
    DEADLINE,
    FAILED,
    NODE_FAIL,
    OUT_OF_MEMORY,
    PENDING,
    PREEMPTED,
    TIMEOUT,
    JobRecord,
    StepRecord,
    build,
    derived_exit_code,
    missing_steps,
    with_changes,
)
from sbatch_k8s.backends.kubernetes.read.pod_view import (
    Pod,
    epoch,
    hostname,
    main_container,
    nodes_by_index,
    restarted_in_place,
    running_since,
    start_failure,
    status_of,
    terminated,
)
from sbatch_k8s.backends.kubernetes.history.record_steps import (
    job_steps,
    published_steps,
)
from sbatch_k8s.backends.kubernetes.read.owners import ownership_fields
from sbatch_k8s.backends.kubernetes.read.job_state import (
    exit_status,
    job_facts,
    job_state,
    node0_report,
)
from sbatch_k8s.backends.kubernetes.read.workload_view import workload_end, workload_facts
from parsers.vocabulary import JOB_ID
from translators.metadata import common_labels

WORKLOAD_REF_KEYS = ("apiVersion", "kind", "name", "namespace")
#: States a job never leaves (sacct's terminal states).
FINAL_STATES = frozenset({COMPLETED, CANCELLED, FAILED, TIMEOUT, NODE_FAIL, PREEMPTED,
                          OUT_OF_MEMORY, BOOT_FAIL, DEADLINE})
#: Ends the cluster decided (a pod evicted or preempted): no exit code of the script is
#: recorded, alike whether node 0's report outlived its pod or not (the Job controller deletes
#: node 0's pod when another pod's disruption failed the Job first).
NO_EXIT_STATUS = frozenset({PREEMPTED})
#: What a job that vanished unobserved is recorded as (see the module docstring).
VANISHED = (NODE_FAIL, "NodeDown")
HELD_REASONS = ("JobHeldUser", "JobHeldAdmin", "job requeued in held state")

_JOB_FIELDS = tuple(f.name for f in fields(JobRecord))
_STEP_FIELDS = tuple(f.name for f in fields(StepRecord))


def record_name(job_id: int) -> str:
    """The record ConfigMap's name: ``sbatch-k8s-job-<jobid>``."""
    return f"{RECORD_PREFIX}{job_id}"


def is_final(record: JobRecord) -> bool:
    """Whether the job has ended for good (its record is then never rewritten)."""
    return record.state in FINAL_STATES


def _record_data(record: JobRecord) -> Dict[str, Any]:
    data: Dict[str, Any] = {name: getattr(record, name) for name in _JOB_FIELDS}
    data["steps"] = [{name: getattr(s, name) for name in _STEP_FIELDS} for s in record.steps]
    data["requeued_runs"] = [_record_data(run) for run in record.requeued_runs]
    dropped = missing_steps(record.steps)
    if dropped:
        data["steps_dropped"] = dropped
    return data


def record_to_json(record: JobRecord) -> str:
    """``record.json``: every field, steps as field dicts, earlier runs of a requeued job
    (:mod:`..requeue.next_run`) as records alike, and ``steps_dropped``."""
    return json.dumps(_record_data(record), sort_keys=True, separators=(",", ":"))


def _record_from_data(values: Mapping[str, Any]) -> JobRecord:
    steps = tuple(build(StepRecord, **{k: v for k, v in step.items() if k in _STEP_FIELDS})
                  for step in values.get("steps") or [])
    runs = tuple(_record_from_data(run) for run in values.get("requeued_runs") or [])
    known = {k: v for k, v in values.items() if k in _JOB_FIELDS}
    return build(JobRecord, **dict(known, steps=steps, requeued_runs=runs))


def record_labels(record: JobRecord) -> Dict[str, str]:
    """The record's labels: the job's common labels, ``kind: record`` and its state."""
    labels = common_labels(record.job_id, record.user, record.partition, None,
                           record.array_job_id, record.array_task_id)
    labels[KIND_LABEL] = RECORD_KIND
    labels[STATE_LABEL] = record.state if is_final(record) else ACTIVE
    return labels


def _final_annotations(record: JobRecord) -> Dict[str, str]:
    end = record.end_time if record.end_time is not None else record.submit_time
    return {END_TIME_ANNOTATION: str(end)} if is_final(record) and end is not None else {}


def record_config_map(record: JobRecord, workload_ref: Mapping[str, str],
                      ownership: Optional[Mapping[str, str]] = None) -> Dict[str, Any]:
    """The record's manifest, created with the job (namespace: where the client creates it),
    with the ``ownership`` annotations of the job's objects (:mod:`translators.ownership`)."""
    metadata: Dict[str, Any] = {"name": record_name(record.job_id),
                                "labels": record_labels(record)}
    annotations = dict(ownership or {}, **_final_annotations(record))
    if annotations:
        metadata["annotations"] = annotations
    ref = {k: str(workload_ref[k]) for k in WORKLOAD_REF_KEYS if workload_ref.get(k)}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata,
            "data": {RECORD_KEY: record_to_json(record),
                     WORKLOAD_KEY: json.dumps(ref, sort_keys=True, separators=(",", ":"))}}


def record_from_config_map(cm: Mapping[str, Any]) -> Tuple[JobRecord, Dict[str, str]]:
    """The job record and workload reference a record ConfigMap holds; ValueError naming
    the ConfigMap when it holds no readable record. Unknown keys are ignored (a newer
    writer), missing optional ones take their defaults (an older one)."""
    data = cm.get("data") or {}
    name = (cm.get("metadata") or {}).get("name", "?")
    try:
        values = json.loads(data[RECORD_KEY])
        record = _record_from_data(values)
        ref = json.loads(data[WORKLOAD_KEY]) if WORKLOAD_KEY in data else \
            values.get("workload") or {}
        if RUNNING_STEPS_KEY in data and not is_final(record):
            record = with_changes(record, steps=published_steps(data[RUNNING_STEPS_KEY]))
        if REPORT_KEY in data and not is_final(record):
            record = reported_record(record, json.loads(data[REPORT_KEY]))
        record = with_changes(record, **ownership_fields(cm))
    except (KeyError, ValueError, TypeError, AttributeError) as e:
        raise ValueError(f"ConfigMap {name} holds no readable job record: {e}") from e
    return record, {k: str(v) for k, v in ref.items()}


def final_patch(record: JobRecord) -> Dict[str, Any]:
    """The JSON merge patch writing a final record back: data, state label, end time (and
    node 0's running steps removed)."""
    metadata: Dict[str, Any] = {"labels": {STATE_LABEL: record.state if is_final(record)
                                           else ACTIVE}}
    annotations = _final_annotations(record)
    if annotations:
        metadata["annotations"] = annotations
    return {"metadata": metadata, "data": {RECORD_KEY: record_to_json(record),
                                           RUNNING_STEPS_KEY: None}}


def _first_index(stored: JobRecord, pods: Sequence[Pod]) -> int:
    """Where the job's node 0 sits among its pods' indices: 0, except for an element of an
    array run as one Indexed Job (its pods carry the array's job id), whose one node is
    completion index ``job_id - array_job_id``."""
    if stored.array_job_id is None or stored.job_id == stored.array_job_id:
        return 0
    shared = str(stored.array_job_id)
    if any(((p.get("metadata") or {}).get("labels") or {}).get(JOB_ID) == shared
           for p in pods):
        return stored.job_id - stored.array_job_id
    return 0


def _node_list(stored: JobRecord, nodes: Mapping[int, Pod],
               report: Optional[Mapping[str, Any]]) -> str:
    """The pods' hostnames in node order, compressed Slurm-style (``llm-1234-[0-3]``). When
    not every node's pod is there any more (a job the cluster ended: its pods go one by one),
    the nodes node 0 reported, else what the record had, else the pods left."""
    from parsers.values.hostlist import compress_hostlist

    if len(nodes) < stored.node_count:
        known = str((report or {}).get("node_list") or "") or stored.node_list
        if known:
            return known
        return compress_hostlist(_indexed_hostnames(nodes, stored.node_count))
    return compress_hostlist([hostname(nodes[i]) for i in sorted(nodes)])


def _indexed_hostnames(nodes: Mapping[int, Pod], count: int) -> List[str]:
    """Every node's hostname when the pods left are named ``<prefix>-<node index>`` alike (an
    Indexed Job's: the missing ones are named so too); else those of the pods left."""
    names = {i: hostname(pod) for i, pod in nodes.items()}
    prefixes = {name[:-len(f"-{i}")] for i, name in names.items() if name.endswith(f"-{i}")}
    if len(prefixes) == 1 and len(names) == sum(1 for i, n in names.items()
                                                 if n.endswith(f"-{i}")):
        prefix = prefixes.pop()
        return [f"{prefix}-{i}" for i in range(count)]
    return [names[i] for i in sorted(names)]


def _times(stored: JobRecord, node0: Optional[Pod], report: Optional[Mapping[str, Any]],
           workload: Optional[Mapping[str, Any]], final: bool,
           now: int) -> Tuple[Optional[int], Optional[int]]:
    """Start: node 0's report, its container's start, its pod's start. End (once ended):
    the report, node 0's container end, the workload's end, else now."""
    container = main_container(node0) if node0 is not None else None
    start = (report or {}).get("start_time") or running_since(container) or \
        (epoch(status_of(node0).get("startTime")) if node0 is not None else None) or \
        stored.start_time
    finished = terminated(container)
    end = (report or {}).get("end_time") or \
        (epoch(finished.get("finishedAt")) if finished else None) or workload_end(workload)
    if final and end is None:
        end = now
    return start, end


def _derived(steps: Sequence[StepRecord]) -> int:
    return derived_exit_code((s.step_id, s.exit_code) for s in steps)


def reported_record(stored: JobRecord, report: Mapping[str, Any]) -> JobRecord:
    """``stored`` ended as node 0's report (:data:`REPORT_KEY`) says: state and reason as
    its termination message would give them, times, exit code, nodes and steps."""
    state, reason = job_state({f"reported:{report.get('state')}"}, report)
    start = report.get("start_time") or stored.start_time
    code, signal = exit_status(None, report)
    ended = with_changes(
        stored, state=state, reason=reason, start_time=start, end_time=report.get("end_time"),
        node_list=report.get("node_list") or stored.node_list,
        batch_host=report.get("batch_host") or stored.batch_host, exit_code=code,
        exit_signal=signal, system_comment=str(report.get("system_comment") or ""),
        eligible_time=stored.eligible_time if stored.eligible_time is not None else start)
    steps = job_steps(ended, True, report, stored.steps)
    return with_changes(ended, steps=steps, derived_exit_code=_derived(steps))


def live_record(stored: JobRecord, workload: Optional[Mapping[str, Any]],
                pods: Sequence[Mapping[str, Any]], now: int) -> JobRecord:
    """``stored`` with the live state of its workload and pods overlaid: state, reason,
    nodes, batch host, times, exit code and steps (from node 0's termination message).
    ``workload`` None with pods: the pods alone tell (the workload is gone, or shared by the
    elements of an array); with no pods either, the job vanished (module docstring)."""
    if is_final(stored):
        return stored
    if workload is None and not pods:
        state, reason = VANISHED
        ended = with_changes(stored, state=state, reason=reason, end_time=now)
        return with_changes(ended, steps=job_steps(ended, True, None, stored.steps))
    nodes = nodes_by_index(pods, stored.node_count, _first_index(stored, pods))
    report = node0_report(nodes)
    facts = job_facts(workload_facts(workload), nodes, pods, stored.node_count, report,
                      stored.reason)
    state, reason = job_state(facts, report)
    if state == PENDING:
        return with_changes(stored, state=state, reason=reason, steps=(),
                            priority=0 if reason in HELD_REASONS else stored.priority)
    final = state in FINAL_STATES
    start, end = _times(stored, nodes.get(0), report, workload, final, now)
    code, signal = exit_status(nodes.get(0), report) \
        if end is not None and state not in NO_EXIT_STATUS else (0, 0)
    live = with_changes(
        stored, state=state, reason=reason, node_list=_node_list(stored, nodes, report),
        batch_host=hostname(nodes[0]) if 0 in nodes else stored.batch_host,
        start_time=start, end_time=end, exit_code=code, exit_signal=signal,
        restarts=stored.restarts + restarted_in_place(nodes.get(0)),
        system_comment=str((report or {}).get("system_comment") or
                           start_failure(nodes.get(0)) or stored.system_comment),
        eligible_time=stored.eligible_time if stored.eligible_time is not None else start)
    steps = job_steps(live, final, report, stored.steps)
    derived = _derived(steps) if final else 0
    return with_changes(live, steps=steps, derived_exit_code=derived)

