"""What 10,000 pending jobs cost on the local backend (issue 10: "a pending job costs a row,
not a process"): processes and memory (PSS from ``/proc/*/smaps_rollup``) of everything
working for the state directory — command server, scheduler, node processes — and the
latency of ``sbatch`` and ``squeue``, each against the same cluster without them.

Two kinds of pending: held (``sbatch -H``: no scheduler needs to run at all), and waiting for
resources (one running job holds every CPU; the scheduler is up and looks at all 10,000).
The first job of each kind is submitted with the real sbatch; the other 9,999 are copies of
its row written in one transaction (sbatch one by one would take minutes), then a real
command (``scontrol release``) tells the scheduler. Latencies are always the real commands.
Goals: processes and memory constant; sbatch and squeue ≤ 1.5× (for squeue, a query that
prints a fixed number of lines: a full listing of 10,000 jobs is 10,000 lines)."""

from __future__ import annotations

import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

from tests.bench.context import Context, command_argv
from tests.bench.core import Figure, process_times
from tests.local.harness import LocalSlurm, job_id_of

PENDING = 10000
LATENCY_GOAL = 1.5


def pss_mb(pids: Iterable[int]) -> float:
    """Proportional set size of ``pids`` together, in MB."""
    total_kb = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total_kb += int(line.split()[1])
                    break
        except OSError:
            continue
    return total_kb / 1024


def footprint(slurm: LocalSlurm, samples: int) -> Tuple[List[float], List[float]]:
    """Process counts and PSS totals, ``samples`` times half a second apart."""
    counts, memory = [], []
    for _ in range(samples):
        pids = slurm.processes()
        counts.append(float(len(pids)))
        memory.append(pss_mb(pids))
        time.sleep(0.5)
    return counts, memory


def clone_rows(slurm: LocalSlurm, template_id: int, count: int) -> None:
    """``count`` copies of a submitted job's row, with new ids, in one transaction."""
    from sbatch_k8s import jobdb

    conn = jobdb.connect(slurm.env)
    template = dict(jobdb.get_job(conn, template_id))
    first = jobdb.allocate_job_ids(conn, count)
    rows = [dict(template, job_id=first + k, name=f"sweep{k % 97}") for k in range(count)]
    jobdb.insert_jobs(conn, rows)
    conn.close()


def release_all(slurm: LocalSlurm, one: int) -> None:
    """Release every held job: the rows in one statement, then a real ``scontrol release``
    (which wakes the scheduler)."""
    conn = sqlite3.connect(slurm.state / "jobs.db", timeout=30)
    conn.execute("UPDATE jobs SET hold=0, reason='None' WHERE state='PENDING' AND job_id != ?",
                 (one,))
    conn.commit()
    conn.close()
    subprocess.run(command_argv("scontrol") + ["release", str(one)], env=slurm.env,
                   cwd=str(slurm.work), capture_output=True, check=True)


def submit(slurm: LocalSlurm, *args: str) -> int:
    done = subprocess.run(command_argv("sbatch") + list(args), env=slurm.env,
                          cwd=str(slurm.work), capture_output=True, text=True, check=True)
    return job_id_of(done.stdout)


def latencies(loaded: LocalSlurm, empty: LocalSlurm, repeats: int, probe: int
              ) -> Dict[str, Tuple[List[float], List[float]]]:
    """sbatch (a held job: nothing starts) and squeue samples in ms, on the loaded and the
    empty cluster alternately (so that the machine's load drifts into both alike)."""
    commands = {
        "sbatch": command_argv("sbatch") + ["-H", "-o", "/dev/null", "--wrap=true"],
        "squeue -j": command_argv("squeue") + ["-j", str(probe)],
        "squeue": command_argv("squeue"),
    }
    samples: Dict[str, Tuple[List[float], List[float]]] = {}
    for name, argv in commands.items():
        ours: List[float] = []
        theirs: List[float] = []
        for _ in range(repeats if name != "squeue" else max(3, repeats // 2)):
            ours += process_times(argv, 1, loaded.env, str(loaded.work), warmup=0)
            theirs += process_times(argv, 1, empty.env, str(empty.work), warmup=0)
        samples[name] = (ours, theirs)
    return samples


def _pair(name: str, unit: str, loaded: List[float], empty: List[float], comparison: str,
          goal: Optional[float]) -> Figure:
    figure = Figure(name, unit, loaded, comparison=comparison, comparison_samples=empty)
    if goal is not None and figure.ratio is not None:
        figure.goal = "constant" if goal == 1.0 else f"≤ {goal}×"
        figure.goal_met = figure.ratio <= goal + (0.05 if goal == 1.0 else 0)
    return figure


def _prepare(ctx: Context, name: str, running: bool) -> Tuple[LocalSlurm, int]:
    """A cluster (with a job holding every CPU when ``running``) and one held job."""
    slurm = ctx.fresh_cluster(name)
    if running:
        submit(slurm, "-c", "256", "-o", "/dev/null", "--wrap", "sleep 3600")
        slurm.wait_for(lambda: len(slurm.processes()) >= 3, timeout=60)
    probe = submit(slurm, "-H", "-o", "/dev/null", "--wrap", "true")
    for argv in (["sbatch", "-H", "-o", "/dev/null", "--wrap=true"], ["squeue"]):
        process_times(command_argv(argv[0]) + argv[1:], 2, slurm.env, str(slurm.work))
    return slurm, probe


def _scenario(ctx: Context, kind: str) -> List[Figure]:
    """The figures of one kind of pending (``held`` or ``resources``)."""
    running = kind == "resources"
    loaded, probe = _prepare(ctx, f"pending-{kind}", running)
    empty, _ = _prepare(ctx, f"pending-{kind}-none", running)
    repeats = ctx.repeats(11)
    try:
        clone_rows(loaded, probe, PENDING - 1)
        if running:
            release_all(loaded, probe)
        time.sleep(5)  # the scheduler's first looks at all of them; idle ones are gone
        counts, memory = footprint(loaded, 5)
        counts0, memory0 = footprint(empty, 5)
        label = "held" if not running else "pending (Resources), 1 job running"
        base = "no pending job" + ("" if not running else ", 1 job running")
        figures = [
            _pair(f"processes, {PENDING:,} {label}", "processes", counts, counts0, base, 1.0),
            _pair(f"PSS, {PENDING:,} {label}", "MB", memory, memory0, base, 1.0),
        ]
        for command, (ours, theirs) in latencies(loaded, empty, repeats, probe).items():
            figures.append(_pair(f"{command}, {PENDING:,} {label}", "ms", ours, theirs, base,
                                 None if command == "squeue" else LATENCY_GOAL))
        figures[-1].scaling = f"lists {PENDING:,} jobs against 2 or 3"
        return figures
    finally:
        loaded.cleanup()
        empty.cleanup()


def figures(ctx: Context) -> Iterable[Figure]:
    for kind in ("held", "resources"):
        yield from _scenario(ctx, kind)
