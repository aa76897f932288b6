"""A job's Kubernetes events on a cluster: the Events of its workload and pods, and what the
pods' container statuses say of their ends (a real kubelet records no Event for a
container's OOM kill: ``OOMKilled`` is in the status). Read with the backend's client, so a
user without ``list events`` sees why instead of the events."""

from __future__ import annotations

import time
from typing import Any, List, Mapping, Optional

from parsers.job_records import JobRecord
from sbatch_k8s.backends.kubernetes.api.client import KubeError
from sbatch_k8s.backends.kubernetes.api.kinds import Kind
from sbatch_k8s.inspection.kubernetes_job import Pod, locate_job, pods_by_index
from sbatch_k8s.inspection.values import EventView

#: Kubernetes Events (core/v1), read by the object they are about.
EVENT = Kind("v1", "Event", "events")


def events(backend: Any, record: JobRecord) -> List[EventView]:
    """The Events of the workload and pods, and the pods' container ends."""
    located = locate_job(backend, record)
    if located is None:
        return []
    ref, namespace = located
    pods = list(pods_by_index(backend, record, namespace).values())
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
