"""What a cluster shows of a job beyond its record: its pods, their logs, events and objects.

Read with the backend's own client and credentials, so the cluster's RBAC decides what may be
seen, as it decides for ``kubectl``: a user without ``list events`` sees why instead of the
events. The job's objects are found through its record (the workload it names) and the
``sbatch-k8s.io/job-id`` label of its pods.

* Nodes are the current pod of each completion index, with its phase, node and restarts; a
  node is up when its pod's main container started.
* A node's log is its pod's container log (``pods/{name}/log``), followed with the backend's
  :class:`~sbatch_k8s.backends.kubernetes.output.pod_log.LogFollower`. When node 0 carries
  the job's output files in its log (:mod:`sbatch_k8s.runtime.log_stream.tee`), its log is
  read through the stream decoder: the files' bytes and the runtime's messages, readable.
* The output files are read in place when the partition's volumes hold the working
  directory; otherwise they are decoded from node 0's log, as ``sattach`` does.
* Events are the Kubernetes Events of the workload and the pods, and what the pods'
  container statuses say of their ends (a real kubelet records no Event for a container's
  OOM kill: ``OOMKilled`` is in the status).
* The objects are the workload, the job's ConfigMap and Service, the job's Secret without
  its data (and only when the caller may read it: users may not), and the pods, as the API
  server returns them.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

from parsers.vocabulary import JOB_ID
from parsers.job_records import JobRecord
from sbatch_k8s.backends.kubernetes.api.client import KubeError
from sbatch_k8s.backends.kubernetes.api.kinds import (
    CONFIG_MAP,
    POD,
    SECRET,
    SERVICE,
    WORKLOADS,
    Kind,
)
from sbatch_k8s.inspection.file_logs import FileLog, LogHandle
from sbatch_k8s.inspection.pod_logs import DecodedNodeLog, DecodedOutput, PodLog
from sbatch_k8s.inspection.output_files import output_sources
from sbatch_k8s.inspection.values import NODE_LOG, EventView, LogSource, NodeView, Unavailable

#: Kubernetes Events (core/v1), read by the object they are about.
EVENT = Kind("v1", "Event", "events")
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"

Pod = Dict[str, Any]


def _located(backend: Any, record: JobRecord) -> Optional[Tuple[Dict[str, str], str]]:
    """The job's workload reference and namespace (None: the cluster has no such job)."""
    from sbatch_k8s.backends.kubernetes.read.cluster_jobs import find_job

    found = find_job(backend.client, backend.namespaces(), record.job_id, int(time.time()))
    return None if found is None else (found[1], found[2])


def _pods(backend: Any, record: JobRecord, namespace: str) -> Dict[int, Pod]:
    """The current pod of each node index (an element of an array run as one Indexed Job:
    the pods of its completion index, as its node 0)."""
    from sbatch_k8s.backends.kubernetes.read.pod_view import nodes_by_index

    pods, _ = backend.client.list(POD, namespace, f"{JOB_ID}={record.job_id}")
    first = 0
    if not pods and record.array_job_id is not None:
        shared, _ = backend.client.list(POD, namespace, f"{JOB_ID}={record.array_job_id}")
        first = record.job_id - record.array_job_id
        pods = [p for p in shared if ((p.get("metadata") or {}).get("annotations") or {})
                .get(COMPLETION_INDEX) == str(first)]
    return nodes_by_index(pods, max(record.node_count, 1), first)


def _pod_state(pod: Pod) -> Tuple[str, str]:
    """The pod's phase, and why its main container is not running (reason: message)."""
    from sbatch_k8s.backends.kubernetes.read.pod_view import main_container, status_of

    phase = str(status_of(pod).get("phase") or "Pending")
    container = main_container(pod) or {}
    state = container.get("state") or {}
    for key in ("waiting", "terminated"):
        if state.get(key):
            said = state[key]
            detail = str(said.get("reason") or key)
            if said.get("exitCode") is not None:
                detail += f" (exit code {said['exitCode']})"
            return phase, detail
    if pod.get("metadata", {}).get("deletionTimestamp"):
        return phase, "Terminating"
    return phase, ""


def nodes(backend: Any, record: JobRecord) -> List[NodeView]:
    """One row per node: its pod's state, or "no pod" while there is none."""
    from sbatch_k8s.backends.kubernetes.read.pod_view import hostname

    located = _located(backend, record)
    pods = _pods(backend, record, located[1]) if located else {}
    rows = []
    for index in range(max(record.node_count, 1)):
        pod = pods.get(index)
        if pod is None:
            rows.append(NodeView(index, f"node {index}", "no pod"))
            continue
        phase, detail = _pod_state(pod)
        restarts = sum(int(s.get("restartCount") or 0)
                       for s in (pod.get("status") or {}).get("containerStatuses") or [])
        rows.append(NodeView(index, hostname(pod), phase, f"pod/{pod['metadata']['name']}",
                             str((pod.get("spec") or {}).get("nodeName") or ""), restarts,
                             detail))
    return rows


