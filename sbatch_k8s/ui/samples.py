"""The console's resource charts: per node, points over time from the job's recorded usage.

A running job's record holds each step's latest usage (the runtime samples every
``--acctg-freq`` seconds; :class:`parsers.step_usage.StepUsage`), per node: CPU seconds so far,
and the RSS and GPU memory its tasks held at the last sample. Each time the page asks and the
figures changed, the console adds one point per node (kept in its memory, the last
:data:`POINT_LIMIT`), summing the job's steps on that node: CPU as a percentage of one core
over the time since the node's previous point (since the job's start for the first), memory
and GPU memory in MiB. The chart's time is when the console saw the change. GPU utilisation
is not sampled (``nvidia-smi`` gives memory per process only): the answer says so.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any, Deque, Dict, List, Optional, Tuple

from parsers.job_records import JobRecord

#: Points kept per node and job (at the default 30 s interval: six hours).
POINT_LIMIT = 720
MIB = 1 << 20
#: Why there is no GPU utilisation chart.
NO_GPU_UTILISATION = "GPU utilisation is not sampled (GPU memory is, where nvidia-smi runs)"
Point = Tuple[float, Dict[str, float]]


class SampleHistory:
    """Every job's points so far, per node (one console, any thread)."""

    def __init__(self, limit: int = POINT_LIMIT) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._points: Dict[str, Dict[str, Deque[Point]]] = {}
        #: Per job and node: (time, CPU seconds, RSS, GPU memory) of the last point.
        self._last: Dict[str, Dict[str, Tuple[float, float, int, int]]] = {}

    def observe(self, record: JobRecord, now: float) -> Optional[Dict[str, Any]]:
        """The job's series after adding what changed since the last look; None when its
        steps carry no usage at all (not sampled yet, ``--acctg-freq=0``, an old job)."""
        totals = node_totals(record)
        if totals is None:
            return None
        if record.end_time is not None:
            now = min(now, float(record.end_time))    # an ended job's last point: its end
        key = record.job_id_text
        with self._lock:
            points = self._points.setdefault(key, {})
            last = self._last.setdefault(key, {})
            for node, (cpu, rss, gpu) in sorted(totals.items()):
                before = last.get(node)
                if before is not None and before[1:] == (cpu, rss, gpu):
                    continue
                since, cpu_before = ((before[0], before[1]) if before is not None
                                     else (float(record.start_time or now), 0.0))
                value = {"rss_mb": round(rss / MIB, 1), "gpu_mem_mb": round(gpu / MIB, 1)}
                if now > since:
                    value["cpu"] = round(max(cpu - cpu_before, 0.0) / (now - since) * 100, 1)
                points.setdefault(node, deque(maxlen=self.limit)).append((now, value))
                last[node] = (now, cpu, rss, gpu)
            series = [{"node": node, "points": [[t, v] for t, v in kept]}
                      for node, kept in sorted(points.items())]
        return {"series": series, "notes": [NO_GPU_UTILISATION]}


def node_totals(record: JobRecord) -> Optional[Dict[str, Tuple[float, int, int]]]:
    """Per node: CPU seconds of all the job's steps so far, RSS and GPU memory held now;
    None when no step carries usage."""
    totals: Dict[str, List[float]] = {}
    sampled = False
    for step in record.steps:
        if step.usage is None:
            continue
        sampled = True
        for node, usage in step.usage.nodes.items():
            into = totals.setdefault(node, [0.0, 0, 0])
            into[0] += usage.cpu
            into[1] += usage.rss_now
            into[2] += usage.gpu_mem_now
    if not sampled:
        return None
    return {node: (round(v[0], 3), int(v[1]), int(v[2])) for node, v in totals.items()}
