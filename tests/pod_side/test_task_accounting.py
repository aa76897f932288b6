"""Per-task accounting on real processes: /proc samples, wait4 rusage, step aggregation."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from sbatch_k8s.runtime.accounting.frequency import DEFAULT_TASK_INTERVAL_S, task_interval
from sbatch_k8s.runtime.accounting.gpu import parse_compute_apps
from sbatch_k8s.runtime.accounting.proc_sample import parent_map, tree_pids
from sbatch_k8s.runtime.accounting.sampler import StepSampler, reap
from sbatch_k8s.runtime.accounting.usage import cpu_clock, step_usage

# Holds ~100 MB, then burns ~2 s of CPU in a child process (so the tree and the reaped
# child's rusage both count).
BURN = (
    "import os, time\n"
    "block = bytearray(100 * 1024 * 1024)\n"
    "for i in range(0, len(block), 4096): block[i] = 1\n"
    "pid = os.fork()\n"
    "end = time.process_time() + 1.0\n"
    "while time.process_time() < end: pass\n"
    "if pid: os.waitpid(pid, 0)\n"
    "else: os._exit(0)\n"
)


def test_acctg_freq_forms() -> None:
    assert task_interval(None) == DEFAULT_TASK_INTERVAL_S
    assert task_interval("5") == 5
    assert task_interval("task=1,energy=30") == 1
    assert task_interval("energy=10") == DEFAULT_TASK_INTERVAL_S
    assert task_interval("0") == 0
    for bad in ("task=x", "cpu=3", "-1"):
        with pytest.raises(ValueError):
            task_interval(bad)


def test_nvidia_smi_parsing() -> None:
    text = "pid, used_memory [MiB]\n1234, 512 MiB\n99, 1 GiB\nbad line\n1234, 2 MiB\n"
    assert parse_compute_apps(text) == {1234: 514 * 1024 ** 2, 99: 1024 ** 3}
    assert parse_compute_apps("pid, used_memory [MiB]\n") == {}


def test_tree_follows_descendants() -> None:
    child = subprocess.Popen(["sh", "-c", "sleep 5 & sleep 5; wait"])
    try:
        time.sleep(0.3)
        pids = tree_pids(child.pid, parent_map())
        assert pids[0] == child.pid and len(pids) == 3
    finally:
        child.kill()
        child.wait()


def test_burning_task_shows_cpu_and_memory() -> None:
    sampler = StepSampler("node-0", 0.2, gpu_reader=dict)
    proc = subprocess.Popen([sys.executable, "-c", BURN])
    sampler.add_task(0, proc.pid)
    _, rusage = reap(proc.pid)
    proc.returncode = 0  # reaped here, not by Popen
    sampler.end_task(0, rusage)
    sampler.stop()
    fields = step_usage(list(sampler.usage.values()))
    assert fields is not None
    assert fields["TotalCPU"] >= 1.5
    assert fields["MaxRSS"] >= 90 * 1024 * 1024
    assert fields["MaxRSSNode"] == "node-0" and fields["MaxRSSTask"] == 0
    assert sampler.usage[0].samples >= 1
    assert str(fields["TRESUsageInMax"]).startswith("cpu=00:00:0")


def test_true_task_unsampled_still_closed_by_rusage() -> None:
    sampler = StepSampler("node-1", 0)
    proc = subprocess.Popen(["true"])
    sampler.add_task(3, proc.pid)
    _, rusage = reap(proc.pid)
    proc.returncode = 0
    usage = sampler.end_task(3, rusage)
    assert usage.samples == 0 and usage.total_cpu < 0.5 and usage.max_rss > 0
    fields = step_usage([usage])
    assert fields is not None and fields["MaxRSSTask"] == 3


def test_cpu_clock() -> None:
    assert cpu_clock(2.7) == "00:00:02"
    assert cpu_clock(90061) == "1-01:01:01"

