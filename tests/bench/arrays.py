"""A 10,000-task array on the local backend: submit time against a 1-task job, and squeue
of it (collapsed, and ``-r`` one line per task). Scaling: 1,000 and 10,000 tasks. The arrays
are held (nothing runs) and cancelled afterwards."""

from __future__ import annotations

from typing import Iterable

from tests.bench.context import Context, command_argv
from tests.bench.core import Figure, process_times


def figures(ctx: Context) -> Iterable[Figure]:
    repeats = ctx.repeats(7)
    single = None
    for size in (1000, 10000):
        slurm = ctx.fresh_cluster(f"array{size}")
        sbatch = command_argv("sbatch") + ["-H", "-o", "/dev/null"]
        one = process_times(sbatch + ["--wrap=true"], repeats, slurm.env, str(slurm.work))
        many = process_times(sbatch + [f"--array=0-{size - 1}", "--wrap=true"], repeats,
                             slurm.env, str(slurm.work))
        if single is None:
            single = one
        figure = Figure(f"sbatch --array of {size:,} tasks", "ms", many,
                        comparison="1-task job", comparison_samples=one)
        yield figure
        squeue = process_times(command_argv("squeue"), repeats, slurm.env, str(slurm.work))
        yield Figure(f"squeue with {repeats + 2} held {size:,}-task arrays", "ms", squeue)
        expanded = process_times(command_argv("squeue") + ["-r", "-h"], max(3, repeats // 2),
                                 slurm.env, str(slurm.work), warmup=0)
        yield Figure(f"squeue -r ({(repeats + 2) * size:,} lines)", "ms", expanded)
        slurm.cleanup()
