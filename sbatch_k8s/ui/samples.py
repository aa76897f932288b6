"""The console's resource charts: per node, points over time from the job's recorded usage.

A running job's record holds each step's latest usage (the runtime samples every
``--acctg-freq`` seconds; :class:`parsers.step_usage.StepUsage`), per node: CPU seconds so far,
and the RSS and GPU memory its tasks held at the last sample. Each time the page asks and the
figures changed, the console adds one point per node (kept in its memory: the last
:data:`POINT_LIMIT` per node, for the last :data:`JOB_LIMIT` jobs looked at), summing the job's
steps on that node (an ended step keeps its final CPU seconds): CPU as a percentage of one core
over the time since the node's previous point (since the job's start for the first), memory
and GPU memory in MiB (left out, and the answer says so, while no node showed any). A point's
time is when the console saw the change, or the job's end when it saw a finished job's
figures first. GPU utilisation (% of the GPUs the node's tasks see, from ``nvidia-smi``) is
charted where it was measured; where it never was, the answer says so.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from typing import Any, Deque, Dict, List, NamedTuple, Optional, Tuple

from parsers.job_records import JobRecord

#: Points kept per node and job (at the default 30 s interval: six hours).
POINT_LIMIT = 720
#: Jobs whose points are kept; the one looked at least recently goes first.
JOB_LIMIT = 200
MIB = 1 << 20
#: Why there is no GPU utilisation chart.
NO_GPU_UTILISATION = ("No GPU utilisation was measured on this job's nodes (no GPU in use, "
                      "or no nvidia-smi)")
#: Why there is no GPU memory chart.
NO_GPU_MEMORY = "No GPU memory was seen on this job's nodes (no GPU in use, or no nvidia-smi)"
Point = Tuple[float, Dict[str, float]]


class NodeTotals(NamedTuple):
    """One node's figures summed over the job's steps."""

    cpu_s: float
    rss_bytes: int
    gpu_mem_bytes: int
    #: The busiest step's GPU utilisation there (%; None: none measured).
    gpu_util: Optional[float] = None


class _JobPoints:
    """One run of one job: per node, its points and the figures of its last point."""

    def __init__(self, start_time: Optional[int], limit: int) -> None:
        self.start_time = start_time
        self.limit = limit
        self.points: Dict[str, Deque[Point]] = {}
        self.last: Dict[str, Tuple[float, NodeTotals]] = {}

    def add(self, node: str, totals: NodeTotals, now: float, end: Optional[float]) -> None:
        """A point for ``node`` if its figures changed since its last one."""
        before = self.last.get(node)
        if before is not None and before[1] == totals:
            return
        if before is not None:
            since, cpu_before = before[0], before[1].cpu_s
        else:       # the first point: since the job's start
            since = now if self.start_time is None else float(self.start_time)
            cpu_before = 0.0
        # A finished job's figures belong to its run: at its end, unless a point already
        # stands later (a record that lagged behind the end).
        at = end if end is not None and since < end < now else now
        if before is not None and at <= since:
            return      # another look at the same instant already placed this node's point
        value = {"rss_mb": round(totals.rss_bytes / MIB, 1),
                 "gpu_mem_mb": round(totals.gpu_mem_bytes / MIB, 1)}
        if totals.gpu_util is not None:
            value["gpu"] = totals.gpu_util
        if at > since:
            value["cpu"] = round(max(totals.cpu_s - cpu_before, 0.0) / (at - since) * 100, 1)
        self.points.setdefault(node, deque(maxlen=self.limit)).append((at, value))
        self.last[node] = (at, totals)

    def answer(self) -> Dict[str, Any]:
        """The series per node, GPU memory left out when none was ever seen (a chart of
        zeros would claim a measurement where no GPU or no ``nvidia-smi`` was), and notes."""
        gpu_seen = any(v["gpu_mem_mb"] for kept in self.points.values() for _, v in kept)
        util_seen = any("gpu" in v for kept in self.points.values() for _, v in kept)
        series = [{"node": node, "points": [
            [t, v if gpu_seen else {k: x for k, x in v.items() if k != "gpu_mem_mb"}]
            for t, v in kept]} for node, kept in sorted(self.points.items())]
        return {"series": series,
                "notes": ([] if util_seen else [NO_GPU_UTILISATION]) +
                         ([] if gpu_seen else [NO_GPU_MEMORY])}


class SampleHistory:
    """Every job's points so far, per node (one console, any thread)."""

    def __init__(self, limit: int = POINT_LIMIT, jobs: int = JOB_LIMIT) -> None:
        self.limit = limit
        self.jobs = jobs
        self._lock = threading.Lock()
        self._runs: "OrderedDict[str, _JobPoints]" = OrderedDict()

    def observe(self, record: JobRecord, now: float) -> Optional[Dict[str, Any]]:
        """The job's series after adding what changed since the last look; None when its
        steps carry no usage at all (not sampled yet, ``--acctg-freq=0``, an old job)."""
        totals = node_totals(record)
        if totals is None:
            return None
        end = float(record.end_time) if record.end_time is not None else None
        key = record.job_id_text
        with self._lock:
            run = self._runs.get(key)
            if run is None or run.start_time != record.start_time:   # new, or requeued
                run = self._runs[key] = _JobPoints(record.start_time, self.limit)
            self._runs.move_to_end(key)
            while len(self._runs) > self.jobs:
                self._runs.popitem(last=False)
            for node, figures in sorted(totals.items()):
                run.add(node, figures, now, end)
            return run.answer()


def node_totals(record: JobRecord) -> Optional[Dict[str, NodeTotals]]:
    """Per node: CPU seconds of all the job's steps so far, RSS and GPU memory held now;
    None when no step carries usage."""
    sums: Dict[str, List[float]] = {}
    utils: Dict[str, float] = {}
    sampled = False
    for step in record.steps:
        if step.usage is None:
            continue
        sampled = True
        for node, usage in step.usage.nodes.items():
            into = sums.setdefault(node, [0.0, 0, 0])
            into[0] += usage.cpu
            into[1] += usage.rss_now
            into[2] += usage.gpu_mem_now
            if usage.gpu_util is not None and step.state == "RUNNING":
                utils[node] = max(utils.get(node, 0.0), usage.gpu_util)
    if not sampled:
        return None
    return {node: NodeTotals(round(v[0], 3), int(v[1]), int(v[2]), utils.get(node))
            for node, v in sums.items()}
