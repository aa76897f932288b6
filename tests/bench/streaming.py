"""``srun --label`` streaming against a raw pipe on the same data (issue 3's goal: ≥ 0.5×
the raw throughput; no line lost or mixed), and the memory (RSS) of a node agent while idle
and while streaming. Scaling: 1 task and 4 tasks writing at once."""

from __future__ import annotations

import re
import statistics
import threading
import time
from pathlib import Path
from typing import Dict, Iterable, List, Optional

from tests.bench.context import Context
from tests.bench.core import Figure

LINES = 2_000_000
STREAM = """#!/bin/bash
python3 -c 'import sys
line = "x" * 99 + "\\n"
sys.stdout.write(line * {lines})' > data.txt
sleep 1.5
python3 - <<'PY'
import subprocess, time
for label, command in (("launch", "srun -n1 true"), ("launch", "srun -n1 true"),
                       ("launch", "srun -n4 true"), ("launch4", "srun -n4 true"),
                       ("raw", "cat data.txt | cat > /dev/null"),
                       ("label1", "srun -n1 --label cat data.txt > /dev/null"),
                       ("raw", "cat data.txt | cat > /dev/null"),
                       ("label1", "srun -n1 --label cat data.txt > /dev/null"),
                       ("label4", "srun -n4 --label cat data.txt > /dev/null"),
                       ("raw", "cat data.txt | cat > /dev/null"),
                       ("label1", "srun -n1 --label cat data.txt > /dev/null"),
                       ("label4", "srun -n4 --label cat data.txt > /dev/null")):
    begun = time.perf_counter()
    subprocess.run(command, shell=True)
    print(label, time.perf_counter() - begun, flush=True)
PY
srun -n4 --label python3 -c 'import os
r = os.environ["SLURM_PROCID"]
for i in range(50000):
    print("rank", r, "line", i, "y" * 60)' > check.txt
"""
CHECK = re.compile(r"^(\d): rank (\d) line (\d+) y{60}$")


def _memory_kb(pid: int, field: str) -> Optional[int]:
    """``VmRSS`` from ``status`` or ``Pss`` from ``smaps_rollup`` of ``pid``, in kB."""
    name = "smaps_rollup" if field == "Pss:" else "status"
    try:
        for line in Path(f"/proc/{pid}/{name}").read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def _node0_pids(job_dir: Path) -> List[int]:
    """Node 0's runtime processes: the node process, its step server and the steps that
    server runs (forks share the node's command line and environment); not user tasks."""
    marker = f"SBATCHK8S_SPOOL={job_dir}/node-0".encode()
    found = []
    for pid in Path("/proc").iterdir():
        if pid.name.isdigit():
            try:
                if marker in (pid / "environ").read_bytes() and \
                        b" node" in (pid / "cmdline").read_bytes().replace(b"\0", b" "):
                    found.append(int(pid.name))
            except OSError:
                continue
    return sorted(found)


def _watch_memory(slurm, job: int, samples: List[tuple], stop: threading.Event) -> None:
    """(time, RSS of the node process, PSS of all node 0 runtime processes) every 50 ms."""
    while not stop.is_set():
        pids = _node0_pids(slurm.state / "jobs" / str(job))
        if pids:
            rss = _memory_kb(pids[0], "VmRSS:")
            pss = [_memory_kb(pid, "Pss:") for pid in pids]
            if rss is not None:
                samples.append((time.time(), rss, sum(x for x in pss if x)))
        time.sleep(0.05)


def _integrity(text: str) -> Dict[str, int]:
    seen: Dict[str, int] = {}
    bad = 0
    for line in text.splitlines():
        match = CHECK.match(line)
        if not match or match.group(1) != match.group(2) or \
                int(match.group(3)) != seen.get(match.group(2), 0):
            bad += 1
            continue
        seen[match.group(2)] = int(match.group(3)) + 1
    lost = sum(50000 - seen.get(str(r), 0) for r in range(4))
    return {"bad": bad, "lost": lost}


