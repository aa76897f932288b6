"""Workloads and pods as the API server returns them, for each of the four workload kinds.

The shapes follow what the controllers and the kubelet write: the Job controller's
``Complete``/``Failed``/``FailureTarget``/``Suspended`` conditions and completion-index
labels, JobSet's child Job names, the training operator's ``<job>-master-0`` and
``<job>-worker-<i>`` pods and ``…Succeeded``/``…Failed`` conditions, mpi-operator's launcher
Job pod (hostname ``<job>-launcher``) and worker pods; pod ``PodScheduled`` and
``DisruptionTarget`` conditions; container statuses with ``waiting``/``running``/``terminated``
(``exitCode``, ``reason``, ``message`` from ``/dev/termination-log``).
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional, Sequence

KINDS = ("Job", "JobSet", "PyTorchJob", "MPIJob")
API_VERSIONS = {"Job": "batch/v1", "JobSet": "jobset.x-k8s.io/v1alpha2",
                "PyTorchJob": "kubeflow.org/v1", "MPIJob": "kubeflow.org/v2beta1"}
NAME = "llm-1234"
T0 = "2026-11-22T09:04:34Z"
T0_EPOCH = 1795338274
T1 = "2026-11-22T09:14:34Z"
T1_EPOCH = T0_EPOCH + 600
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"

#: The condition each kind writes when it succeeds, fails, or is suspended.
SUCCEEDED = {
    "Job": [{"type": "SuccessCriteriaMet", "status": "True", "reason": "SuccessPolicy"},
            {"type": "Complete", "status": "True", "reason": "SuccessPolicy"}],
    "JobSet": [{"type": "Completed", "status": "True", "reason": "AllJobsCompleted",
                "message": "jobset completed successfully"}],
    "PyTorchJob": [{"type": "Created", "status": "True", "reason": "PyTorchJobCreated"},
                   {"type": "Running", "status": "False", "reason": "PyTorchJobRunning"},
                   {"type": "Succeeded", "status": "True", "reason": "PyTorchJobSucceeded"}],
    "MPIJob": [{"type": "Created", "status": "True", "reason": "MPIJobCreated"},
               {"type": "Running", "status": "False", "reason": "MPIJobRunning"},
               {"type": "Succeeded", "status": "True", "reason": "MPIJobSucceeded"}],
}
FAILED = {
    "Job": [{"type": "FailureTarget", "status": "True", "reason": "PodFailurePolicy"},
            {"type": "Failed", "status": "True", "reason": "PodFailurePolicy",
             "message": "Container main for pod default/llm-1234-1-x exited with non-zero "
                        "exit code 1 matching FailJob rule at index 1"}],
    "JobSet": [{"type": "Failed", "status": "True", "reason": "FailedJobs",
                "message": "jobset failed due to one or more job failures"}],
    "PyTorchJob": [{"type": "Failed", "status": "True", "reason": "PyTorchJobFailed",
                    "message": "PyTorchJob llm-1234 is failed because 1 Master replica(s) "
                               "failed."}],
    "MPIJob": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                "message": "MPIJob default/llm-1234 has failed"}],
}
DEADLINE = {
    "Job": [{"type": "FailureTarget", "status": "True", "reason": "DeadlineExceeded"},
            {"type": "Failed", "status": "True", "reason": "DeadlineExceeded",
             "message": "Job was active longer than specified deadline"}],
    "JobSet": [{"type": "Failed", "status": "True", "reason": "FailedJobs",
                "message": "jobset failed due to job llm-1234-node-0 failure: "
                           "DeadlineExceeded"}],
    "PyTorchJob": [{"type": "Failed", "status": "True", "reason": "PyTorchJobFailed",
                    "message": "PyTorchJob llm-1234 has failed because it was active "
                               "longer than specified deadline"}],
    "MPIJob": [{"type": "Failed", "status": "True", "reason": "DeadlineExceeded",
                "message": "MPIJob default/llm-1234 has failed"}],
}
SUSPENDED = {
    "Job": [{"type": "Suspended", "status": "True", "reason": "JobSuspended",
             "message": "Job suspended"}],
    "JobSet": [{"type": "Suspended", "status": "True", "reason": "SuspendedJobs"}],
    "PyTorchJob": [{"type": "Suspended", "status": "True", "reason": "PyTorchJobSuspended"}],
    "MPIJob": [{"type": "Suspended", "status": "True", "reason": "MPIJobSuspended"}],
}


def workload(kind: str, conditions: Sequence[Mapping[str, Any]] = (), suspend: bool = False,
             labels: Optional[Dict[str, str]] = None,
             annotations: Optional[Dict[str, str]] = None, deleting: bool = False,
             name: str = NAME) -> Dict[str, Any]:
    """A workload of ``kind`` with its status conditions."""
    meta: Dict[str, Any] = {"name": name, "namespace": "default", "uid": "u-1",
                            "creationTimestamp": T0,
                            "labels": dict({"sbatch-k8s.io/job-id": "1234",
                                            "app.kubernetes.io/managed-by": "sbatch-k8s"},
                                           **(labels or {})),
                            "annotations": dict(annotations or {})}
    if deleting:
        meta["deletionTimestamp"] = T1
    spec: Dict[str, Any] = {}
    if kind in ("PyTorchJob", "MPIJob"):
        spec["runPolicy"] = {"suspend": suspend}
    else:
        spec["suspend"] = suspend
    status: Dict[str, Any] = {"conditions": [dict(c, lastTransitionTime=T1)
                                             for c in conditions]}
    if kind == "Job" and any(c["type"] == "Complete" for c in conditions):
        status["completionTime"] = T1
    return {"apiVersion": API_VERSIONS[kind], "kind": kind, "metadata": meta, "spec": spec,
            "status": status}


def _names(kind: str, index: int, name: str) -> Dict[str, Any]:
    """Pod name, hostname (None: the pod's name), labels and annotations of node ``index``."""
    if kind == "Job":
        marks = {COMPLETION_INDEX: str(index), "batch.kubernetes.io/job-name": name}
        return {"pod": f"{name}-{index}-x7k2p", "hostname": f"{name}-{index}",
                "labels": dict(marks), "annotations": {COMPLETION_INDEX: str(index)}}
    if kind == "JobSet":
        child = f"{name}-node-0"
        marks = {COMPLETION_INDEX: str(index), "jobset.sigs.k8s.io/jobset-name": name,
                 "jobset.sigs.k8s.io/replicatedjob-name": "node",
                 "batch.kubernetes.io/job-name": child}
        return {"pod": f"{child}-{index}-q9w8e", "hostname": f"{child}-{index}",
                "labels": marks, "annotations": {COMPLETION_INDEX: str(index)}}
    role = "master" if index == 0 else "worker"
    if kind == "PyTorchJob":
        number = 0 if index == 0 else index - 1
        return {"pod": f"{name}-{role}-{number}", "hostname": None,
                "labels": {"training.kubeflow.org/job-name": name,
                           "training.kubeflow.org/replica-type": role,
                           "training.kubeflow.org/replica-index": str(number)},
                "annotations": {}}
    if index == 0:
        return {"pod": f"{name}-launcher-m4zq8", "hostname": f"{name}-launcher",
                "labels": {"training.kubeflow.org/job-role": "launcher",
                           "training.kubeflow.org/job-name": name},
                "annotations": {}}
    return {"pod": f"{name}-worker-{index - 1}", "hostname": f"{name}-worker-{index - 1}",
            "labels": {"training.kubeflow.org/job-role": "worker",
                       "training.kubeflow.org/replica-index": str(index)},
            "annotations": {}}


def waiting(reason: str = "ContainerCreating") -> Dict[str, Any]:
    return {"waiting": {"reason": reason}}


def running(started: str = T0) -> Dict[str, Any]:
    return {"running": {"startedAt": started}}


def terminated(code: int, reason: str = "", report: Optional[Mapping[str, Any]] = None,
               message: Optional[str] = None) -> Dict[str, Any]:
    """A container that ended; ``report`` is node 0's result as the runtime writes it."""
    state: Dict[str, Any] = {"exitCode": code, "reason": reason or (
        "Completed" if code == 0 else "Error"), "startedAt": T0, "finishedAt": T1,
        "containerID": "containerd://0f3a"}
    if report is not None:
        state["message"] = json.dumps(report, sort_keys=True, separators=(",", ":"))
    elif message is not None:
        state["message"] = message
    return {"terminated": state}


def report(state: str, exit_code: int = 0, signal: int = 0, reason: str = "None",
           steps: Sequence[Mapping[str, Any]] = ()) -> Dict[str, Any]:
    """Node 0's termination message."""
    return {"state": state, "exit_code": exit_code, "signal": signal, "reason": reason,
            "start_time": T0_EPOCH + 5, "end_time": T1_EPOCH - 5, "steps": list(steps)}


SCHEDULED = [{"type": "PodScheduled", "status": "True"}]
UNSCHEDULABLE = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                  "message": "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}]


def disrupted(reason: str) -> List[Dict[str, Any]]:
    """Pod conditions of a pod the cluster is taking away."""
    return SCHEDULED + [{"type": "DisruptionTarget", "status": "True", "reason": reason}]


def pod(kind: str, index: int, phase: str = "Running",
        state: Optional[Mapping[str, Any]] = None,
        conditions: Sequence[Mapping[str, Any]] = SCHEDULED, reason: Optional[str] = None,
        bound: bool = True, deleting: bool = False, created: str = T0,
        name: str = NAME) -> Dict[str, Any]:
    """The pod of node ``index`` of a ``kind`` workload."""
    names = _names(kind, index, name)
    meta: Dict[str, Any] = {"name": names["pod"], "namespace": "default",
                            "creationTimestamp": created,
                            "labels": dict({"sbatch-k8s.io/job-id": "1234"}, **names["labels"]),
                            "annotations": names["annotations"]}
    if deleting:
        meta["deletionTimestamp"] = T1
    spec: Dict[str, Any] = {"containers": [{"name": "pytorch" if kind == "PyTorchJob"
                                            else "main"}]}
    if names["hostname"]:
        spec["hostname"] = names["hostname"]
        spec["subdomain"] = name
    if bound:
        spec["nodeName"] = f"gpu-node-{index}"
    status: Dict[str, Any] = {"phase": phase, "conditions": [dict(c) for c in conditions]}
    if reason:
        status["reason"] = reason
    if bound:
        status["startTime"] = T0
    if state is not None:
        status["containerStatuses"] = [{
            "name": spec["containers"][0]["name"], "state": dict(state), "lastState": {},
            "ready": "running" in state, "restartCount": 0, "image": "python:3.11-slim"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
            "status": status}


def all_running(kind: str, count: int) -> List[Dict[str, Any]]:
    """Every node's pod running."""
    return [pod(kind, i, "Running", running()) for i in range(count)]
