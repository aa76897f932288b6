"""``seff``'s efficiency report of a job, as Slurm 22.05's ``contribs/seff`` prints it.

CPU utilised is the sum of every ended step's TotalCPU (seconds, the fractions summed and
rounded once); its efficiency is that over wall-clock time × allocated CPUs. Memory
utilised is the largest per-task peak RSS of any step times that step's task count
(``(estimated maximum)`` unless it had one task), against the requested memory: per CPU ×
CPUs or per node × nodes. A ``step`` (``seff 12.0``) narrows CPU and memory to that step.
"""

from __future__ import annotations

import math
from typing import List, NamedTuple, Optional, Tuple

from parsers.formats.sacct_fields import elapsed_s
from parsers.formats.states import stored_state
from parsers.job_records import PENDING, RUNNING, JobRecord, StepRecord

UNITS = "KMGTPE"


def time_text(seconds: int) -> str:
    """``[D-]HH:MM:SS`` (seff's ``time2str``)."""
    days, rest = divmod(int(seconds), 86400)
    text = "%02d:%02d:%02d" % (rest // 3600, rest % 3600 // 60, rest % 60)
    return f"{days}-{text}" if days else text


def kib_text(kib: float) -> str:
    """KiB as ``114.64 MB`` (seff's ``kbytes2str``; ``0.00 MB`` for none)."""
    if kib <= 0:
        return "0.00 MB"
    exponent = min(int(math.log(kib) / math.log(1024)), len(UNITS) - 1)
    return "%.2f %sB" % (kib / 1024 ** exponent, UNITS[exponent])


def _cpu_seconds(steps: List[StepRecord]) -> int:
    """Σ whole seconds + the fractions summed, rounded once (half up)."""
    totals = [s.usage.total_cpu for s in steps if s.usage is not None and s.state != RUNNING]
    whole = sum(int(t) for t in totals)
    return whole + int(sum(t - int(t) for t in totals) + 0.5)


def _memory(steps: List[StepRecord]) -> Tuple[float, int]:
    """(KiB, tasks): the step with the largest per-task peak, times its task count."""
    best_kib, tasks = 0.0, 0
    for step in steps:
        if step.usage is None:
            continue
        peak = step.usage.metrics["rss"].max.value / 1024
        if peak > best_kib:
            best_kib, tasks = peak, step.usage.tasks
    return best_kib * tasks, tasks


class Figures(NamedTuple):
    """What seff computes from the record (its ``-d`` line, in that order)."""

    cpus: int
    nodes: int
    tasks: int
    req_kib: int
    per_node: bool
    cpu_s: int
    wall_s: int
    mem_kib: float
    exit_status: int


def figures(job: JobRecord, now: int, step_id: Optional[str] = None) -> Figures:
    """The figures of ``job`` (only ``step_id``'s usage when given)."""
    cpus, nodes = max(job.cpus, 1), max(job.node_count, 1)
    steps = [s for s in job.steps if step_id is None or s.step_id == step_id]
    mem_kib, tasks = _memory(steps)
    per = job.min_memory_mb or 0
    req_kib = per * 1024 * (cpus if job.memory_per_cpu else nodes)
    return Figures(cpus, nodes, tasks, req_kib, not job.memory_per_cpu, _cpu_seconds(steps),
                   elapsed_s(job.start_time, job.end_time, now), mem_kib, job.exit_code)


def seff_figures(job: JobRecord, now: int, step_id: Optional[str] = None) -> str:
    """seff ``-d``'s values line (after ``Slurm data:``)."""
    f = figures(job, now, step_id)
    array = (f"{job.array_job_id}_{job.array_task_id}"
             if job.array_job_id is not None and job.array_task_id is not None else "")
    return " ".join(str(v) for v in (
        job.job_id, array, job.user, job.group, stored_state(job.state), job.cluster,
        f.cpus, f.nodes, f.tasks, f.req_kib, int(f.per_node), f.cpu_s, f.wall_s,
        int(f.mem_kib), f.exit_status))


def seff_report(job: JobRecord, now: int, step_id: Optional[str] = None) -> str:
    """The report's lines for ``job`` (only ``step_id``'s usage when given)."""
    lines = [f"Job ID: {job.job_id}"]
    if job.array_job_id is not None and job.array_task_id is not None:
        lines.append(f"Array Job ID: {job.array_job_id}_{job.array_task_id}")
    state = stored_state(job.state)
    lines += [f"Cluster: {job.cluster}", f"User/Group: {job.user}/{job.group}",
              f"State: {state}" if state in (PENDING, RUNNING)
              else f"State: {state} (exit code {job.exit_code})"]
    f = figures(job, now, step_id)
    lines += ["Cores: 1"] if f.cpus == 1 else [f"Nodes: {f.nodes}",
                                                f"Cores per node: {f.cpus // f.nodes}"]
    if state == PENDING:
        lines.append("Efficiency not available for jobs in the PENDING state.")
        return "".join(line + "\n" for line in lines)
    core_wall = f.wall_s * f.cpus
    estimated = "" if f.tasks == 1 else " (estimated maximum)"
    share = ""
    if f.tasks != 1:
        split = f.nodes if f.per_node else f.cpus
        share = f" ({kib_text(f.req_kib / split)}/{'node' if f.per_node else 'core'})"
    lines += [f"CPU Utilized: {time_text(f.cpu_s)}",
              "CPU Efficiency: %.2f%% of %s core-walltime" % (
                  f.cpu_s / core_wall * 100 if core_wall else 0.0, time_text(core_wall)),
              f"Job Wall-clock time: {time_text(f.wall_s)}",
              f"Memory Utilized: {kib_text(f.mem_kib)}{estimated}",
              "Memory Efficiency: %.2f%% of %s%s" % (
                  f.mem_kib / f.req_kib * 100 if f.req_kib else 0.0, kib_text(f.req_kib),
                  share)]
    if state == RUNNING:
        lines.append("WARNING: Efficiency statistics may be misleading for RUNNING jobs.")
    return "".join(line + "\n" for line in lines)
