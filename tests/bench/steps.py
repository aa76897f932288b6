"""srun inside a job: step launch latency on 8 and 32 simulated nodes (issue 3's goal:
p50 ≤ 300 ms at 32), and ``srun -N2 -n4 true`` against real Slurm's (~0.26 s; goal ≤ 1.0×)."""

from __future__ import annotations

import statistics
from typing import Iterable, List

from tests.bench.context import Context
from tests.bench.core import Figure

TIMER = """#!/bin/bash
python3 - <<'PY'
import subprocess, time
for _ in range({runs}):
    begun = time.perf_counter()
    subprocess.run({argv!r}, stdout=subprocess.DEVNULL)
    print("ms", (time.perf_counter() - begun) * 1000)
PY
"""


def _samples(text: str) -> List[float]:
    return [float(line.split()[1]) for line in text.splitlines() if line.startswith("ms ")]


def _run_local(ctx: Context, nodes: int, argv: List[str], runs: int) -> List[float]:
    slurm = ctx.slurm
    slurm.script("timer.sh", TIMER.format(runs=runs + 1, argv=argv))
    done = slurm.run("sbatch", "--wait", f"-N{nodes}", "-o", "timer.out", "timer.sh",
                     timeout=600)
    if done.returncode != 0:
        return []
    return _samples(slurm.read("timer.out"))[1:]


def _run_real(ctx: Context, argv: List[str], runs: int) -> List[float]:
    import subprocess

    if ctx.real_env is None:
        return []
    script = ctx.root / "real-timer.sh"
    script.write_text(TIMER.format(runs=runs + 1, argv=argv))
    out = ctx.root / "real-timer.out"
    subprocess.run(["sbatch", "--wait", "-N2", "--ntasks-per-node=2", "-o", str(out),
                    str(script)], env=ctx.real_env, cwd=str(ctx.root), capture_output=True,
                   timeout=600)
    return _samples(out.read_text())[1:] if out.exists() else []


def figures(ctx: Context) -> Iterable[Figure]:
    runs = ctx.repeats(15)
    launch = {}
    for nodes in (8, 32):
        samples = _run_local(ctx, nodes, ["srun", "true"], runs)
        figure = Figure(f"srun step launch, {nodes} nodes ({nodes} tasks)", "ms", samples)
        if not samples:
            figure.skipped = "the timing job failed"
        launch[nodes] = figure
    big = launch[32]
    big.goal = "p50 ≤ 300 ms"
    big.goal_met = big.median is not None and big.median <= 300
    if launch[8].median and big.median:
        big.scaling = f"+{(big.median - launch[8].median) / 24:.1f} ms per node from 8 to 32"
    yield launch[8]
    yield big
    argv = ["srun", "-N2", "-n4", "true"]
    ours = Figure("srun -N2 -n4 true in a 2-node job", "ms", _run_local(ctx, 2, argv, runs),
                  goal="≤ 1.0× real Slurm")
    real = _run_real(ctx, argv, runs)
    if real:
        ours.comparison, ours.comparison_samples = "real Slurm", real
        ours.goal_met = ours.ratio is not None and ours.ratio <= 1.0
    else:
        ours.comparison = f"real Slurm skipped: {ctx.real_reason}"
    yield ours


def p50(samples: List[float]) -> float:
    return statistics.median(samples)
