"""squeue and sacct against a job database holding 1,000 and 10,000 jobs (scaling).

The rows are written directly (as many submissions would leave them): for squeue, pending
held jobs; for sacct, finished jobs with their batch/extern/step records."""

from __future__ import annotations

import os
import pwd
import subprocess
import time
from typing import Dict, Iterable, List

from tests.bench.context import Context, command_argv
from tests.bench.core import Figure, process_times


USER = pwd.getpwuid(os.getuid()).pw_name


def _fill(slurm, count: int, state: str) -> None:
    from sbatch_k8s import jobdb

    conn = jobdb.connect(slurm.env)
    first = jobdb.allocate_job_ids(conn, count)
    now = time.time()
    rows: List[Dict[str, object]] = []
    for k in range(count):
        done = state != "PENDING"
        rows.append({
            "job_id": first + k, "name": f"job{k % 97}", "user": USER, "uid": os.getuid(),
            "grp": "bench", "gid": os.getgid(), "partition": "debug", "account": "bench",
            "qos": "normal", "state": state, "reason": "JobHeldUser" if not done else "None",
            "submit_time": now - 100, "start_time": now - 90 if done else None,
            "end_time": now - 10 if done else None, "time_limit_min": 60,
            "node_count": 2, "node_list": "127.0.0.[2-3]" if done else "", "cpus": 4,
            "gpus": 0, "gpu_ids": "", "ntasks": 4, "cpus_per_task": 1, "mem_mb": None,
            "mem_per_cpu": 0, "exit_code": 0, "exit_signal": 0, "derived_exit_code": 0,
            "hold": 0 if done else 1, "priority": 1, "nice": 0, "work_dir": "/tmp",
            "command": "/tmp/job.sh", "stdout": "/tmp/out", "stderr": "/tmp/out",
            "stdin": "/dev/null", "job_dir": "", "requeue": 1, "submit_host": "bench",
            "batch_host": "127.0.0.2" if done else ""})
    jobdb.insert_jobs(conn, rows)
    if state != "PENDING":
        conn.execute("BEGIN")
        for k in range(count):
            for seq, step in enumerate(("batch", "extern", "0")):
                jobdb.put_step(conn, {"job_id": first + k, "step_id": step, "name": step,
                                      "state": state, "exit_code": 0, "exit_signal": 0,
                                      "start_time": now - 90, "end_time": now - 10,
                                      "node_list": "127.0.0.[2-3]", "node_count": 2,
                                      "ntasks": 4, "cpus": 4, "seq": seq})
        conn.execute("COMMIT")
    conn.close()


def figures(ctx: Context) -> Iterable[Figure]:
    repeats = ctx.repeats(11)
    results = {}
    for size in (1000, 10000):
        slurm = ctx.fresh_cluster(f"db{size}")
        _fill(slurm, size, "PENDING")
        _fill(slurm, size, "COMPLETED")
        env = slurm.env
        for name, args in (("squeue", []), ("sacct", ["-S", "now-1hour", "-u", USER])):
            argv = command_argv(name) + args
            check = subprocess.run(argv, env=env, cwd=str(slurm.work), capture_output=True,
                                   text=True)
            figure = Figure(f"{name} with {size:,} jobs", "ms")
            lines = check.stdout.count("\n")
            if check.returncode != 0 or lines < size:
                figure.skipped = (f"exit {check.returncode}, {lines} lines: "
                                  f"{check.stderr.strip()[:80]}")
            else:
                figure.samples = process_times(argv, repeats, env, str(slurm.work))
            results[(name, size)] = figure
        slurm.cleanup()
    for name in ("squeue", "sacct"):
        small, big = results[(name, 1000)], results[(name, 10000)]
        if small.skipped or big.skipped:
            yield small
            yield big
            continue
        per_job_us = ((big.median or 0) - (small.median or 0)) / 9000 * 1000
        big.scaling = f"+{per_job_us:.1f} µs per job from 1k to 10k"
        yield small
        yield big
