"""Cluster objects → Slurm job state and reason: one ordered table, one total lookup.

What the cluster shows is first reduced to *facts* (short names: ``unschedulable``,
``oom``, ``reported:TIMEOUT``…), read from the workload (:mod:`.workload_view`), its pods
(:mod:`.pod_view`) and node 0's termination message; :data:`STATE_TABLE` then gives the Slurm
state and reason of the first row whose fact holds. The last row always holds, so the lookup
is total. The order is the policy:

1. ``COMPLETING`` first: as Slurm's state flags do, it hides the base state while the job's
   pods are still winding down.
2. Node 0's report (the runtime's own verdict) is authoritative for COMPLETED and TIMEOUT; a
   FAILED or CANCELLED report is refined by what the cluster saw (a deadline, a lost node, a
   preemption, an OOM kill), since the runtime only saw its nodes vanish or got SIGTERM.
3. Without a report: node 0's container exit, then the workload's final condition.
4. Pending jobs: why they wait (held, begin time, dependency, Kueue queue, resources).
5. Running: every pod running; CONFIGURING while all are placed but not all started.

Cause facts (``node_lost``, ``preempted``, ``oom``) count only once the job has *ended*
(node 0 ended or the workload's final condition), so a pod replaced early does not mark a job
that still runs. A suspended workload has not ended whatever its old pods say (Kueue evicts
by suspending, and the job will run again).
"""

from __future__ import annotations

from typing import AbstractSet, Any, Dict, Mapping, NamedTuple, Optional, Sequence, Set, Tuple

from parsers.job_records import (
    CANCELLED,
    COMPLETED,
    COMPLETING,
    FAILED,
    NODE_FAIL,
    OUT_OF_MEMORY,
    PENDING,
    PREEMPTED,
    RUNNING,
    TIMEOUT,
)
from sbatch_k8s.backends.kubernetes.read.pod_view import (
    Pod,
    condition,
    container_statuses,
    is_alive,
    main_container,
    status_of,
    terminated,
    termination_report,
)
from sbatch_k8s.backends.kubernetes.read.workload_view import (
    DEADLINE_EXCEEDED,
    FAILED as WORKLOAD_FAILED,
    NODE0_EXITED,
    SUCCEEDED as WORKLOAD_SUCCEEDED,
    SUSPENDED,
)

CONFIGURING = "CONFIGURING"
ALWAYS = "submitted"


class Row(NamedTuple):
    """One line of the state table: when ``fact`` holds, the job is ``state`` (``reason``)."""

    fact: str
    state: str
    reason: str
    shows: str


#: The state table, in precedence order (the first row whose fact holds wins).
STATE_TABLE: Tuple[Row, ...] = (
    Row("completing", COMPLETING, "None",
        "the job ended or is being deleted while some of its pods still run or terminate"),
    Row("reported:COMPLETED", COMPLETED, "None", "node 0's termination message: COMPLETED"),
    Row("reported:TIMEOUT", TIMEOUT, "TimeLimit", "node 0's termination message: TIMEOUT"),
    Row("reported:OUT_OF_MEMORY", OUT_OF_MEMORY, "OutOfMemory",
        "node 0's termination message: OUT_OF_MEMORY (a kill in the batch step's cgroup)"),
    Row(DEADLINE_EXCEEDED, TIMEOUT, "TimeLimit",
        "Job condition Failed reason DeadlineExceeded (or a JobSet/Kubeflow failure naming "
        "the deadline); pod status.reason DeadlineExceeded (pod activeDeadlineSeconds)"),
    Row("node_lost", NODE_FAIL, "NodeDown",
        "pod status.reason NodeLost, phase Unknown, DisruptionTarget reason "
        "DeletionByTaintManager/DeletionByPodGC, or a node shutdown"),
    Row("preempted", PREEMPTED, "None",
        "pod condition DisruptionTarget reason PreemptionByScheduler/EvictionByEvictionAPI/"
        "TerminationByKubelet, or pod status.reason Evicted/Preempting; a Job failed by "
        "its pod failure policy's DisruptionTarget rule"),
    Row("oom", OUT_OF_MEMORY, "OutOfMemory",
        "a container terminated with reason OOMKilled, a non-zero exitCode and no message "
        "(its runtime was the OOM killer's victim)"),
    Row("reported:NODE_FAIL", NODE_FAIL, "NodeDown",
        "node 0's termination message: NODE_FAIL (it lost another node)"),
    Row("reported:PREEMPTED", PREEMPTED, "None",
        "node 0's termination message: PREEMPTED (the cluster stopped another node's pod)"),
    Row("reported:CANCELLED", CANCELLED, "None", "node 0's termination message: CANCELLED"),
    Row("reported:FAILED", FAILED, "NonZeroExitCode", "node 0's termination message: FAILED"),
    Row("exited_nonzero", FAILED, "NonZeroExitCode",
        "node 0's container terminated with a non-zero exitCode and no message"),
    Row(WORKLOAD_FAILED, FAILED, "NonZeroExitCode", "the workload's Failed condition"),
    Row("exited_zero", COMPLETED, "None", "node 0's container terminated with exitCode 0"),
    Row(WORKLOAD_SUCCEEDED, COMPLETED, "None", "the workload's Complete/Succeeded condition"),
    Row("deleting", COMPLETING, "None",
        "deletionTimestamp on the workload or on a pod (scancel), nothing ended yet"),
    Row("requeued_held", PENDING, "job requeued in held state",
        "held (as held_user) after scontrol requeuehold; the record says so"),
    Row("held_user", PENDING, "JobHeldUser",
        "workload suspended with annotation sbatch-k8s.io/hold: user (sbatch --hold)"),
    Row("begin_time", PENDING, "BeginTime", "suspended or gated; the record waits for --begin"),
    Row("dependency", PENDING, "Dependency", "suspended or gated; the record has dependencies"),
    Row("dependency_never", PENDING, "DependencyNeverSatisfied",
        "suspended or gated; the record's dependencies can no longer be satisfied"),
    Row("queued", PENDING, "Priority",
        "suspended with label kueue.x-k8s.io/queue-name: Kueue has not admitted it"),
    Row("held_other", PENDING, "JobHeldAdmin",
        "suspended by someone else (kubectl), or pods held by a scheduling gate"),
    Row("unschedulable", PENDING, "Resources", "a pod's PodScheduled=False reason Unschedulable"),
    Row("all_running", RUNNING, "None", "every node's pod is Running"),
    Row("all_scheduled", CONFIGURING, "None",
        "every node's pod is bound to a node, not all running yet (pulling, initializing)"),
    Row(ALWAYS, PENDING, "None", "the pods are not all created or scheduled yet"),
)

