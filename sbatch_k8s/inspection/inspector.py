""":class:`JobInspector`: one job's nodes, logs, events and objects, read with one backend.

The backend's own verbs give the record; what a backend keeps beyond it is read by the modules
of :data:`VIEWS` (on a cluster with the backend's client and credentials, so the cluster's RBAC
decides what may be seen; locally from the job's directory): per backend, one module for each
part — ``job`` (``nodes``, ``log_sources``, ``open_log``, ``nodes_up``,
``jobs_on_nodes``), ``events``
(``events``) and ``objects`` (``objects``, ``description``).
"""

from __future__ import annotations

import json
import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, Union

from parsers.job_records import JobRecord
from sbatch_k8s.inspection.values import EventView, LogSource, NodeView, Unavailable

if TYPE_CHECKING:
    from sbatch_k8s.backends.base import Backend
    from sbatch_k8s.inspection.file_logs import LogHandle


#: (backend, part) → the module of this package that reads that part on that backend.
VIEWS: Dict[Tuple[str, str], str] = {
    ("kubernetes", "job"): "kubernetes_job", ("kubernetes", "events"): "kubernetes_events",
    ("kubernetes", "objects"): "kubernetes_objects",
    ("local", "job"): "local_job", ("local", "events"): "local_job",
    ("local", "objects"): "local_job",
}


class JobInspector:
    """What can be seen of a job beyond its record, on ``backend``."""

    def __init__(self, backend: "Backend") -> None:
        self.backend = backend

    def _part(self, part: str) -> ModuleType:
        """The module reading ``part`` on this backend (:data:`VIEWS`)."""
        return importlib.import_module(f"{__package__}.{VIEWS[self.backend.name, part]}")

    @property
    def _views(self) -> ModuleType:
        return self._part("job")

    def nodes(self, record: JobRecord) -> List[NodeView]:
        """The job's nodes (on a cluster: its pods) and their state."""
        return self._views.nodes(self.backend, record)

    def log_sources(self, record: JobRecord) -> List[LogSource]:
        """Each node's log (``node-<i>``), then the batch step's output files."""
        return self._views.log_sources(self.backend, record)

    def open_log(self, record: JobRecord, source: LogSource, ended: Callable[[], bool],
                 since: Optional[int] = None) -> "LogHandle":
        """One log of :meth:`log_sources` to read or follow; ``since`` (epoch seconds):
        only what was written from then on (on a cluster, the API server's ``sinceTime``;
        raises :class:`SinceUnavailable` where the log carries no times: the local
        backend, whose commands refuse `--since` in one line)."""
        return self._views.open_log(self.backend, record, source, ended, since)

    def jobs_on_nodes(self, records: List[JobRecord]) -> Dict[str, List[str]]:
        """Node name (as sinfo names nodes) → which of ``records`` (running jobs) have a
        node there."""
        return self._views.jobs_on_nodes(self.backend, records)

    def runtime_events(self, record: JobRecord) -> List[EventView]:
        """What the runtime did: nodes up, steps started and ended, signals, requeues."""
        from sbatch_k8s.inspection.job_events import merged, runtime_events

        return merged(runtime_events(record, self._views.nodes_up(self.backend, record)))

    def events(self, record: JobRecord) -> List[EventView]:
        """Everything that happened to the job in time order: its record's moments, the
        runtime's, and on a cluster its objects' Kubernetes events and what its pods'
        statuses say (an OOM kill)."""
        from sbatch_k8s.inspection.job_events import merged, record_events

        return merged(record_events(record), self.runtime_events(record),
                      self._part("events").events(self.backend, record))

    def objects(self, record: JobRecord) -> Union[List[Dict[str, Any]], Unavailable]:
        """The job's objects as the cluster has them (a Secret's metadata only); locally its
        description, its environment left out."""
        return self._part("objects").objects(self.backend, record)

    def yaml_text(self, record: JobRecord) -> Union[str, Unavailable]:
        """:meth:`objects` as YAML, one document each."""
        import yaml

        found = self.objects(record)
        if isinstance(found, Unavailable):
            return found
        return str(yaml.safe_dump_all(found, sort_keys=False, default_flow_style=False))

    def json_text(self, record: JobRecord) -> Union[str, Unavailable]:
        """:meth:`objects` as JSON: one object, or a ``v1`` ``List`` of them as ``kubectl get
        -o json`` prints several."""
        found = self.objects(record)
        if isinstance(found, Unavailable):
            return found
        shown: Any = found[0] if len(found) == 1 else {
            "apiVersion": "v1", "kind": "List", "items": found, "metadata": {}}
        return json.dumps(shown, indent=4) + "\n"

    def description(self, record: JobRecord) -> Optional[Dict[str, Any]]:
        """The job description the runtime reads (its public part: allocation per node,
        options), None when it is no longer kept."""
        return self._part("objects").description(self.backend, record)
