"""Accounting overhead on a step's node: CPU seconds the task sampler
(:mod:`sbatch_k8s.runtime.accounting.sampler`) spends per wall second, for a step of 8
processes, at Slurm's default interval (30 s) and at 1 s. Each sample is one scan of /proc
(every process on the machine, to find the tasks' descendants) plus the 8 trees' files and
nvidia-smi when present; its CPU cost (this process's CPU time around ``sample_now``) divided
by the interval is the share of one core. Goal: under 1 %.
"""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Iterable, List

from parsers.values.acctg_freq import DEFAULT_TASK_INTERVAL_S
from sbatch_k8s.runtime.accounting.sampler import StepSampler
from tests.bench.context import Context
from tests.bench.core import Figure

TASKS = 8


def _sample_cpu_s(runs: int) -> List[float]:
    """CPU seconds of one sample of 8 live task trees, ``runs`` times."""
    procs = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
             for _ in range(TASKS)]
    sampler = StepSampler("bench-0")
    try:
        for task, proc in enumerate(procs):
            sampler.add_task(task, proc.pid)
        sampler.sample_now()  # warm-up: imports, nvidia-smi lookup
        costs = []
        for _ in range(runs):
            begun = time.process_time()
            sampler.sample_now()
            costs.append(time.process_time() - begun)
        return costs
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def figures(ctx: Context) -> Iterable[Figure]:
    costs = _sample_cpu_s(ctx.repeats(30))
    for interval in (DEFAULT_TASK_INTERVAL_S, 1):
        shares = [cost / interval * 100 for cost in costs]
        figure = Figure(f"accounting sampler, {TASKS} processes, every {interval} s", "% core",
                        shares, goal="< 1 % of one core")
        figure.goal_met = figure.median is not None and figure.median < 1
        yield figure
