"""One task's accounting: the peaks and counters its samples show, closed by its rusage.

RSS, virtual memory and GPU memory keep their peak over the samples; CPU, major page faults
and I/O are cumulative counters, so their latest value is the total. At the task's end the
wait's rusage gives the exact user/system CPU (the task and its reaped children), so a task
too short to be sampled still shows its CPU; its memory is unknown, as in Slurm (the
rusage's ``ru_maxrss`` is no measure of it: it keeps the high-water mark of the process the
task was forked from, a Python runtime of some 30 MB, across the exec).
:meth:`TaskUsage.figures` is what the task reports; the step folds its tasks' figures with
:meth:`parsers.step_usage.StepUsage.from_tasks` (whose ``Ave…`` of memory is the mean of the
tasks' peaks, as slurmstepd's aggregation makes it).
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from sbatch_k8s.runtime.accounting.proc_sample import ProcessSample


class TaskUsage:
    """One task's accounting, fed by samples and closed by its rusage."""

    def __init__(self, node: str, task: int) -> None:
        self.node = node
        self.task = task
        self.samples = 0
        self.max_rss = self.max_vmsize = self.max_gpu_mem = 0
        self.major_faults = 0
        self.read_bytes = self.write_bytes = 0
        self.user_cpu = self.system_cpu = 0.0
        self.sampled_cpu = 0.0
        #: The latest sample's RSS and GPU memory (what the task holds now; 0 once ended),
        #: and the utilisation of the GPUs it sees (None: it sees none, or none measured).
        self.rss_now = self.gpu_mem_now = 0
        self.gpu_util_now: Optional[float] = None
        self.finished = False

    def add_sample(self, sample: ProcessSample, gpu_mem: int = 0,
                   gpu_util: Optional[float] = None) -> None:
        """Fold one /proc sample (and the tree's GPU memory, its GPUs' utilisation) into
        the figures."""
        self.samples += 1
        self.max_rss = max(self.max_rss, sample.rss_bytes)
        self.max_vmsize = max(self.max_vmsize, sample.vmsize_bytes)
        self.max_gpu_mem = max(self.max_gpu_mem, gpu_mem)
        self.major_faults = max(self.major_faults, sample.major_faults)
        self.read_bytes = max(self.read_bytes, sample.read_bytes)
        self.write_bytes = max(self.write_bytes, sample.write_bytes)
        self.sampled_cpu = max(self.sampled_cpu, sample.cpu_seconds)
        self.rss_now, self.gpu_mem_now = sample.rss_bytes, gpu_mem
        self.gpu_util_now = gpu_util

    def finish(self, user_s: float, system_s: float) -> None:
        """Close with the wait's rusage: the exact CPU."""
        self.user_cpu, self.system_cpu = user_s, system_s
        self.rss_now = self.gpu_mem_now = 0
        self.gpu_util_now = None
        self.finished = True

    @property
    def total_cpu(self) -> float:
        """User+system CPU seconds: the rusage when closed, else the latest sample."""
        if self.finished:
            return self.user_cpu + self.system_cpu
        return self.sampled_cpu

    def figures(self) -> Dict[str, Any]:
        """What the task reports (:data:`parsers.step_usage.METRICS` and the CPU split; a
        running task's CPU split is unknown until its end: all of it counts as user)."""
        user, system = ((self.user_cpu, self.system_cpu) if self.finished
                        else (self.sampled_cpu, 0.0))
        figures: Dict[str, Any] = {
            "node": self.node, "task": self.task, "user": round(user, 3),
            "sys": round(system, 3), "cpu": round(self.total_cpu, 3),
            "rss": self.max_rss, "vmem": self.max_vmsize, "pages": self.major_faults,
            "read": self.read_bytes, "write": self.write_bytes,
            "gpumem": self.max_gpu_mem, "rss_now": self.rss_now, "gpu_now": self.gpu_mem_now,
            "sampled": self.samples > 0}
        if self.gpu_util_now is not None:
            figures["gpu_util"] = round(self.gpu_util_now, 1)
        return figures
