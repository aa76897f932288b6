"""Sampling a running task every interval and closing it with its wait's rusage.

The sampler is a daemon thread per node step (one /proc parent scan per tick serves every
task); ``interval_s`` 0 means no sampling (``--acctg-freq=0``), and the task's end still
records its exact CPU from :func:`reap`.
"""

from __future__ import annotations

import os
import threading
from typing import Callable, Dict, Optional, Tuple

from sbatch_k8s.runtime.accounting.gpu import gpu_memory_by_pid
from sbatch_k8s.runtime.accounting.proc_sample import parent_map, sample_tree
from sbatch_k8s.runtime.accounting.usage import TaskUsage

GpuReader = Callable[[], Dict[int, int]]


class StepSampler:
    """Samples the process trees of a node's tasks (``{task id: leader pid}``)."""

    def __init__(self, node: str, interval_s: float, proc: str = "/proc",
                 gpu_reader: GpuReader = gpu_memory_by_pid) -> None:
        self.node = node
        self.interval_s = interval_s
        self.proc = proc
        self.gpu_reader = gpu_reader
        self.leaders: Dict[int, int] = {}
        self.usage: Dict[int, TaskUsage] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def add_task(self, task: int, pid: int) -> TaskUsage:
        """Start following task ``task`` whose leader is ``pid``."""
        with self._lock:
            self.leaders[task] = pid
            self.usage[task] = TaskUsage(self.node, task)
            if self._thread is None and self.interval_s > 0:
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name="acct-sampler")
                self._thread.start()
            return self.usage[task]

    def sample_now(self) -> None:
        """Take one sample of every followed task."""
        with self._lock:
            leaders = dict(self.leaders)
        if not leaders:
            return
        parents = parent_map(self.proc)
        gpu = self.gpu_reader()
        for task, pid in leaders.items():
            sample = sample_tree(pid, self.proc, parents)
            if sample is None:
                continue
            gpu_mem = sum(gpu.get(member, 0) for member in sample.pids)
            with self._lock:
                if task in self.leaders:
                    self.usage[task].add_sample(sample, gpu_mem)

    def end_task(self, task: int, rusage: "os.struct_rusage") -> TaskUsage:
        """Stop following ``task`` and close it with its wait's rusage."""
        with self._lock:
            self.leaders.pop(task, None)
            usage = self.usage[task]
        usage.finish(rusage.ru_utime, rusage.ru_stime, rusage.ru_maxrss)
        return usage

    def stop(self) -> None:
        """End the sampling thread."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample_now()


def reap(pid: int) -> Tuple[int, "os.struct_rusage"]:
    """Wait for child ``pid``; its wait status and rusage (the task and its reaped children)."""
    _, status, rusage = os.wait4(pid, 0)
    return status, rusage
