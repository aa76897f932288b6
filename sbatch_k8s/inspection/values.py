"""What inspecting a job answers: plain frozen values, the same for every backend.

A job's nodes (on a cluster its pods), the logs it has (each node's own, the batch step's
output files) and what happened to it (events) — as the web console shows them and as
``sbatch-k8s logs|events`` and ``scontrol show job -d`` print them. What a backend cannot
tell is an :class:`Unavailable` saying why, never made up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Unavailable:
    """Something the backends do not offer (yet): why, in one sentence."""

    why: str


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
    """One log of a job: ``key`` names it in URLs (``node-1``, ``stdout``)."""

    key: str
    title: str
    kind: str
    #: Where it is read from (a path, ``pod/<name>``), shown beside it.
    origin: str
    available: bool = True
    why: str = ""
    #: The output file it is a copy of, when read from elsewhere (node 0's pod log).
    copy_of: str = ""

    @property
    def file_name(self) -> str:
        """The name a download of it takes: a node's ``node-N.log``, an output file's own
        name (also when read from the pod log that carries it)."""
        if self.kind == NODE_LOG:
            return f"{self.key}.log"
        path = self.copy_of or self.origin
        return path.rsplit("/", 1)[-1] if path.startswith("/") else f"{self.key}.txt"


@dataclass(frozen=True)
class EventView:
    """One thing that happened to a job or its objects, shown in time order."""

    time: Optional[int]
    type: str
    reason: str
    message: str
    #: What it happened to: ``Pod/x-12-0``, ``Job/x-12``, ``job 12``.
    subject: str
    #: Who says so: ``event`` (a Kubernetes Event), ``pod status``, ``record``.
    source: str
    count: int = 1

