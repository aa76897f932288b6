"""Figures on a real data plane (``python -m tests.bench --only real_nodes --real-node``):
real kubelets, containerd, CNI and a cluster DNS (``../shared/tools/real-node``), with the
cluster and configuration of ``$KUBECONFIG`` and ``$SBATCHK8S_CONFIG`` (its ``env.sh``).

* submit → the script's first line, and the script's last line → ``sbatch --wait`` returns,
  for 1 and 2 nodes (the pods share this machine's clock);
* output through node 0's pod log: a job writing 8 MB (below the kubelet's 10 MiB rotation,
  so both readers see all of it) read back whole by ``sattach --k8s-output`` (which
  decodes the stream and writes the files) beside ``kubectl logs`` of the same pod, in MB/s;
  and ``sbatch --wait``'s own rate on 50 MB written as fast as the job can (across
  rotations).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from typing import Dict, Iterable, List, Optional

from tests.bench.context import Context, command_argv
from tests.bench.core import Figure

STAMP = """#!/bin/sh
#SBATCH -N{nodes} -J timed -o timed-%j.out
date +%s.%N
echo started
date +%s.%N
"""
WRITER = """#!/bin/sh
#SBATCH -N1 -J writer -o writer-%j.out -e writer-%j.err
date +%s.%N >&2
python3 -c 'import sys
block = (b"0123456789abcdefghijklmnopqrstuvwxyz" * 28 + b"\\n") * 1024
for _ in range({blocks}): sys.stdout.buffer.write(block)'
"""
BLOCK_BYTES = (36 * 28 + 1) * 1024


def _env() -> Optional[Dict[str, str]]:
    if not os.environ.get("KUBECONFIG") or not os.environ.get("SBATCHK8S_CONFIG"):
        return None
    return dict(os.environ)


def _run(argv: List[str], env: Dict[str, str], cwd: str, timeout: float = 600
         ) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def _stamps(path: str) -> List[float]:
    with open(path, "rb") as f:
        return [float(line) for line in f.read().decode(errors="replace").split()
                if line.replace(".", "", 1).isdigit()]


def _latencies(ctx: Context, env: Dict[str, str], work: str) -> Iterable[Figure]:
    for nodes in (1, 2):
        with open(os.path.join(work, "timed.sh"), "w") as f:
            f.write(STAMP.format(nodes=nodes))
        starts, returns = [], []
        for _ in range(ctx.repeats(5)):
            began = time.time()
            done = _run(command_argv("sbatch") + ["--wait", "--parsable", "timed.sh"], env,
                        work)
            ended = time.time()
            job = done.stdout.strip().split(";")[0]
            stamps = _stamps(os.path.join(work, f"timed-{job}.out"))
            if len(stamps) == 2:
                starts.append((stamps[0] - began) * 1000)
                returns.append((ended - stamps[1]) * 1000)
        yield Figure(f"real nodes: sbatch → script start, {nodes} node(s)", "ms", starts,
                     scaling="real kubelet, containerd, CNI, DNS")
        yield Figure(f"real nodes: script end → sbatch --wait returns, {nodes} node(s)",
                     "ms", returns, scaling="real kubelet, containerd, CNI, DNS")


def _node0_pod(job: str, env: Dict[str, str], work: str) -> str:
    done = _run(["kubectl", "get", "pods", "-l", f"sbatch-k8s.io/job-id={job}", "-o",
                 "jsonpath={.items[0].metadata.name}"], env, work)
    return done.stdout.strip()


def _throughput(ctx: Context, env: Dict[str, str], work: str) -> Iterable[Figure]:
    ours, kubectl, live = [], [], []
    small = 8 * 1000 * 1000 // BLOCK_BYTES
    with open(os.path.join(work, "writer.sh"), "w") as f:
        f.write(WRITER.format(blocks=small))
    for _ in range(ctx.repeats(3)):
        done = _run(command_argv("sbatch") + ["--wait", "--parsable", "writer.sh"], env, work)
        job = done.stdout.strip().split(";")[0]
        pod = _node0_pod(job, env, work)
        size = small * BLOCK_BYTES
        began = time.monotonic()
        _run(command_argv("sattach") + ["--k8s-output", "-Q", job], env, work)
        ours.append(size / 1e6 / (time.monotonic() - began))
        began = time.monotonic()
        fetched = subprocess.run(["kubectl", "logs", pod], env=env, cwd=work,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        kubectl.append(len(fetched.stdout) / 1e6 / (time.monotonic() - began))
    big = 50 * 1000 * 1000 // BLOCK_BYTES
    with open(os.path.join(work, "writer.sh"), "w") as f:
        f.write(WRITER.format(blocks=big))
    incomplete: List[str] = []
    for _ in range(ctx.repeats(3)):
        began = time.time()
        done = _run(command_argv("sbatch") + ["--wait", "--parsable", "writer.sh"], env, work)
        job = done.stdout.strip().split(";")[0]
        path = os.path.join(work, f"writer-{job}.out")
        size = os.path.getsize(path) if os.path.exists(path) else 0
        if size == big * BLOCK_BYTES:
            live.append(big * BLOCK_BYTES / 1e6 / (time.time() - began))
        else:
            said = (done.stderr.strip().splitlines() or [""])[-1]
            incomplete.append(f"job {job}: {size} of {big * BLOCK_BYTES} bytes, sbatch exited "
                              f"{done.returncode}: {said}")
    yield Figure("real nodes: a finished job's 8 MB pod log → files (sattach --k8s-output)",
                 "MB/s", ours, comparison="kubectl logs of the same pod",
                 comparison_samples=kubectl, higher_is_better=True,
                 scaling="decoded and written vs bytes to /dev/null")
    yield Figure("real nodes: sbatch --wait, 50 MB of output (submit to files written)",
                 "MB/s", live, higher_is_better=True,
                 scaling="through the pod log, across the kubelet's log rotations",
                 skipped="output incomplete: " + "; ".join(incomplete) if incomplete else "")


def figures(ctx: Context) -> Iterable[Figure]:
    env = _env()
    if env is None or shutil.which("kubectl") is None:
        yield Figure("real nodes", "", skipped="needs $KUBECONFIG and $SBATCHK8S_CONFIG of "
                                               "../shared/tools/real-node (source its env.sh)")
        return
    work = tempfile.mkdtemp(prefix="sbatch-k8s-bench-real-")
    try:
        yield from _latencies(ctx, env, work)
        yield from _throughput(ctx, env, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
