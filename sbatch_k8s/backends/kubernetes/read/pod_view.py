"""A job's pods read as Slurm nodes: which node each pod is, its hostname, its main
container, node 0's termination message, and Kubernetes timestamps as epoch seconds.

Every workload kind names its pods so that the node index can be read from the pod alone (the
same rules the runtime's contract adapters follow, :mod:`sbatch_k8s.runtime.contract`):

| kind       | pod of node 0                  | pod of node *i*                     |
|------------|--------------------------------|-------------------------------------|
| Job        | completion index 0             | completion index *i*                |
| JobSet     | completion index 0             | completion index *i*                |
| PyTorchJob | ``<job>-master-0``             | ``<job>-worker-<i-1>``              |
| MPIJob     | hostname ``<job>-launcher``    | ``<job>-worker-<i-1>``              |

So the kind need not be known, which matters once the workload is gone and only pods remain.
A node index may have several pods (a pod replaced after a disruption): the newest is the node.
"""

from __future__ import annotations

import datetime
import json
from typing import Any, Dict, List, Mapping, Optional, Sequence

from translators.metadata import INDEX_IGNORED_FAILURES, JOBSET_RESTART_ATTEMPT

COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
#: Names of the container that runs the sbatch-k8s runtime, by target (``pytorch`` is the
#: name the training operator requires; the other targets use ``main``).
MAIN_CONTAINERS = ("main", "pytorch")
#: Roles in kubeflow pod names (``<job>-<role>-<i>``) and the node index of their first pod.
ROLE_FIRST_NODE = {"master": 0, "worker": 1}
LAUNCHER_SUFFIX = "-launcher"

Pod = Mapping[str, Any]


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def status_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """``obj["status"]``, or an empty mapping."""
    return obj.get("status") or {}


def hostname(pod: Pod) -> str:
    """The pod's hostname: ``spec.hostname`` when set (Indexed Jobs, MPIJob), else its name
    (PyTorchJob pods), which is what ``SLURM_JOB_NODELIST`` shows inside the job."""
    return str((pod.get("spec") or {}).get("hostname") or _meta(pod).get("name") or "")


def _digits(text: str) -> Optional[int]:
    return int(text) if text.isascii() and text.isdigit() else None


def node_index(pod: Pod) -> Optional[int]:
    """The Slurm node index of ``pod`` (None when its names follow no known workload)."""
    meta = _meta(pod)
    for source in (meta.get("labels") or {}, meta.get("annotations") or {}):
        index = _digits(str(source.get(COMPLETION_INDEX, "")))
        if index is not None:
            return index
    name = hostname(pod)
    if name.endswith(LAUNCHER_SUFFIX):
        return 0
    parts = name.rsplit("-", 2)
    if len(parts) == 3 and parts[1] in ROLE_FIRST_NODE:
        index = _digits(parts[2])
        return None if index is None else ROLE_FIRST_NODE[parts[1]] + index
    return None


def created(pod: Pod) -> str:
    """The pod's creation timestamp as text (RFC 3339 texts sort in time order)."""
    return str(_meta(pod).get("creationTimestamp") or "")


def nodes_by_index(pods: Sequence[Pod], node_count: int, first: int = 0) -> Dict[int, Pod]:
    """The current pod of each node index below ``node_count``: the newest one. ``first``:
    the index of the job's node 0 among the pods' indices (an array element run as one
    completion index of a shared Indexed Job)."""
    nodes: Dict[int, Pod] = {}
    for pod in sorted(pods, key=lambda p: (created(p), str(_meta(p).get("name", "")))):
        index = node_index(pod)
        if index is not None and 0 <= index - first < node_count:
            nodes[index - first] = pod
    return nodes


