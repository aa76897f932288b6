"""``sbatch --wait`` of a trivial job, end to end, against real Slurm's (which polls: ~2 s).
Issue 3's goal: ≤ 0.5 s. Scaling: 1 node and 4 nodes."""

from __future__ import annotations

from typing import Iterable

from tests.bench.context import Context, command_argv
from tests.bench.core import Figure, process_times


def figures(ctx: Context) -> Iterable[Figure]:
    slurm = ctx.slurm
    repeats = ctx.repeats(9)
    out = []
    for nodes in (1, 4):
        argv = command_argv("sbatch") + ["--wait", f"-N{nodes}", "-o", "/dev/null",
                                         "--wrap=true"]
        figure = Figure(f"sbatch --wait trivial job, {nodes} node(s)", "ms",
                        process_times(argv, repeats, slurm.env, str(slurm.work), warmup=1))
        if nodes == 1:
            figure.goal = "≤ 500 ms"
            figure.goal_met = figure.median is not None and figure.median <= 500
            if ctx.real_env is not None:
                figure.comparison = "real Slurm"
                figure.comparison_samples = process_times(
                    ["sbatch", "--wait", "-o", "/dev/null", "--wrap=true"], max(3, repeats // 2),
                    ctx.real_env, str(ctx.root), warmup=0)
            else:
                figure.comparison = f"real Slurm skipped: {ctx.real_reason}"
        out.append(figure)
    out[1].scaling = f"+{(out[1].median or 0) - (out[0].median or 0):.0f} ms for 3 more nodes"
    return out
