"""Per-task usage (max/ave/total over samples) and a step's aggregate as sacct shows it.

A task's samples keep the peak and the mean of RSS and VMSize; CPU and I/O are cumulative
counters, so their latest value is the total. At the task's end the wait's rusage gives the
exact user/system CPU (the task and its reaped children) and ru_maxrss is a floor for the
peak RSS, so a task too short to be sampled still shows its CPU and memory. The step takes
the largest task peak (with its node and task), averages over tasks, and sums CPU.
"""

from __future__ import annotations

from typing import Dict, List, Optional

from sbatch_k8s.runtime.accounting.proc_sample import ProcessSample


class TaskUsage:
    """One task's accounting, fed by samples and closed by its rusage."""

    def __init__(self, node: str, task: int) -> None:
        self.node = node
        self.task = task
        self.samples = 0
        self.max_rss = self.max_vmsize = self.max_gpu_mem = 0
        self.rss_sum = self.vmsize_sum = 0
        self.major_faults = 0
        self.read_bytes = self.write_bytes = 0
        self.user_cpu = self.system_cpu = 0.0
        self.sampled_cpu = 0.0

    def add_sample(self, sample: ProcessSample, gpu_mem: int = 0) -> None:
        """Fold one /proc sample (and the tree's GPU memory) into the figures."""
        self.samples += 1
        self.max_rss = max(self.max_rss, sample.rss_bytes)
        self.max_vmsize = max(self.max_vmsize, sample.vmsize_bytes)
        self.max_gpu_mem = max(self.max_gpu_mem, gpu_mem)
        self.rss_sum += sample.rss_bytes
        self.vmsize_sum += sample.vmsize_bytes
        self.major_faults = max(self.major_faults, sample.major_faults)
        self.read_bytes = max(self.read_bytes, sample.read_bytes)
        self.write_bytes = max(self.write_bytes, sample.write_bytes)
        self.sampled_cpu = max(self.sampled_cpu, sample.cpu_seconds)

    def finish(self, user_s: float, system_s: float, maxrss_kib: int) -> None:
        """Close with the wait's rusage: exact CPU; ru_maxrss (KiB on Linux) as RSS floor."""
        self.user_cpu, self.system_cpu = user_s, system_s
        self.max_rss = max(self.max_rss, maxrss_kib * 1024)

    @property
    def total_cpu(self) -> float:
        """User+system CPU seconds: the rusage when closed, else the latest sample."""
        return max(self.user_cpu + self.system_cpu, self.sampled_cpu)

    @property
    def ave_rss(self) -> int:
        """Mean sampled RSS (the peak when never sampled)."""
        return self.rss_sum // self.samples if self.samples else self.max_rss

    @property
    def ave_vmsize(self) -> int:
        """Mean sampled VMSize (the peak when never sampled)."""
        return self.vmsize_sum // self.samples if self.samples else self.max_vmsize


def cpu_clock(seconds: float) -> str:
    """CPU seconds as Slurm's TRES cpu value: ``[D-]HH:MM:SS``."""
    whole = int(seconds)
    days, rest = divmod(whole, 86400)
    text = "%02d:%02d:%02d" % (rest // 3600, rest % 3600 // 60, rest % 60)
    return "%d-%s" % (days, text) if days else text


def tres_string(cpu_s: float, mem: int, vmem: int, disk: int, pages: int) -> str:
    """A TRESUsageIn string in Slurm's order and units (memory in KiB with ``K``)."""
    return "cpu=%s,energy=0,fs/disk=%d,mem=%dK,pages=%d,vmem=%dK" % (
        cpu_clock(cpu_s), disk, mem // 1024, pages, vmem // 1024)


def step_usage(tasks: List[TaskUsage]) -> Optional[Dict[str, object]]:
    """sacct's usage fields for a step from its tasks (None for no tasks).

    Memory in bytes, CPU in seconds; the TRES strings are final text.
    """
    if not tasks:
        return None
    peak = max(tasks, key=lambda task: task.max_rss)
    reader = max(tasks, key=lambda task: task.read_bytes)
    writer = max(tasks, key=lambda task: task.write_bytes)
    count = len(tasks)
    user = sum(task.user_cpu for task in tasks)
    system = sum(task.system_cpu for task in tasks)
    total = sum(task.total_cpu for task in tasks)
    max_cpu = max(task.total_cpu for task in tasks)
    ave_rss = sum(task.ave_rss for task in tasks) // count
    ave_vm = sum(task.ave_vmsize for task in tasks) // count
    max_vm = max(task.max_vmsize for task in tasks)
    pages = max(task.major_faults for task in tasks)
    return {
        "TotalCPU": total, "UserCPU": user, "SystemCPU": system, "AveCPU": total / count,
        "MaxRSS": peak.max_rss, "MaxRSSNode": peak.node, "MaxRSSTask": peak.task,
        "AveRSS": ave_rss, "MaxVMSize": max_vm, "AvePages": pages,
        "MaxDiskRead": reader.read_bytes, "MaxDiskWrite": writer.write_bytes,
        "TRESUsageInMax": tres_string(max_cpu, peak.max_rss, max_vm,
                                      reader.read_bytes, pages),
        "TRESUsageInAve": tres_string(total / count, ave_rss, ave_vm,
                                      sum(t.read_bytes for t in tasks) // count, pages),
    }