def restarted_in_place(pod: Optional[Pod]) -> int:
    """The restarts Kubernetes made inside the workload before ``pod`` ran (a JobSet's gang
    restart attempt, an array element's replaced pods: ``translators.pod.restarts_field``),
    which the record's restart count does not include; 0 without a pod."""
    if pod is None:
        return 0
    meta = _meta(pod)
    counts = ((meta.get("labels") or {}).get(JOBSET_RESTART_ATTEMPT),
              (meta.get("annotations") or {}).get(INDEX_IGNORED_FAILURES))
    return sum(int(text) for text in counts if text and str(text).isdigit())


def container_statuses(pod: Pod) -> List[Mapping[str, Any]]:
    """The pod's container statuses (init containers excluded)."""
    return list(status_of(pod).get("containerStatuses") or [])


def main_container(pod: Pod) -> Optional[Mapping[str, Any]]:
    """The status of the container running the runtime: ``main``/``pytorch``, else the first."""
    statuses = container_statuses(pod)
    for status in statuses:
        if status.get("name") in MAIN_CONTAINERS:
            return status
    return statuses[0] if statuses else None


def terminated(container: Optional[Mapping[str, Any]]) -> Optional[Mapping[str, Any]]:
    """``state.terminated`` of a container status, when it has ended."""
    if container is None:
        return None
    return (container.get("state") or {}).get("terminated")


def running_since(container: Optional[Mapping[str, Any]]) -> Optional[int]:
    """When the container started (running or ended), as epoch seconds."""
    if container is None:
        return None
    state = container.get("state") or {}
    for key in ("running", "terminated"):
        if state.get(key):
            return epoch(state[key].get("startedAt"))
    return None


def termination_report(pod: Optional[Pod]) -> Optional[Dict[str, Any]]:
    """Node 0's result as its runtime wrote it to ``/dev/termination-log`` (the main
    container's ``terminated.message``): a dict with at least ``state``; None when the pod
    has none (not ended, killed before writing, or a message that is not ours)."""
    end = terminated(main_container(pod)) if pod is not None else None
    if not end or not end.get("message"):
        return None
    try:
        report = json.loads(end["message"])
    except ValueError:
        return None
    if not isinstance(report, dict) or not isinstance(report.get("state"), str):
        return None
    return report


def start_failure(pod: Optional[Pod]) -> str:
    """Why node 0's container ended before its runtime could report (the one line its
    command or runtime left as the termination message, e.g. ``image has no python3``);
    "" when it reported, or said nothing."""
    end = terminated(main_container(pod)) if pod is not None else None
    text = str((end or {}).get("message") or "").strip()
    if not text or termination_report(pod) is not None or end.get("exitCode") == 0:
        return ""
    line = text.splitlines()[-1]
    for prefix in ("sbatch-k8s: error: runtime node: ", "sbatch-k8s: error: "):
        if line.startswith(prefix):
            return line[len(prefix):]
    return line


def condition(obj: Mapping[str, Any], kind: str) -> Optional[Mapping[str, Any]]:
    """The status condition of type ``kind`` whose status is ``"True"``, if any."""
    for item in status_of(obj).get("conditions") or []:
        if item.get("type") == kind and item.get("status") == "True":
            return item
    return None


def is_alive(pod: Pod) -> bool:
    """Whether the pod still runs or waits to (not Succeeded/Failed, nor Unknown: its node
    no longer reports; main container not ended): an ended job with such pods is still
    COMPLETING."""
    if status_of(pod).get("phase") in ("Succeeded", "Failed", "Unknown"):
        return False
    return terminated(main_container(pod)) is None


def epoch(timestamp: Optional[str]) -> Optional[int]:
    """``2026-11-22T09:04:34Z`` (RFC 3339, fractions and offsets allowed) → epoch seconds."""
    if not timestamp:
        return None
    text = str(timestamp).replace("Z", "+00:00")
    if "." in text:
        head, _, tail = text.partition(".")
        zone = next((i for i, c in enumerate(tail) if c in "+-"), len(tail))
        text = head + tail[zone:]
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return int(moment.timestamp())
