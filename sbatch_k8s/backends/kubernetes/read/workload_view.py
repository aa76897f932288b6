"""What a workload object says about its job, in the words :mod:`.job_state` decides with.

Each kind spells the same few facts differently; :data:`WORKLOAD_CONDITIONS` is the one table
of how (condition types with status ``"True"``, as each controller writes them):

| fact               | batch/v1 Job                      | JobSet      | PyTorchJob / MPIJob |
|--------------------|-----------------------------------|-------------|---------------------|
| workload_succeeded | Complete, SuccessCriteriaMet      | Completed   | Succeeded           |
| workload_failed    | Failed, FailureTarget             | Failed      | Failed              |
| suspended          | Suspended (and ``spec.suspend``)  | Suspended   | Suspended           |

A failure is a deadline (``deadline_exceeded``) when its reason is ``DeadlineExceeded`` (the Job
controller; mpi-operator passes its launcher Job's reason on) or its reason or message names
the deadline (the training operator writes ``…Failed`` with a message saying the job "was
active longer than specified deadline"). Suspension is also read from ``spec.suspend``
(``spec.runPolicy.suspend`` for Kubeflow kinds), which is set before any condition appears.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Mapping, Optional, Set, Tuple

from sbatch_k8s.backends.kubernetes.read.pod_view import condition, epoch, status_of
from parsers.vocabulary import HOLD
from translators.metadata import KUEUE_QUEUE


SUCCEEDED, FAILED, SUSPENDED = "workload_succeeded", "workload_failed", "suspended"
DEADLINE_EXCEEDED = "deadline_exceeded"
#: The job ended because a pod was disrupted (the state table's ``preempted`` fact).
DISRUPTED = "preempted"
#: Failed by the pod failure policy's exit-code rule, node 0's container having ended
#: non-zero (:func:`_node0_exit_failure`).
NODE0_EXITED = "node0_exited_nonzero"

#: (kind, condition type, fact): how each workload kind says it ended or is suspended.
WORKLOAD_CONDITIONS: Tuple[Tuple[str, str, str], ...] = (
    ("Job", "Complete", SUCCEEDED),
    ("Job", "SuccessCriteriaMet", SUCCEEDED),
    ("Job", "Failed", FAILED),
    ("Job", "FailureTarget", FAILED),
    ("Job", "Suspended", SUSPENDED),
    ("JobSet", "Completed", SUCCEEDED),
    ("JobSet", "Failed", FAILED),
    ("JobSet", "Suspended", SUSPENDED),
    ("PyTorchJob", "Succeeded", SUCCEEDED),
    ("PyTorchJob", "Failed", FAILED),
    ("PyTorchJob", "Suspended", SUSPENDED),
    ("MPIJob", "Succeeded", SUCCEEDED),
    ("MPIJob", "Failed", FAILED),
    ("MPIJob", "Suspended", SUSPENDED),
)
#: Where each kind keeps its ``suspend`` flag.
SUSPEND_FIELD: Dict[str, Tuple[str, ...]] = {
    "Job": ("spec", "suspend"),
    "JobSet": ("spec", "suspend"),
    "PyTorchJob": ("spec", "runPolicy", "suspend"),
    "MPIJob": ("spec", "runPolicy", "suspend"),
}


def _field(obj: Mapping[str, Any], path: Tuple[str, ...]) -> Any:
    value: Any = obj
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _is_deadline(failure: Mapping[str, Any]) -> bool:
    reason = str(failure.get("reason") or "")
    message = str(failure.get("message") or "").lower()
    return reason == "DeadlineExceeded" or "deadline" in reason.lower() or \
        "deadline" in message


def _is_disruption(failure: Mapping[str, Any]) -> bool:
    """A Job failed by its pod failure policy's ``DisruptionTarget`` rule (a pod evicted,
    preempted or lost: the pod itself may be gone by now)."""
    return failure.get("reason") == "PodFailurePolicy" and \
        "DisruptionTarget" in str(failure.get("message") or "")


def _node0_exit_failure(failure: Mapping[str, Any], workload_name: str) -> bool:
    """A Job failed by its pod failure policy's exit-code rule on node 0's pod (the Job
    controller's message: ``Container main for pod <ns>/<job>-0-<5 chars> failed with exit
    code 143 matching FailJob rule at index 1``). The controller leaves a failed pod in place
    (it deletes only the running ones)."""
    message = str(failure.get("message") or "")
    if failure.get("reason") != "PodFailurePolicy" or "exit code" not in message:
        return False
    found = re.search(r"for pod [^/\s]+/(\S+)", message)
    return bool(found and re.fullmatch(re.escape(workload_name) + r"-0-[a-z0-9]{5}",
                                       found.group(1)))


def workload_facts(workload: Optional[Mapping[str, Any]]) -> Set[str]:
    """The facts a workload states: ended (succeeded/failed/deadline, failed by a disrupted
    pod), suspended, held by
    the user (``sbatch-k8s.io/hold: user``), queued by Kueue (``kueue``: in a Kueue queue;
    ``queued``: and suspended), being deleted."""
    if workload is None:
        return set()
    kind = str(workload.get("kind") or "")
    facts: Set[str] = set()
    for row_kind, kind_of_condition, fact in WORKLOAD_CONDITIONS:
        if row_kind != kind:
            continue
        found = condition(workload, kind_of_condition)
        if found is None:
            continue
        facts.add(DEADLINE_EXCEEDED if fact == FAILED and _is_deadline(found) else fact)
        if fact == FAILED and _is_disruption(found):
            facts.add(DISRUPTED)
        elif fact == FAILED and _node0_exit_failure(
                found, str((workload.get("metadata") or {}).get("name") or "")):
            facts.add(NODE0_EXITED)
    if _field(workload, SUSPEND_FIELD.get(kind, ("spec", "suspend"))) is True:
        facts.add(SUSPENDED)
    meta = workload.get("metadata") or {}
    if SUSPENDED in facts and not facts & {SUCCEEDED, FAILED, DEADLINE_EXCEEDED}:
        if (meta.get("annotations") or {}).get(HOLD) == "user":
            facts.add("held_user")
        if (meta.get("labels") or {}).get(KUEUE_QUEUE):
            facts.add("queued")
    if (meta.get("labels") or {}).get(KUEUE_QUEUE):
        facts.add("kueue")
    if meta.get("deletionTimestamp"):
        facts.add("deleting")
    return facts


def workload_end(workload: Optional[Mapping[str, Any]]) -> Optional[int]:
    """When the workload ended: ``status.completionTime``, else the time its final
    condition became true."""
    if workload is None:
        return None
    end = epoch(status_of(workload).get("completionTime"))
    if end is not None:
        return end
    kind = str(workload.get("kind") or "")
    for row_kind, kind_of_condition, fact in WORKLOAD_CONDITIONS:
        if row_kind == kind and fact != SUSPENDED:
            found = condition(workload, kind_of_condition)
            if found is not None:
                return epoch(found.get("lastTransitionTime") or found.get("lastUpdateTime"))
    return None
