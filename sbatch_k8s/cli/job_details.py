"""What ``scontrol show job -d`` adds for one job, read through the job inspection.

The allocation per node comes from the job's description (what the runtime was given: CPUs
and GPUs per node, memory per node or per CPU; the local backend's GPU ids), else from the
record alone (:func:`~parsers.formats.scontrol_details.described_allocation`). Each node's own
line comes from :class:`~sbatch_k8s.inspection.inspector.JobInspector`: on a cluster the
node's pod, its phase, restarts, Kubernetes node and the last thing said of it (its last
event, or what its container's end says: an OOM kill), locally the node process's log.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Sequence

from parsers.formats.scontrol_details import (
    NodeState,
    allocation_lines,
    described_allocation,
    node_state_lines,
)
from parsers.job_records import JobRecord

if TYPE_CHECKING:
    from sbatch_k8s.backends.base import Backend
    from sbatch_k8s.inspection.inspector import JobInspector
    from sbatch_k8s.inspection.values import EventView


def _names(record: JobRecord) -> List[str]:
    from parsers.values.hostlist import expand_hostlist

    try:
        return expand_hostlist(record.node_list) if record.node_list else []
    except ValueError:
        return []


def _last_said(events: Sequence["EventView"]) -> Dict[str, str]:
    """Subject (``Pod/<name>``) → its last event, as the detail line shows it."""
    from parsers.formats.cells import format_timestamp

    last: Dict[str, str] = {}
    for event in events:        # in time order: the last one stays
        when = format_timestamp(event.time, None, 0) if event.time is not None else "Unknown"
        message = " ".join(event.message.split())
        last[event.subject] = f"{when} {event.reason}: {message}"
    return last


def node_states(inspector: "JobInspector", record: JobRecord) -> List[NodeState]:
    """sbatch-k8s's own line per node: its pod on a cluster, its log locally."""
    views = inspector.nodes(record)
    if inspector.backend.name != "kubernetes":
        return [NodeState(view.name, log=view.where) for view in views]
    last = _last_said(inspector.events(record))
    return [NodeState(view.name, view.where.split("/", 1)[-1] if view.where else "",
                      view.state, view.restarts, view.host,
                      last.get(f"Pod/{view.where.split('/', 1)[-1]}", "") if view.where
                      else "")
            for view in views]


def detail_lines(backend: "Backend", record: JobRecord) -> List[str]:
    """The ``-d`` lines of ``record`` after ``Socks/Node``: none for a job not given nodes."""
    from parsers.formats.states import is_pending
    from sbatch_k8s.inspection.inspector import JobInspector

    names = _names(record)
    if not names or is_pending(record.state):
        return []
    inspector = JobInspector(backend)
    allocation = described_allocation(record, names, inspector.description(record))
    return allocation_lines(record, allocation) + node_state_lines(
        node_states(inspector, record))
