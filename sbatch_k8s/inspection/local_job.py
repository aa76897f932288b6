"""What the local backend keeps of a job beyond its record, read from its job directory.

A local job's node *i* is a runtime process whose own output (the runtime's messages, and
whatever the job writes to it) goes to ``<state>/jobs/<id>/node-<i>.log``; its description
(what the runtime reads to become the job) is ``job.json`` there. There are no Kubernetes
events: the job's events are its record's and the runtime's; a node is up when its runtime
has written its node file (``node-<i>/job-<id>.json``, :mod:`sbatch_k8s.runtime.agent.node_file`).
The node logs carry no times, so they cannot be read from a time on (``--since``).
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Dict, List, Optional, Union

from parsers.job_records import JobRecord
from sbatch_k8s.inspection.file_logs import FileLog, LogHandle, SinceUnavailable
from sbatch_k8s.inspection.output_files import output_sources
from sbatch_k8s.inspection.values import NODE_LOG, EventView, LogSource, NodeView, Unavailable

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
             ended: Callable[[], bool], since: Optional[int] = None) -> LogHandle:
    """Every local log is a file (with no times in it: ``since`` cannot be honoured)."""
    if since is not None:
        raise SinceUnavailable("the local backend's logs carry no times")
    return FileLog(source.origin, ended)


def events(backend: Any, record: JobRecord) -> List[EventView]:
    """No events beyond the record's and the runtime's on this machine."""
    return []


def nodes_up(backend: Any, record: JobRecord) -> Dict[str, int]:
    """Node name → when its runtime wrote its node file (it was up then)."""
    from sbatch_k8s.runtime.agent.node_file import file_name

    directory = _job_dir(backend, record)
    found = {}
    for index, name in enumerate(_hosts(record)):
        try:
            found[name] = int(os.stat(os.path.join(directory, f"node-{index}",
                                                   file_name(record.job_id))).st_mtime)
        except OSError:
            continue
    return found


def objects(backend: Any, record: JobRecord) -> Union[List[Dict[str, Any]], Unavailable]:
    """The job's description (``job.json``), its environment left out: the one "object" a
    local job has."""
    shown = description(backend, record)
    if shown is None:
        return Unavailable("the job's description is not kept (it has not started, or its "
                           "directory was removed)")
    return [dict(sorted(shown.items()))]


def description(backend: Any, record: JobRecord) -> Optional[Dict[str, Any]]:
    """``job.json`` of the job's directory without :data:`PRIVATE_KEYS`; None when gone."""
    try:
        with open(os.path.join(_job_dir(backend, record), "job.json")) as f:
            found = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict):
        return None
    return {k: v for k, v in found.items() if k not in PRIVATE_KEYS}


def jobs_on_nodes(backend: Any, records: List[JobRecord]) -> Dict[str, List[str]]:
    """Node name → the running jobs on it (their node lists name the local nodes)."""
    found: Dict[str, List[str]] = {}
    for record in records:
        for host in _hosts(record):
            found.setdefault(host, []).append(record.job_id_text)
    return found
