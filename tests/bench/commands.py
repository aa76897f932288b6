"""Whole-process latency of the user commands on the local backend, side by side with real
Slurm's and with a bare Python interpreter (issue 3's goal: sbatch and squeue ≤ 60 ms
median). Scaling: with the command server (the normal path) and in-process
(``SBATCHK8S_SERVER=0``, what a first command after an upgrade pays)."""

from __future__ import annotations

import subprocess
import sys
from typing import Dict, Iterable, List, Optional

from tests.bench.context import Context, command_argv
from tests.bench.core import Figure, process_times
from tests.local.harness import LocalSlurm, job_id_of

GOAL_MS = 60.0


def _drain(env: Dict[str, str], squeue: List[str], keep: Optional[int]) -> None:
    """Wait until no job but ``keep`` is queued (so samples don't overlap running jobs)."""
    import time

    deadline = time.time() + 60
    while time.time() < deadline:
        out = subprocess.run(squeue + ["-h", "-o", "%i"], env=env, capture_output=True,
                             text=True).stdout
        if not set(out.split()) - {str(keep)}:
            return
        time.sleep(0.2)


def _sbatch_samples(argv: List[str], env: Dict[str, str], cwd: str, squeue: List[str],
                    repeats: int, keep: Optional[int] = None) -> List[float]:
    samples: List[float] = []
    for _ in range(repeats + 1):
        _drain(env, squeue, keep)
        samples += process_times(argv + ["-o", "/dev/null", "--wrap=true"], 1, env, cwd,
                                 warmup=0)
    return samples[1:]


def _real(ctx: Context, name: str, args: List[str], job: Optional[int],
          repeats: int) -> List[float]:
    if ctx.real_env is None:
        return []
    env = ctx.real_env
    if name == "sbatch":
        return _sbatch_samples(["sbatch"], env, str(ctx.root), ["squeue"], repeats, job)
    extra = [str(job)] if name == "scontrol" and job is not None else []
    return process_times([name] + args + extra, repeats, env, str(ctx.root))


def _ours(slurm: LocalSlurm, name: str, args: List[str], job: int, repeats: int,
          env: Dict[str, str]) -> List[float]:
    argv = command_argv(name)
    if name == "sbatch":
        return _sbatch_samples(argv, env, str(slurm.work), command_argv("squeue"), repeats)
    extra = [str(job)] if name == "scontrol" else []
    return process_times(argv + args + extra, repeats, env, str(slurm.work))


def figures(ctx: Context) -> Iterable[Figure]:
    slurm = ctx.slurm
    job = job_id_of(slurm.run("sbatch", "--wait", "-o", "/dev/null", "--wrap", "true").stdout)
    real_job = None
    if ctx.real_env is not None:
        done = subprocess.run(["sbatch", "--parsable", "-o", "/dev/null", "--wrap",
                               "sleep 600"], env=ctx.real_env, capture_output=True,
                              text=True, cwd=str(ctx.root))
        real_job = int(done.stdout.strip().split(";")[0]) if done.returncode == 0 else None
    repeats = ctx.repeats(21)
    bare = process_times([sys.executable, "-c", "pass"], repeats)
    yield Figure("bare Python interpreter", "ms", bare)
    commands = [("sbatch", []), ("squeue", []), ("sacct", []), ("scontrol", ["show", "job"])]
    for name, args in commands:
        ours = _ours(slurm, name, args, job, repeats, slurm.env)
        figure = Figure(f"{name} {' '.join(args)}".strip(), "ms", ours)
        real = _real(ctx, name, args, real_job, repeats)
        if real:
            figure.comparison, figure.comparison_samples = "real Slurm", real
        elif ctx.real_env is None:
            figure.comparison = f"real Slurm skipped: {ctx.real_reason}"
        if name in ("sbatch", "squeue"):
            figure.goal = f"≤ {GOAL_MS:.0f} ms median"
            figure.goal_met = figure.median is not None and figure.median <= GOAL_MS
        cold = _ours(slurm, name, args, job, max(3, repeats // 3),
                     dict(slurm.env, SBATCHK8S_SERVER="0"))
        figure.scaling = f"in-process (no server) {sorted(cold)[len(cold) // 2]:.0f} ms"
        yield figure
    if real_job is not None and ctx.real_env is not None:
        subprocess.run(["scancel", str(real_job)], env=ctx.real_env)