def figures(ctx: Context) -> Iterable[Figure]:
    slurm = ctx.fresh_cluster("streaming")
    slurm.script("stream.sh", STREAM.format(lines=LINES))
    process = slurm.start("sbatch", "--wait", "-n4", "-o", "stream.out", "stream.sh")
    out, _ = process.communicate(timeout=600)
    job = int(out.split()[-1]) if out.strip() else 0
    rss: List[tuple] = []
    del rss
    text = slurm.read("stream.out") if (slurm.work / "stream.out").exists() else ""
    times: Dict[str, List[float]] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in ("raw", "label1", "label4", "launch", "launch4"):
            times.setdefault(parts[0], []).append(float(parts[1]))
    megabytes = LINES * 100 / 1e6
    figures: List[Figure] = []
    if not times.get("raw"):
        return [Figure("--label streaming", "MB/s", skipped="the streaming job failed")]
    raw = [megabytes / t for t in times["raw"]]
    # Streaming throughput: the step's time minus its launch (measured in the same job).
    launch1 = sorted(times["launch"])[len(times["launch"]) // 2]
    launch4 = times["launch4"][0]
    one = Figure("srun --label streaming, 1 task", "MB/s",
                 [megabytes / (t - launch1) for t in times["label1"]], comparison="raw pipe",
                 comparison_samples=raw, goal="≥ 0.5× raw", higher_is_better=True)
    one.goal_met = one.ratio is not None and one.ratio >= 0.5
    one.scaling = (f"{megabytes:.0f} MB; launch {launch1 * 1000:.0f} ms subtracted; with "
                   f"launch {megabytes / sorted(times['label1'])[1]:.0f} MB/s")
    four = Figure("srun --label streaming, 4 tasks", "MB/s",
                  [4 * megabytes / (t - launch4) for t in times["label4"]],
                  comparison="raw pipe", comparison_samples=raw, higher_is_better=True)
    check = _integrity(slurm.read("check.txt")) if (slurm.work / "check.txt").exists() \
        else {"bad": -1, "lost": -1}
    four.scaling = (f"4 tasks × 50,000 lines: {check['lost']} lost, {check['bad']} "
                    "mixed or malformed")
    four.goal = "0 lost or mixed"
    four.goal_met = check == {"bad": 0, "lost": 0}
    figures += [one, four]
    figures += list(_agent_memory(ctx, job))
    slurm.cleanup()
    return figures


def _agent_memory(ctx: Context, job: int) -> Iterable[Figure]:
    """RSS of node 0's process (agent + batch host) idle, then while streaming."""
    slurm = ctx.fresh_cluster("memory")
    slurm.script("mem.sh", "#!/bin/bash\npython3 -c 'import sys\nsys.stdout.write((\"z\" * 99 "
                 "+ \"\\n\") * 600000)' > data.txt\nsleep 2\n"
                 "srun -n1 --label cat data.txt > /dev/null\n"
                 "srun -n1 --label cat data.txt > /dev/null\nsleep 0.5\n")
    samples: List[tuple] = []
    stop = threading.Event()
    process = slurm.start("sbatch", "--wait", "-o", "mem.out", "mem.sh")
    watcher = None
    deadline = time.time() + 20
    while time.time() < deadline:
        rows = list((slurm.state / "jobs").glob("*")) if (slurm.state / "jobs").exists() else []
        if rows:
            watcher = threading.Thread(target=_watch_memory,
                                       args=(slurm, int(rows[0].name), samples, stop))
            watcher.start()
            break
        time.sleep(0.05)
    process.communicate(timeout=300)
    stop.set()
    if watcher is not None:
        watcher.join()
    slurm.cleanup()
    if len(samples) < 5:
        return [Figure("node agent RSS", "MB", skipped="could not sample the node process")]
    start = samples[0][0]
    idle = [(rss / 1024, pss / 1024) for t, rss, pss in samples if t - start < 1.5]
    busy = [(rss / 1024, pss / 1024) for t, rss, pss in samples if t - start >= 2.2] or idle
    figures = []
    for label, values in (("idle", idle), ("streaming", busy)):
        figure = Figure(f"node 0 process RSS, {label} (agent + batch host)", "MB",
                        [rss for rss, _ in values])
        total = [pss for _, pss in values]
        figure.scaling = (f"max {max(figure.samples):.1f} MB; with step server and "
                          f"step: PSS median {statistics.median(total):.1f}, "
                          f"max {max(total):.1f} MB")
        figures.append(figure)
    return figures
