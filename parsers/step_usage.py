"""A step's resource usage as Slurm's accounting keeps it: per metric, the largest and smallest
task value (with the node and task that had it) and the sum over tasks.

The step's tasks report one figure per metric (:data:`METRICS`) and their user and system CPU
seconds; :meth:`StepUsage.from_tasks` folds them the way slurmstepd's ``jobacctinfo_aggregate``
folds its tasks' accounting, so ``MaxRSS``/``MaxRSSNode``/``MaxRSSTask``, ``MinCPU…`` and the
``Ave…`` fields (the sum over the tasks divided by their count) all come from one record. The
record travels as compact JSON (a published step carries it; every byte counts in a record
ConfigMap) and is read on the login side by ``sacct``, ``sstat`` and ``seff``.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence

#: The per-task figures, in Slurm's TRES order where they have one: CPU seconds (user +
#: system), RSS and virtual memory (bytes), major page faults, bytes read and written, and
#: GPU memory (bytes; 0 without a GPU).
METRICS = ("cpu", "rss", "vmem", "pages", "read", "write", "gpumem")


class Extreme(NamedTuple):
    """A task's value that was the largest (or smallest) of the step, and where it was."""

    value: float
    node: str
    task: int


class MetricUsage(NamedTuple):
    """One metric over a step's tasks."""

    max: Extreme
    min: Extreme
    total: float


class NodeUsage(NamedTuple):
    """A step's tasks on one node, summed: CPU seconds so far, and the RSS and GPU memory they
    held at the last sample; with the mean utilisation (%) of the GPUs its tasks see (None:
    no GPU measured) — what the console charts over time."""

    cpu: float
    rss_now: int
    gpu_mem_now: int
    gpu_util: Optional[float] = None


class StepUsage(NamedTuple):
    """A step's (or a batch script's) usage: its task count, CPU split, metrics and the
    per-node sums."""

    tasks: int
    user_cpu: float
    system_cpu: float
    metrics: Dict[str, MetricUsage]
    nodes: Dict[str, NodeUsage] = {}
    #: Whether any task was sampled: a step none of whose tasks lived until a sample has
    #: its CPU times only (its memory, I/O and the like were never measured).
    sampled: bool = True

    @classmethod
    def from_tasks(cls, tasks: Sequence[Mapping[str, Any]]) -> Optional["StepUsage"]:
        """Fold task figures (``{"node", "task", "user", "sys", <metric>: value…}``); None
        for no tasks."""
        if not tasks:
            return None
        metrics = {}
        for name in METRICS:
            values = [(float(t.get(name) or 0), str(t["node"]), int(t["task"])) for t in tasks]
            # The first task with the extreme value wins, as Slurm keeps the first it saw.
            high = max(values, key=lambda v: v[0])
            low = min(values, key=lambda v: v[0])
            metrics[name] = MetricUsage(Extreme(*high), Extreme(*low),
                                        sum(v[0] for v in values))
        nodes: Dict[str, NodeUsage] = {}
        utils: Dict[str, List[float]] = {}
        for t in tasks:
            node = str(t["node"])
            had = nodes.get(node, NodeUsage(0.0, 0, 0))
            nodes[node] = NodeUsage(had.cpu + float(t.get("cpu") or 0),
                                    had.rss_now + int(t.get("rss_now") or 0),
                                    had.gpu_mem_now + int(t.get("gpu_now") or 0))
            if t.get("gpu_util") is not None:
                utils.setdefault(node, []).append(float(t["gpu_util"]))
        for node, values in utils.items():
            nodes[node] = nodes[node]._replace(gpu_util=round(sum(values) / len(values), 1))
        return cls(len(tasks), sum(float(t.get("user") or 0) for t in tasks),
                   sum(float(t.get("sys") or 0) for t in tasks), metrics, nodes,
                   any(t.get("sampled", True) for t in tasks))

    def average(self, metric: str) -> float:
        """The metric's sum over the tasks divided by their count."""
        return self.metrics[metric].total / self.tasks if self.tasks else 0.0

    @property
    def total_cpu(self) -> float:
        """User + system CPU seconds of every task."""
        return self.user_cpu + self.system_cpu

    def to_json(self) -> Dict[str, Any]:
        """The compact document: ``{"n", "u", "s", <metric>: [max, node, task, min, node,
        task, total], "by_node": {node: [cpu, rss_now, gpu_now(, gpu_util)]}}``, numbers
        rounded (CPU to ms, amounts to whole bytes)."""
        document: Dict[str, Any] = {"n": self.tasks, "u": round(self.user_cpu, 3),
                                    "s": round(self.system_cpu, 3)}
        if not self.sampled:
            document["unsampled"] = 1
        for name, usage in self.metrics.items():
            document[name] = [_number(usage.max.value), usage.max.node, usage.max.task,
                              _number(usage.min.value), usage.min.node, usage.min.task,
                              _number(usage.total)]
        document["by_node"] = {
            name: [_number(round(n.cpu, 3)), n.rss_now, n.gpu_mem_now] + (
                [n.gpu_util] if n.gpu_util is not None else [])
            for name, n in self.nodes.items()}
        return document

    @classmethod
    def from_json(cls, document: Any) -> Optional["StepUsage"]:
        """The record :meth:`to_json` wrote; None for anything else (an older record, a
        damaged one: no usage rather than a failed command)."""
        if not isinstance(document, Mapping):
            return None
        try:
            metrics = {}
            for name in METRICS:
                row: List[Any] = list(document.get(name) or [0, "", 0, 0, "", 0, 0])
                metrics[name] = MetricUsage(Extreme(float(row[0]), str(row[1]), int(row[2])),
                                            Extreme(float(row[3]), str(row[4]), int(row[5])),
                                            float(row[6]))
            nodes = {str(name): NodeUsage(float(row[0]), int(row[1]), int(row[2]),
                                          float(row[3]) if len(row) > 3 else None)
                     for name, row in dict(document.get("by_node") or {}).items()}
            return cls(int(document["n"]), float(document["u"]), float(document["s"]),
                       metrics, nodes, not document.get("unsampled"))
        except (KeyError, IndexError, TypeError, ValueError):
            return None


def _number(value: float) -> float:
    """CPU seconds to the millisecond; whole amounts as integers."""
    return int(value) if float(value).is_integer() else round(value, 3)