#: Reasons of the DisruptionTarget pod condition and of ``status.reason``, and their fact.
DISRUPTIONS: Dict[str, str] = {
    "PreemptionByScheduler": "preempted",
    "EvictionByEvictionAPI": "preempted",
    "TerminationByKubelet": "preempted",
    "Evicted": "preempted",
    "Preempting": "preempted",
    "DeletionByTaintManager": "node_lost",
    "DeletionByPodGC": "node_lost",
    "NodeLost": "node_lost",
    "NodeShutdown": "node_lost",
    "Shutdown": "node_lost",
    "Terminated": "node_lost",
    "DeadlineExceeded": DEADLINE_EXCEEDED,
}
#: Of the facts above, those that make the job's end the cluster's doing.
CAUSES = frozenset({"preempted", "node_lost", "oom"})
#: A pending record's reason (what the submitting side knew) → its fact while held.
WAITING_REASONS: Dict[str, str] = {
    "BeginTime": "begin_time",
    "Dependency": "dependency",
    "DependencyNeverSatisfied": "dependency_never",
    "job requeued in held state": "requeued_held",
}


def state_for(facts: AbstractSet[str]) -> Tuple[str, str]:
    """The Slurm state and reason of the first table row whose fact holds (total)."""
    for row in STATE_TABLE:
        if row.fact in facts or row.fact == ALWAYS:
            return row.state, row.reason
    raise AssertionError("the state table ends with a row that always holds")


def pod_facts(pod: Pod) -> Set[str]:
    """What one pod shows: disruption, node loss, deadline, OOM kill, unschedulable, gated,
    being deleted."""
    facts: Set[str] = set()
    status = status_of(pod)
    disruption = condition(pod, "DisruptionTarget")
    for reason in (status.get("reason"), disruption and disruption.get("reason")):
        if reason in DISRUPTIONS:
            facts.add(DISRUPTIONS[str(reason)])
    if disruption is not None and not facts:
        facts.add("preempted")
    if status.get("phase") == "Unknown":
        facts.add("node_lost")
    for container in container_statuses(pod):
        for state in (container.get("state") or {}, container.get("lastState") or {}):
            end = state.get("terminated") or {}
            # containerd says OOMKilled whenever its cgroup counted a kill, even when the
            # runtime lived on (node 0 then reported the kill in its message): only a
            # runtime the OOM killer killed, ending non-zero with no message, is the job's
            # out-of-memory end.
            if end.get("reason") == "OOMKilled" and end.get("exitCode") not in (0, None) \
                    and not end.get("message"):
                facts.add("oom")
    for item in status.get("conditions") or []:
        if item.get("type") == "PodScheduled" and item.get("status") == "False":
            facts.add("gated" if item.get("reason") == "SchedulingGated" else "unschedulable")
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        facts.add("deleting")
    return facts


