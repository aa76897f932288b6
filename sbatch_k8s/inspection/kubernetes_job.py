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
* Events: :mod:`.kubernetes_events`; the objects: :mod:`.kubernetes_objects`.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from parsers.vocabulary import JOB_ID
from parsers.job_records import JobRecord
from sbatch_k8s.backends.kubernetes.api.kinds import POD
from sbatch_k8s.inspection.file_logs import FileLog, LogHandle
from sbatch_k8s.inspection.pod_logs import DecodedNodeLog, DecodedOutput, PodLog
from sbatch_k8s.inspection.output_files import output_sources
from sbatch_k8s.inspection.values import NODE_LOG, LogSource, NodeView

COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"

Pod = Dict[str, Any]


def locate_job(backend: Any, record: JobRecord) -> Optional[Tuple[Dict[str, str], str]]:
    """The job's workload reference and namespace (None: the cluster has no such job)."""
    from sbatch_k8s.backends.kubernetes.read.cluster_jobs import find_job

    found = find_job(backend.client, backend.namespaces(), record.job_id, int(time.time()))
    return None if found is None else (found[1], found[2])


def pods_by_index(backend: Any, record: JobRecord, namespace: str) -> Dict[int, Pod]:
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


def current_pods(backend: Any, record: JobRecord) -> Dict[int, Pod]:
    """Node index → its current pod ({} when the cluster has no such job)."""
    located = locate_job(backend, record)
    return pods_by_index(backend, record, located[1]) if located else {}


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

    pods = current_pods(backend, record)
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

    pods = current_pods(backend, record)
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
                                    available=node0.available, why=node0.why,
                                    copy_of=s.origin)
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
        located = locate_job(backend, record)
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

    pods = current_pods(backend, record)
    found = {}
    for _, pod in sorted(pods.items()):
        started = running_since(main_container(pod))
        if started is not None:
            found[hostname(pod)] = started
    return found


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
