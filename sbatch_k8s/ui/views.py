"""What the console's seam (:mod:`sbatch_k8s.ui.jobs_source`) answers: plain frozen values.

Jobs themselves are Slurm's records (:class:`parsers.job_records.JobRecord`); these are the rest
of what a page shows — who is looking, a job's nodes, its logs and events, the outcome of an
action — in words a page can print as they are. Every value converts to JSON with
:func:`to_json`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Optional, Tuple


@dataclass(frozen=True)
class Unavailable:
    """Something the backends do not offer (yet): why, in one sentence for the page."""

    why: str


@dataclass(frozen=True)
class Identity:
    """Who the console acts as, and on what."""

    user: str
    uid: int
    operator: bool
    backend: str
    describe: str
    cluster: str
    partitions: Tuple[str, ...]
    default_partition: str
    work_dir: str


@dataclass(frozen=True)
class NodeView:
    """One node of a job: on a cluster its pod."""

    index: int
    name: str
    state: str
    #: The pod (Kubernetes) or the process (local) behind the node, "" when none.
    where: str = ""
    #: The Kubernetes node the pod runs on.
    host: str = ""
    restarts: int = 0
    #: Why a pod is not running (its container's waiting or terminated reason).
    detail: str = ""


#: What a log is: one node's own log, or one of the batch step's output files.
NODE_LOG, OUTPUT_FILE = "node", "output"


@dataclass(frozen=True)
class LogSource:
    """One log a job page lists: ``key`` names it in URLs (``node-1``, ``stdout``)."""

    key: str
    title: str
    kind: str
    #: Where it is read from (a path, ``pod/<name>``), for the page's tooltip.
    origin: str
    available: bool = True
    why: str = ""

    @property
    def file_name(self) -> str:
        """The name a download of it takes."""
        if self.kind == NODE_LOG:
            return f"{self.key}.log"
        return self.origin.rsplit("/", 1)[-1] if self.origin.startswith("/") else \
            f"{self.key}.txt"


@dataclass(frozen=True)
class EventView:
    """One thing that happened to a job or its objects, in time order on the page."""

    time: Optional[int]
    type: str
    reason: str
    message: str
    #: What it happened to: ``Pod/x-12-0``, ``Job/x-12``, ``job 12``.
    subject: str
    #: Who says so: ``event`` (a Kubernetes Event), ``pod status``, ``record``.
    source: str
    count: int = 1


@dataclass(frozen=True)
class ActionResult:
    """What an action came to: ``ok``, and Slurm's words (empty when it says nothing)."""

    ok: bool
    message: str = ""


@dataclass(frozen=True)
class SubmitResult:
    """What ``sbatch`` answered: its exit status, output and error lines, the job id."""

    ok: bool
    job_id: Optional[int]
    stdout: str
    stderr: str


@dataclass(frozen=True)
class LintResult:
    """``sbatch --k8s-lint``'s report and whether it found nothing refused."""

    ok: bool
    report: str


@dataclass(frozen=True)
class Submission:
    """How a job was submitted, as far as its records keep it: what "submit again" runs
    (``sbatch ARGV SCRIPT`` in ``work_dir``) after the user confirmed it."""

    script: str
    script_name: str
    argv: Tuple[str, ...]
    work_dir: str


def to_json(value: Any) -> Any:
    """A value of this module (or a tuple/list/dict of them) as JSON-ready data; an
    :class:`Unavailable` as ``{"available": false, "why": …}``."""
    if isinstance(value, Unavailable):
        return {"available": False, "why": value.why}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        data = {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if isinstance(value, LogSource):
            data["file_name"] = value.file_name
        return data
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    return value