def log_sources(backend: Any, record: JobRecord) -> List[LogSource]:
    """Each node's pod log, then the output files (read in place, or from node 0's log)."""
    import os

    from sbatch_k8s.backends.kubernetes.read.pod_view import hostname, running_since
    from sbatch_k8s.backends.kubernetes.read.pod_view import main_container
    from sbatch_k8s.backends.kubernetes.output.waiting import files_streamed

    located = _located(backend, record)
    pods = _pods(backend, record, located[1]) if located else {}
    sources = []
    for index in range(max(record.node_count, 1)):
        pod = pods.get(index)
        started = pod is not None and running_since(main_container(pod)) is not None
        name = hostname(pod) if pod is not None else f"node {index}"
        origin = f"pod/{pod['metadata']['name']}" if pod is not None else ""
        sources.append(LogSource(f"node-{index}", f"Node {index} ({name})", NODE_LOG, origin,
                                 available=started,
                                 why="" if started else "its pod has not started (or is gone)"))
    if files_streamed(backend.config, record):
        node0 = sources[0]
        return sources + [LogSource(s.key, s.title, s.kind, f"{node0.origin} (decoded)",
                                    available=node0.available, why=node0.why)
                          for s in output_sources(record) if s.available]
    return sources + [s if not s.available or os.path.exists(s.origin) else
                      LogSource(s.key, s.title, s.kind, s.origin, False,
                                "not on this machine (on the partition's volume)")
                      for s in output_sources(record)]


def open_log(backend: Any, record: JobRecord, source: LogSource,
             ended: Callable[[], bool], since: Optional[int] = None) -> LogHandle:
    """A pod's log (node 0's decoded when it carries the output files), node 0's decoded
    output, or a file in place. ``since``: the API server's ``sinceTime``."""
    from sbatch_k8s.backends.kubernetes.output.waiting import files_streamed
    from sbatch_k8s.inspection.file_logs import SinceUnavailable

    if source.kind == NODE_LOG or source.origin.endswith("(decoded)"):
        located = _located(backend, record)
        namespace = located[1] if located else backend.client.target.namespace
        pod_name = source.origin.split()[0].split("/", 1)[1]
        since_time = _rfc3339(since) if since is not None else None
        if source.kind == NODE_LOG and source.key == "node-0" and \
                files_streamed(backend.config, record):
            return DecodedNodeLog(backend.client, namespace, pod_name, since_time)
        if source.kind == NODE_LOG:
            return PodLog(backend.client, namespace, pod_name, since_time)
        return DecodedOutput(backend.client, namespace, pod_name,
                             0 if source.key == "stdout" else 1)
    if since is not None:
        raise SinceUnavailable("an output file carries no times")
    return FileLog(source.origin, ended)


def _rfc3339(epoch_s: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch_s))


def nodes_up(backend: Any, record: JobRecord) -> Dict[str, int]:
    """Node (pod host) name → when its pod's main container started."""
    from sbatch_k8s.backends.kubernetes.read.pod_view import hostname, main_container
    from sbatch_k8s.backends.kubernetes.read.pod_view import running_since

    located = _located(backend, record)
    pods = _pods(backend, record, located[1]) if located else {}
    found = {}
    for _, pod in sorted(pods.items()):
        started = running_since(main_container(pod))
        if started is not None:
            found[hostname(pod)] = started
    return found


def events(backend: Any, record: JobRecord) -> List[EventView]:
    """The Events of the workload and pods, and the pods' container ends."""
    located = _located(backend, record)
    if located is None:
        return []
    ref, namespace = located
    pods = list(_pods(backend, record, namespace).values())
    names = [("Pod", p["metadata"]["name"]) for p in pods]
    if ref.get("name"):
        names.insert(0, (str(ref.get("kind") or "Job"), ref["name"]))
    found: List[EventView] = []
    for kind, name in names:
        selector = f"involvedObject.kind={kind},involvedObject.name={name}"
        try:
            items, _ = backend.client.list(EVENT, namespace, field_selector=selector)
        except KubeError as e:
            return [EventView(None, "Warning", "EventsNotReadable", str(e), f"{kind}/{name}",
                              "console")] + _status_events(pods)
        found.extend(_event_view(item) for item in sorted(items, key=_written_order))
    return found + _status_events(pods)


def _written_order(item: Mapping[str, Any]) -> int:
    """Events of one second in the order the API server stored them (their timestamps keep
    whole seconds; etcd's resource versions grow)."""
    version = str((item.get("metadata") or {}).get("resourceVersion") or "")
    return int(version) if version.isdigit() else 0