def _node0_facts(node0: Optional[Pod], report: Optional[Mapping[str, Any]]) -> Set[str]:
    """Whether node 0 ended, and how: its report, else its container's exit."""
    if node0 is None:
        return set()
    reported = {f"reported:{report['state']}"} if report is not None else set()
    end = terminated(main_container(node0))
    if end is not None:
        return reported | {"ended", "exited_zero" if end.get("exitCode") == 0 else
                           "exited_nonzero"}
    phase = status_of(node0).get("phase")
    if phase == "Succeeded":
        return {"ended", "exited_zero"}
    if phase in ("Failed", "Unknown") or condition(node0, "DisruptionTarget"):
        return {"ended", "exited_nonzero"}
    return set()


def job_facts(workload_facts: AbstractSet[str], nodes: Mapping[int, Pod],
              pods: Sequence[Pod], node_count: int, report: Optional[Mapping[str, Any]],
              waiting_reason: str = "None") -> Set[str]:
    """Every fact of one job: its workload's facts, the facts of its pods (``pods``: all of
    them, replaced ones included; ``nodes``: the current pod of each node index), node 0's
    report and, for a held job, why its record said it waits (``waiting_reason``, e.g.
    ``Dependency``), combined as the module docstring says."""
    facts = set(workload_facts)
    current = list(nodes.values())
    for pod in current:
        facts |= pod_facts(pod) - CAUSES
    causes: Set[str] = set()
    for pod in pods:
        causes |= pod_facts(pod) & CAUSES
    facts |= _node0_facts(nodes.get(0), report)
    suspended = SUSPENDED in facts
    if facts & {WORKLOAD_SUCCEEDED, WORKLOAD_FAILED, DEADLINE_EXCEEDED}:
        facts.add("ended")
    if suspended:
        facts -= {"ended", "exited_zero", "exited_nonzero", DEADLINE_EXCEEDED} | {
            f for f in facts if f.startswith("reported:")}
        if not facts & {"held_user", "queued"}:
            facts.add("held_other")
    if NODE0_EXITED in facts and 0 not in nodes and report is None and \
            not causes and not facts & CAUSES:
        # The pod failure policy failed the workload on node 0's exit (the controller leaves
        # a failed pod in place), yet node 0's pod is gone with its message and no pod shows
        # a disruption: node 0's pod was deleted (``kubectl delete pod``) while it ran. A
        # job's own end leaves node 0's pod (scancel records its end first), so this is a
        # node failure, as slurmctld sees a batch host vanish.
        causes.add("node_lost")
    if "ended" in facts:
        facts |= causes
    if "gated" in facts and not suspended:
        facts.add("queued" if "kueue" in facts else "held_other")
    if (suspended or "gated" in facts) and waiting_reason in WAITING_REASONS:
        facts.add(WAITING_REASONS[waiting_reason])
    elif waiting_reason == "BeginTime" and not any(
            (p.get("spec") or {}).get("nodeName") for p in current):
        # Requeued (:mod:`..requeue.requeue`): PD (BeginTime) as slurmctld shows it, until placed.
        facts.add("begin_time")
    if ("ended" in facts or "deleting" in facts) and any(is_alive(p) for p in current):
        facts.add("completing")
    if len(current) == node_count and current:
        if all(status_of(p).get("phase") == "Running" and is_alive(p) for p in current):
            facts.add("all_running")
        if all((p.get("spec") or {}).get("nodeName") for p in current):
            facts.add("all_scheduled")
    return facts


def job_state(facts: AbstractSet[str], report: Optional[Mapping[str, Any]]) -> Tuple[str, str]:
    """The state and reason for ``facts``; a report's own reason replaces the row's when
    the report decided the state."""
    state, reason = state_for(facts)
    if report is not None and state == report.get("state") and report.get("reason"):
        reason = str(report["reason"])
    return state, reason


def exit_status(node0: Optional[Pod], report: Optional[Mapping[str, Any]]) -> Tuple[int, int]:
    """The job's exit code and signal: the report's, else node 0's container exit (a code
    above 128 without a report is the runtime killed by signal code-128), else 0:0."""
    if report is not None:
        return int(report.get("exit_code") or 0), int(report.get("signal") or 0)
    end = terminated(main_container(node0)) if node0 is not None else None
    if end is None:
        return 0, 0
    code = int(end.get("exitCode") or 0)
    if end.get("signal"):
        return 0, int(end["signal"])
    return (0, code - 128) if code > 128 else (code, 0)


def node0_report(nodes: Mapping[int, Pod]) -> Optional[Dict[str, Any]]:
    """Node 0's termination message, when its current pod has one."""
    return termination_report(nodes.get(0))
