"""Per-task accounting on real processes: /proc samples, wait4 rusage, step aggregation."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time

import pytest

from parsers.input_errors import SlurmInputError
from parsers.step_usage import StepUsage
from parsers.values.acctg_freq import DEFAULT_TASK_INTERVAL_S, checked_interval, task_interval
from sbatch_k8s.runtime.accounting.gpu import parse_compute_apps
from sbatch_k8s.runtime.accounting.proc_sample import parent_map, tree_pids
from sbatch_k8s.runtime.accounting.sampler import StepSampler, sample_every

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
    for bad, item in (("task=x", "task=x"), ("cpu=3", "cpu=3"), ("-1", "-1"),
                      ("task=5,bogus=3", "bogus=3")):
        with pytest.raises(SlurmInputError) as caught:
            task_interval(bad)
        assert caught.value.render("sbatch") == \
            f"sbatch: error: Invalid --acctg-freq specification: {item}\n"
    assert checked_interval(None, "7") == 7
    assert checked_interval("2", "7") == 2
    assert checked_interval("bogus", None) == DEFAULT_TASK_INTERVAL_S


def test_nvidia_smi_parsing() -> None:
    text = "pid, used_memory [MiB]\n1234, 512 MiB\n99, 1 GiB\nbad line\n1234, 2 MiB\n"
    assert parse_compute_apps(text) == {1234: 514 * 1024 ** 2, 99: 1024 ** 3}
    assert parse_compute_apps("pid, used_memory [MiB]\n") == {}


def test_tree_follows_descendants() -> None:
    child = subprocess.Popen(["sh", "-c", "sleep 120 & sleep 120; wait"],
                             start_new_session=True)
    try:
        deadline = time.monotonic() + 30        # until sh has forked both sleeps
        pids = tree_pids(child.pid, parent_map())
        while len(pids) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
            pids = tree_pids(child.pid, parent_map())
        assert pids[0] == child.pid and len(pids) == 3
    finally:
        os.killpg(child.pid, signal.SIGKILL)    # sh and its sleeps
        child.wait()


def _reaped(proc: "subprocess.Popen[bytes]") -> "os.struct_rusage":
    _, _, rusage = os.wait4(proc.pid, 0)
    proc.returncode = 0  # reaped here, not by Popen
    return rusage


def test_burning_task_shows_cpu_and_memory() -> None:
    sampler = StepSampler("node-0", gpu_reader=dict)
    proc = subprocess.Popen([sys.executable, "-c", BURN])
    sampler.add_task(0, proc.pid)

    async def sample_until_end() -> None:
        sampling = asyncio.ensure_future(sample_every(sampler, 0.2))
        rusage = await asyncio.get_event_loop().run_in_executor(None, _reaped, proc)
        sampling.cancel()
        sampler.end_task(0, rusage)

    asyncio.new_event_loop().run_until_complete(sample_until_end())
    usage = StepUsage.from_tasks(sampler.figures())
    assert usage is not None
    assert usage.total_cpu >= 1.5 and usage.metrics["cpu"].total == pytest.approx(
        usage.total_cpu, abs=0.01)
    assert usage.metrics["rss"].max.value >= 90 * 1024 * 1024
    assert usage.metrics["rss"].max[1:] == ("node-0", 0)
    assert sampler.usage[0].samples >= 1


def test_true_task_unsampled_still_closed_by_rusage() -> None:
    sampler = StepSampler("node-1")
    proc = subprocess.Popen(["true"])
    sampler.add_task(3, proc.pid)
    usage = sampler.end_task(3, _reaped(proc))
    assert usage.samples == 0 and usage.finished and usage.total_cpu < 0.5
    step = StepUsage.from_tasks([usage.figures()])
    assert step is not None and not step.sampled and step.metrics["rss"].max.value == 0
    assert StepUsage.from_json(step.to_json()) == step


def test_step_usage_folds_tasks_and_round_trips() -> None:
    tasks = [{"node": "n1", "task": 0, "user": 2.0, "sys": 0.5, "cpu": 2.5, "rss": 100,
              "vmem": 300},
             {"node": "n2", "task": 1, "user": 1.0, "sys": 0.25, "cpu": 1.25, "rss": 300,
              "vmem": 200}]
    usage = StepUsage.from_tasks(tasks)
    assert usage is not None
    assert (usage.tasks, usage.user_cpu, usage.system_cpu) == (2, 3.0, 0.75)
    assert usage.metrics["rss"].max == (300, "n2", 1)
    assert usage.metrics["rss"].min == (100, "n1", 0)
    assert usage.average("rss") == 200            # the mean of the tasks' peaks
    assert usage.metrics["cpu"].min == (1.25, "n2", 1)
    assert StepUsage.from_json(usage.to_json()) == usage
    assert StepUsage.from_json({"n": "x"}) is None and StepUsage.from_json(None) is None
    assert StepUsage.from_tasks([]) is None


def test_gpu_utilisation_of_the_gpus_a_task_sees() -> None:
    """nvidia-smi's per-GPU utilisation, averaged over the GPUs each task sees
    (CUDA_VISIBLE_DEVICES), per task and per node; a task seeing none reports none."""
    from sbatch_k8s.runtime.accounting.gpu import parse_utilisation, visible_gpus

    assert parse_utilisation("0, 40\n1, 60\n2, [N/A]\nbad\n") == {0: 40.0, 1: 60.0}
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "0,1"}) == (0, 1)
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "GPU-1234"}) == ()
    assert visible_gpus({}) == ()
    sampler = StepSampler("g0", gpu_reader=dict, util_reader=lambda: {0: 40.0, 1: 60.0})
    procs = [subprocess.Popen(["sleep", "5"]) for _ in range(3)]
    try:
        for task, (proc, gpus) in enumerate(zip(procs, [(0, 1), (1,), ()])):
            sampler.add_task(task, proc.pid, gpus)
        sampler.sample_now()
        figures = sampler.figures()
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
    assert [f.get("gpu_util") for f in figures] == [50.0, 60.0, None]
    usage = StepUsage.from_tasks(figures)
    assert usage is not None and usage.nodes["g0"].gpu_util == 55.0
    assert StepUsage.from_json(usage.to_json()) == usage
