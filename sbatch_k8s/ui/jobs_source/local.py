"""What the local backend keeps of a job beyond its record, read from its job directory.

A local job's node *i* is a runtime process whose own output (the runtime's messages, and
whatever the job writes to it) goes to ``<state>/jobs/<id>/node-<i>.log``; its description
(what the runtime reads to become the job) is ``job.json`` there. There are no Kubernetes
events: the job's events are its record's.
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Dict, List, Optional, Union

from parsers.job_records import JobRecord
from sbatch_k8s.ui.jobs_source.logs import FileLog, LogHandle
from sbatch_k8s.ui.jobs_source.output_files import output_sources
from sbatch_k8s.ui.views import NODE_LOG, EventView, LogSource, NodeView, Unavailable

#: Keys of the description the page does not show (the start environment may hold secrets).
PRIVATE_KEYS = ("environment",)


def _job_dir(backend: Any, record: JobRecord) -> str:
    from sbatch_k8s.backends.local.layout import job_dir_of

    return job_dir_of(backend.environ, record.job_id)


def _hosts(record: JobRecord) -> List[str]:
    from parsers.values.hostlist import expand_hostlist

    try:
        return expand_hostlist(record.node_list) if record.node_list else []
    except ValueError:
        return []


def nodes(backend: Any, record: JobRecord) -> List[NodeView]:
    """Node *i* of ``node_list`` (``127.0.0.<i+2>``), in the job's state."""
    directory = _job_dir(backend, record)
    return [NodeView(index, name, record.state,
                     where=os.path.join(directory, f"node-{index}.log"))
            for index, name in enumerate(_hosts(record))]


def log_sources(backend: Any, record: JobRecord) -> List[LogSource]:
    """Each started node's log, then the output files."""
    directory = _job_dir(backend, record)
    sources = []
    for index, name in enumerate(_hosts(record)):
        path = os.path.join(directory, f"node-{index}.log")
        sources.append(LogSource(f"node-{index}", f"Node {index} ({name})", NODE_LOG, path,
                                 available=os.path.exists(path),
                                 why="" if os.path.exists(path) else "no log (yet)"))
    return sources + output_sources(record)


def open_log(backend: Any, record: JobRecord, source: LogSource,
             ended: Callable[[], bool]) -> LogHandle:
    """Every local log is a file."""
    return FileLog(source.origin, ended)


def events(backend: Any, record: JobRecord) -> List[EventView]:
    """No events beyond the record's on this machine."""
    return []


def yaml_text(backend: Any, record: JobRecord) -> Union[str, Unavailable]:
    """The job's description (``job.json``) as YAML, its environment left out."""
    import yaml

    description = _description(_job_dir(backend, record))
    if description is None:
        return Unavailable("the job's description is not kept (it has not started, or its "
                           "directory was removed)")
    shown = {k: v for k, v in description.items() if k not in PRIVATE_KEYS}
    return str(yaml.safe_dump(shown, sort_keys=True, default_flow_style=False))


def _description(directory: str) -> Optional[dict]:
    try:
        with open(os.path.join(directory, "job.json")) as f:
            found = json.load(f)
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def jobs_on_nodes(backend: Any, records: List[JobRecord]) -> Dict[str, List[str]]:
    """Node name → the running jobs on it (their node lists name the local nodes)."""
    found: Dict[str, List[str]] = {}
    for record in records:
        for host in _hosts(record):
            found.setdefault(host, []).append(record.job_id_text)
    return found
