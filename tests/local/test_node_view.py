"""sinfo on the local backend lists the nodes jobs run on (``127.0.0.<i+2>``), sharing the
machine's CPU pool, with states that follow the running jobs."""

from __future__ import annotations

import sqlite3

from parsers.formats.scontrol_nodes import show_partition_groups
from parsers.formats.sinfo_fields import PartitionInfo
from parsers.formats.sinfo_format import format_sinfo
from sbatch_k8s.backends.local.partition_nodes import held_per_node, local_nodes
from tests.local.harness import LocalSlurm, job_id_of
from translators.config import LocalConfig


def _db(*running: tuple) -> sqlite3.Connection:
    """Running jobs as ``(node_count, cpus)`` or ``(node_count, cpus, exclusive)``."""
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row      # as the job database's connections
    conn.execute("CREATE TABLE jobs (state TEXT, node_count INTEGER, cpus INTEGER, "
                 "exclusive TEXT)")
    conn.executemany("INSERT INTO jobs VALUES ('RUNNING', ?, ?, ?)",
                     [tuple(job) + (None,) * (3 - len(job)) for job in running])
    conn.execute("INSERT INTO jobs VALUES ('PENDING', 4, 4, NULL)")
    return conn


def test_cpus_per_node_follow_the_block_layout():
    assert held_per_node(3, 7) == [3, 2, 2]
    assert held_per_node(1, 5) == [5]


def test_one_node_per_cpu_of_the_pool_each_able_to_hold_it_all():
    nodes = local_nodes(_db(), LocalConfig(cpus=4, gpus=2, memory_mb=2048))
    assert [n.name for n in nodes] == ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"]
    assert {(n.state, n.cpus, n.alloc_cpus, n.memory_mb, n.gres) for n in nodes} == {
        ("idle", 4, 0, 2048, "gpu:2")}


def test_states_follow_the_running_jobs_and_the_pool():
    nodes = local_nodes(_db((2, 2)), LocalConfig(cpus=4))
    assert [(n.state, n.alloc_cpus) for n in nodes] == [
        ("mixed", 1), ("mixed", 1), ("idle", 0), ("idle", 0)]
    full = local_nodes(_db((2, 2), (1, 2)), LocalConfig(cpus=4))
    assert [(n.state, n.alloc_cpus) for n in full] == [
        ("allocated", 3), ("allocated", 1), ("allocated", 0), ("allocated", 0)]


def test_an_exclusive_job_holds_the_pool_once():
    """``-N2 --exclusive`` on a 4-CPU pool: each node all 4 CPUs, the pool held once."""
    nodes = local_nodes(_db((2, 8, "node")), LocalConfig(cpus=4))
    assert [(n.state, n.alloc_cpus) for n in nodes][:3] == [
        ("allocated", 4), ("allocated", 4), ("allocated", 0)]
    part = PartitionInfo("local", nodes, default=True)
    assert format_sinfo([part], fmt="%C", header=False) == "4/0/0/4\n"


def test_totals_count_the_shared_pool_once():
    """Every node shows the whole pool, but the machine has it once: 16 nodes of a 16-CPU
    pool are 16 CPUs (not 256), held by the running jobs or idle."""
    nodes = local_nodes(_db((2, 2), (1, 3)), LocalConfig(cpus=16, gpus=2, memory_mb=2048))
    part = PartitionInfo("local", nodes, default=True)
    assert format_sinfo([part], fmt="%C", header=False) == "5/11/0/16\n"
    per_node = format_sinfo([part], fmt="%N %C", node_oriented=True, header=False)
    assert per_node.splitlines()[:3] == [
        "127.0.0.2 4/11/1/16", "127.0.0.3 1/11/4/16", "127.0.0.4 0/11/5/16"]
    shown = " ".join(show_partition_groups(part))
    assert "TotalCPUs=16 TotalNodes=16 " in shown
    assert "TRES=cpu=16,mem=2G,node=16,billing=16,gres/gpu=2" in shown


def test_sinfo_names_the_nodes_squeue_shows(tmp_path) -> None:
    slurm = LocalSlurm(tmp_path, config="[local]\ncpus = 6\n")
    try:
        assert slurm.run("sinfo", "-h", "-o", "%D %t %N").stdout == "6 idle 127.0.0.[2-7]\n"
        job = job_id_of(slurm.run("sbatch", "-N2", "--wrap", "sleep 60").stdout)

        def nodes() -> str:
            return slurm.run("squeue", "-h", "-t", "R", "-j", str(job), "-o", "%N").stdout

        slurm.wait_for(lambda: nodes().strip(), timeout=60)
        assert nodes() == "127.0.0.[2-3]\n"
        assert slurm.run("sinfo", "-h", "-o", "%D %t %N").stdout == (
            "2 mix 127.0.0.[2-3]\n4 idle 127.0.0.[4-7]\n")
        assert slurm.run("sinfo", "-h", "-o", "%C").stdout == "2/4/0/6\n"
        slurm.run("scancel", str(job))
    finally:
        slurm.cleanup()


def test_the_scheduler_counts_an_exclusive_job_once():
    """What sinfo shows is what the scheduler holds: an exclusive job takes the whole pool
    and its GPUs once, whatever its node count; a plain job its own CPUs."""
    from sbatch_k8s.backends.local.capacity import Capacity

    config = LocalConfig(cpus=4, gpus=2)
    exclusive = {"cpus": 8, "gpus": 2, "node_count": 2, "mem_mb": None, "mem_per_cpu": 0,
                 "gpu_ids": "", "exclusive": "node"}
    free = Capacity(config, [])
    assert free.take(exclusive) == [[0, 1], [0, 1]]        # each node shows the pool's GPUs
    assert (free.free_cpus, free.free_gpus) == (0, [])
    busy = Capacity(config, [dict(exclusive, gpu_ids="0,1;0,1")])
    assert busy.take({"cpus": 1, "gpus": 0, "node_count": 1, "mem_mb": None,
                      "exclusive": None}) is None
