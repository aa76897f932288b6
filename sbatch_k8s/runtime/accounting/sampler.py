"""Sampling a node's running tasks every interval, and closing each with its wait's rusage.

One :class:`StepSampler` per step on a node (and one for the batch script): one /proc parent
scan per sample serves every task. :func:`sample_every` runs the samples on the node's event
loop (each in a worker thread: reading /proc blocks) and hands every task's figures so far to
a callback — the node step sends them to srun, whence ``sstat`` sees them. An interval of 0
(``--acctg-freq=0``) takes no samples; a task's end still records its exact CPU and its peak
RSS from its rusage (:mod:`sbatch_k8s.runtime.stepd.child_process` reaps it).
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence

from sbatch_k8s.runtime.accounting.gpu import gpu_memory_by_pid, gpu_utilisation_by_index
from sbatch_k8s.runtime.accounting.proc_sample import parent_map, sample_tree
from sbatch_k8s.runtime.accounting.usage import TaskUsage

GpuReader = Callable[[], Dict[int, int]]
UtilReader = Callable[[], Dict[int, float]]
Figures = List[Dict[str, Any]]


class StepSampler:
    """Samples the process trees of a node's tasks (``{task id: leader pid}``)."""

    def __init__(self, node: str, proc: str = "/proc",
                 gpu_reader: GpuReader = gpu_memory_by_pid,
                 util_reader: UtilReader = gpu_utilisation_by_index) -> None:
        self.node = node
        self.proc = proc
        self.gpu_reader = gpu_reader
        self.util_reader = util_reader
        self.leaders: Dict[int, int] = {}
        #: The GPU indices each task sees (its utilisation is theirs, averaged).
        self.gpus: Dict[int, Sequence[int]] = {}
        self.usage: Dict[int, TaskUsage] = {}
        self._lock = threading.Lock()

    def add_task(self, task: int, pid: int, gpus: Sequence[int] = ()) -> TaskUsage:
        """Start following task ``task`` whose leader is ``pid`` (seeing GPUs ``gpus``)."""
        with self._lock:
            self.leaders[task] = pid
            self.gpus[task] = tuple(gpus)
            self.usage[task] = TaskUsage(self.node, task)
            return self.usage[task]

    def sample_now(self) -> None:
        """Take one sample of every followed task."""
        with self._lock:
            leaders = dict(self.leaders)
        if not leaders:
            return
        parents = parent_map(self.proc)
        gpu = self.gpu_reader()
        util = self.util_reader() if any(self.gpus.get(t) for t in leaders) else {}
        for task, pid in leaders.items():
            sample = sample_tree(pid, self.proc, parents)
            if sample is None:
                continue
            gpu_mem = sum(gpu.get(member, 0) for member in sample.pids)
            seen = [util[i] for i in self.gpus.get(task, ()) if i in util]
            with self._lock:
                if task in self.leaders:
                    self.usage[task].add_sample(sample, gpu_mem,
                                                sum(seen) / len(seen) if seen else None)

    def end_task(self, task: int, rusage: "Optional[os.struct_rusage]") -> TaskUsage:
        """Stop following ``task`` and close it with its wait's rusage (None: another
        waiter reaped it, and the last sample stands)."""
        with self._lock:
            self.leaders.pop(task, None)
            usage = self.usage[task]
        if rusage is not None:
            usage.finish(rusage.ru_utime, rusage.ru_stime)
        return usage

    def figures(self) -> Figures:
        """Every task's figures so far (running and ended), in task order."""
        with self._lock:
            return [self.usage[task].figures() for task in sorted(self.usage)]

    @property
    def following(self) -> bool:
        """Whether a task is still followed."""
        with self._lock:
            return bool(self.leaders)


async def sample_every(sampler: StepSampler, interval_s: float,
                       report: Optional[Callable[[Figures], None]] = None) -> None:
    """Sample every ``interval_s`` (nothing for 0) until cancelled, then ``report`` the
    figures; a sample that fails (an unreadable /proc) is skipped, never the task's end."""
    if interval_s <= 0:
        return
    loop = asyncio.get_event_loop()
    while True:
        await asyncio.sleep(interval_s)
        if not sampler.following:
            continue
        try:
            await loop.run_in_executor(None, sampler.sample_now)
        except OSError:
            continue
        if report is not None:
            report(sampler.figures())
