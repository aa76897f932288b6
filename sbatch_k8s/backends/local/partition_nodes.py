"""The local machine as sinfo sees it: the nodes jobs run on, sharing one CPU pool.

Node *i* of every local job is ``127.0.0.<i+2>``
(:func:`~sbatch_k8s.runtime.contract.local_address`), so the machine offers as many nodes as
a job can have: one per CPU of the pool (``[local] cpus``, at most 253 addresses). Each node
can hold the whole pool (``-N1 -n16`` puts 16 CPUs on ``127.0.0.2``), and all of them draw on
it together; so a node shows the pool as its CPUs, the CPUs running jobs hold on it as
allocated, and it is ``allocated`` when the pool is used up, ``mixed`` when some job runs
there, else ``idle`` — what squeue's NODELIST and the scheduler's decisions say.

Since the nodes share the pool, totals must count it once, not once per node (16 nodes of a
16-CPU pool are 16 CPUs, not 256): each node carries the pool's allocated CPUs
(``NodeInfo.pool_alloc_cpus``), so sinfo's ``CPUS(A/I/O/T)`` of all the nodes reads
held/free/0/pool, a node's own line held-there/free/held-elsewhere/pool, and
``scontrol show partition`` counts the pool's CPUs, memory and GPUs once.
"""

from __future__ import annotations

import os
import sqlite3
from typing import List, Optional, Tuple

from parsers.formats.sinfo_fields import NodeInfo
from sbatch_k8s.backends.local.capacity import held_cpus, local_cpus, machine_memory_mb
from sbatch_k8s.runtime.contract import local_address
from translators.config import LocalConfig

#: Loopback addresses the local backend can give nodes (``127.0.0.2`` … ``127.0.0.254``).
MAX_LOCAL_NODES = 253


def held_per_node(node_count: int, cpus: int) -> List[int]:
    """A running job's CPUs on each of its nodes: an even share, the remainder on the first
    nodes (the block layout jobs get)."""
    share, extra = divmod(cpus, max(node_count, 1))
    return [share + (1 if i < extra else 0) for i in range(node_count)]


def local_nodes(conn: sqlite3.Connection, config: LocalConfig) -> Tuple[NodeInfo, ...]:
    """The nodes of the local machine with their state now."""
    pool = local_cpus(config)
    count = min(pool, MAX_LOCAL_NODES)
    held = [0] * count
    in_use = 0
    for row in conn.execute(
            "SELECT node_count, cpus, exclusive FROM jobs WHERE state='RUNNING'"):
        node_count, cpus = int(row["node_count"] or 1), int(row["cpus"] or 0)
        in_use += held_cpus(row, config) if cpus else 0
        for i, taken in enumerate(held_per_node(node_count, cpus)[:count]):
            held[i] += taken
    gres = f"gpu:{config.gpus}" if config.gpus else ""
    load, free = machine_load()
    nodes = []
    for i in range(count):
        if held[i] == 0:
            state = "allocated" if in_use >= pool else "idle"
        else:
            state = "allocated" if in_use >= pool else "mixed"
        nodes.append(NodeInfo(local_address(i), state, pool, min(held[i], pool),
                              config.memory_mb or machine_memory_mb(), sockets=pool, gres=gres,
                              pool_alloc_cpus=min(in_use, pool), address=local_address(i),
                              cpu_load=load, free_mem_mb=free))
    return tuple(nodes)


def machine_load() -> Tuple[Optional[float], Optional[int]]:
    """What slurmd reports of its machine, here this one's: the 1-minute load average and
    the memory available in MB (``/proc/meminfo``); None where the system does not say."""
    try:
        load: Optional[float] = os.getloadavg()[0]
    except OSError:
        load = None
    free = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    free = int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return load, free