def _epoch(stamp: Any) -> Optional[int]:
    import calendar

    if not stamp:
        return None
    try:
        return calendar.timegm(time.strptime(str(stamp)[:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return None


def _event_view(item: Mapping[str, Any]) -> EventView:
    involved = item.get("involvedObject") or {}
    when = _epoch(item.get("lastTimestamp") or item.get("eventTime")
                  or item.get("firstTimestamp") or (item.get("metadata") or {})
                  .get("creationTimestamp"))
    return EventView(when, str(item.get("type") or "Normal"), str(item.get("reason") or ""),
                     str(item.get("message") or ""),
                     f"{involved.get('kind', '')}/{involved.get('name', '')}", "event",
                     int(item.get("count") or 1))


def _status_events(pods: List[Pod]) -> List[EventView]:
    """What each pod's containers' ends say (current and last state)."""
    views = []
    for pod in pods:
        for status in (pod.get("status") or {}).get("containerStatuses") or []:
            for state in (status.get("state") or {}, status.get("lastState") or {}):
                ended = state.get("terminated")
                if not ended:
                    continue
                reason = str(ended.get("reason") or "Terminated")
                kind = "Normal" if reason == "Completed" else "Warning"
                views.append(EventView(
                    _epoch(ended.get("finishedAt")), kind, reason,
                    f"container {status.get('name', '')} ended: exit code "
                    f"{ended.get('exitCode', '?')}"
                    + (f", signal {ended['signal']}" if ended.get("signal") else ""),
                    f"Pod/{pod['metadata']['name']}", "pod status"))
    return views


def objects(backend: Any, record: JobRecord) -> Union[List[Dict[str, Any]], Unavailable]:
    """The job's objects as the API server has them: workload, ConfigMap, Service, Secret
    (metadata and type only, when the caller may read it at all), pods."""
    located = _located(backend, record)
    if located is None:
        return Unavailable("the cluster holds no objects of this job any more")
    ref, namespace = located
    found: List[Dict[str, Any]] = []
    kind = next((k for k in WORKLOADS if k.api_version == ref.get("apiVersion")
                 and k.kind == ref.get("kind")), None)
    name = ref.get("name") or ""
    try:
        for wanted in ([kind] if kind else []) + [CONFIG_MAP, SERVICE]:
            got = backend.client.get(wanted, name, namespace) if name else None
            if got is not None:
                found.append(_typed(wanted, got))
        secret = _secret_metadata(backend, name, namespace) if name else None
        if secret is not None:
            found.append(_typed(SECRET, secret))
        found.extend(_typed(POD, p) for _, p in sorted(_pods(backend, record, namespace).items()))
    except KubeError as e:
        return Unavailable(str(e))
    if not found:
        return Unavailable("the job's workload and pods are gone (only its record is kept)")
    return found


def _typed(kind: Kind, found: Mapping[str, Any]) -> Dict[str, Any]:
    """``found`` with its ``apiVersion`` and ``kind`` first, as ``kubectl get -o yaml``
    shows it (the items of a LIST come without them)."""
    rest = {k: v for k, v in found.items() if k not in ("apiVersion", "kind")}
    return {"apiVersion": kind.api_version, "kind": kind.kind, **rest}


#: What of a Secret is never shown: its data, and the copy of it ``kubectl apply`` keeps in an
#: annotation (``sbatch --k8s-print | kubectl apply -f -``).
SECRET_DATA_FIELDS = ("data", "stringData")
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _secret_metadata(backend: Any, name: str, namespace: str) -> Optional[Dict[str, Any]]:
    """The job's Secret without its data; None when it is gone or the caller may not read
    Secrets (users may not: the cluster's RBAC keeps their environment from them)."""
    try:
        got = backend.client.get(SECRET, name, namespace)
    except KubeError as e:
        if e.status in (401, 403):
            return None
        raise
    if got is None:
        return None
    shown = {k: v for k, v in got.items() if k not in SECRET_DATA_FIELDS}
    metadata = dict(shown.get("metadata") or {})
    if LAST_APPLIED in (metadata.get("annotations") or {}):
        metadata["annotations"] = {k: v for k, v in metadata["annotations"].items()
                                   if k != LAST_APPLIED}
    shown["metadata"] = metadata
    return shown


def description(backend: Any, record: JobRecord) -> Optional[Dict[str, Any]]:
    """The job description (the ConfigMap's ``job.json``), None when it is gone."""
    import json

    from parsers.vocabulary import DESCRIPTION_KEY

    located = _located(backend, record)
    name = (located[0].get("name") or "") if located else ""
    if not name:
        return None
    try:
        config_map = backend.client.get(CONFIG_MAP, name, located[1])
        found = json.loads(((config_map or {}).get("data") or {}).get(DESCRIPTION_KEY) or "")
    except (KubeError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def jobs_on_nodes(backend: Any, records: List[JobRecord]) -> Dict[str, List[str]]:
    """Kubernetes node name → the running jobs with a pod on it (one LIST of our pods per
    namespace)."""
    wanted = {str(r.job_id): r.job_id_text for r in records}
    found: Dict[str, List[str]] = {}
    for namespace in sorted(backend.namespaces()):
        pods, _ = backend.client.list(POD, namespace, "app.kubernetes.io/managed-by=sbatch-k8s")
        for pod in pods:
            job = wanted.get(((pod.get("metadata") or {}).get("labels") or {})
                             .get(JOB_ID, ""))
            node = (pod.get("spec") or {}).get("nodeName")
            if job and node and job not in found.get(node, []):
                found.setdefault(node, []).append(job)
    return found
