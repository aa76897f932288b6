"""Accounting: its overhead on a node, and sstat's latency.

- The task sampler (:mod:`sbatch_k8s.runtime.accounting.sampler`) alone: CPU seconds per wall
  second for a step of 8 processes at Slurm's default interval (30 s) and at 1 s. Each sample
  is one scan of /proc (every process on the machine, to find the tasks' descendants) plus the
  8 trees' files and nvidia-smi when present; its CPU cost (this process's CPU time around
  ``sample_now``) divided by the interval is the share of one core. Goal: under 1 %.
- The whole runtime of a real local job (2 nodes, a step of 4 ``sleep`` tasks on each): the
  CPU its processes (node agents, batch script, srun — everything but the tasks) use per wall
  second and node, with ``--acctg-freq=1`` beside ``--acctg-freq=0`` (no sampling), taken
  side by side: the difference is what accounting costs a node end to end (sampling, the
  figures to srun, the fold to node 0, the step log).
- ``sstat -j JOB`` of that running step, whole process, beside ``sacct -j JOB``.
"""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Iterable, List

from parsers.values.acctg_freq import DEFAULT_TASK_INTERVAL_S
from sbatch_k8s.runtime.accounting.sampler import StepSampler
from tests.bench.context import Context, command_argv
from tests.bench.core import Figure, process_times
from tests.local.harness import LocalSlurm, job_id_of

#: The measured job: a step of 4 sleeping tasks on each of 2 nodes.
JOB = "#!/bin/sh\n#SBATCH -N2 --ntasks-per-node=4\nsrun sleep 600\n"
#: Wall seconds each runtime-CPU sample spans.
WINDOW_S = 10.0

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
    slurm = ctx.slurm
    runs = ctx.repeats(3)
    with_sampling: List[float] = []
    without: List[float] = []
    for _ in range(runs):
        for freq, into in (("1", with_sampling), ("0", without)):
            job = _start(slurm, freq)
            try:
                into.append(_runtime_share(slurm, job))
                if freq == "1" and len(with_sampling) == 1:
                    yield from _sstat_latency(ctx, slurm, job)
            finally:
                slurm.run("scancel", str(job))
                _ended(slurm, job)
    figure = Figure("runtime CPU per node, accounting every 1 s", "% core", with_sampling,
                    goal="< 1 % of one core over no accounting")
    figure.comparison, figure.comparison_samples = "--acctg-freq=0", without
    extra = (figure.median or 0) - (figure.comparison_median or 0)
    figure.goal_met = extra < 1
    yield figure


def _start(slurm: LocalSlurm, freq: str) -> int:
    """Submit the measured job; its id once its step runs on both nodes."""
    slurm.script("acct.sh", JOB)
    job = job_id_of(slurm.run("sbatch", f"--acctg-freq={freq}", "acct.sh").stdout)
    slurm.wait_for(lambda: f"{job}.0" in slurm.run("squeue", "-s", "-h", "-j", str(job))
                   .stdout, timeout=60, interval=0.2)
    time.sleep(2.0)                   # the tasks started; the first samples taken
    return job


def _ended(slurm: LocalSlurm, job: int) -> None:
    slurm.wait_for(lambda: slurm.run("squeue", "-h", "-j", str(job)).stdout.strip() == "",
                   timeout=60, interval=0.2)


def _cpu_ticks(pids: List[int]) -> int:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total


def _is_task(pid: int) -> bool:
    """Whether ``pid`` is one of the measured tasks (a ``sleep``), or gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().split(b"\0")[0].endswith(b"sleep")
    except OSError:
        return True


def _runtime_share(slurm: LocalSlurm, job: int) -> float:
    """% of one core the job's runtime processes use per node over :data:`WINDOW_S`."""
    import os

    pids = [pid for pid in slurm.processes(with_server=False) if not _is_task(pid)]
    before = _cpu_ticks(pids)
    time.sleep(WINDOW_S)
    used_s = (_cpu_ticks(pids) - before) / os.sysconf("SC_CLK_TCK")
    return used_s / WINDOW_S / 2 * 100


def _sstat_latency(ctx: Context, slurm: LocalSlurm, job: int) -> Iterable[Figure]:
    slurm.wait_for(lambda: slurm.run("sstat", "-n", "-P", "-j", str(job), "-o", "MaxRSS")
                   .stdout.strip() != "", timeout=30, interval=0.2)
    repeats = ctx.repeats(21)
    sstat = process_times(command_argv("sstat") + ["-j", str(job)], repeats, slurm.env,
                          str(slurm.work))
    sacct = process_times(command_argv("sacct") + ["-j", str(job)], repeats, slurm.env,
                          str(slurm.work))
    figure = Figure("sstat -j JOB (a running step)", "ms", sstat)
    figure.comparison, figure.comparison_samples = "sacct -j JOB, same job", sacct
    yield figure
