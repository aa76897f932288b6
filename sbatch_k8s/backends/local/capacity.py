"""The local machine as a one-partition cluster: how much it offers and who holds what.

Capacity (``[local]`` in the configuration): ``cpus`` (default: 4 per core, at least 16 — the
local backend oversubscribes like an emulated cluster), ``gpus`` (default 0; ids
``0..gpus-1``, handed out as ``CUDA_VISIBLE_DEVICES``), ``memory_mb`` (default: none enforced).
Starting a job reserves its CPUs and GPUs in the job database inside one ``BEGIN IMMEDIATE``
transaction, so concurrent supervisors never overbook.
"""

from __future__ import annotations

import os
import sqlite3
import time
from typing import List, Optional, Tuple

from parsers.allocation import Allocation, NodeShape
from parsers.errors import EXIT_SUBMIT_ERROR, SlurmInputError
from parsers.jobspec import JobSpec
from parsers.records import RUNNING
from translators.config import LocalConfig


def local_cpus(config: LocalConfig) -> int:
    """CPUs the local backend hands out."""
    if config.cpus:
        return config.cpus
    return max(4 * (os.cpu_count() or 1), 16)


def local_shape(config: LocalConfig) -> NodeShape:
    """One local "node" can hold the whole machine. Without pretend GPUs the GPU count is
    left open, so that a GPU job is refused by :func:`check_fits`, which says why."""
    return NodeShape(cpus=local_cpus(config), gpus=config.gpus or None,
                     memory_mb=config.memory_mb)


def _free_gpus(conn: sqlite3.Connection, total: int) -> List[int]:
    used = set()
    for (ids,) in conn.execute("SELECT gpu_ids FROM jobs WHERE state=? AND gpu_ids != ''",
                               (RUNNING,)):
        used.update(int(x) for x in ids.replace(";", ",").split(",") if x)
    return [i for i in range(total) if i not in used]


def try_reserve(conn: sqlite3.Connection, job_id: int, cpus: int, gpus_per_node: int,
                nodes: int, config: LocalConfig) -> Optional[List[List[int]]]:
    """Mark the job RUNNING if its CPUs and GPUs fit now; its GPU ids per node, or None."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = conn.execute("SELECT state FROM jobs WHERE job_id=?", (job_id,)).fetchone()
        if row is None or row[0] != "PENDING":
            conn.execute("ROLLBACK")
            return None
        used = conn.execute("SELECT COALESCE(SUM(cpus), 0) FROM jobs WHERE state=?",
                            (RUNNING,)).fetchone()[0]
        free_gpus = _free_gpus(conn, config.gpus)
        wanted_gpus = gpus_per_node * nodes
        if used + cpus > local_cpus(config) or wanted_gpus > len(free_gpus):
            conn.execute("ROLLBACK")
            return None
        ids = [free_gpus[i * gpus_per_node:(i + 1) * gpus_per_node] for i in range(nodes)]
        flat = ";".join(",".join(str(g) for g in node) for node in ids)
        conn.execute("UPDATE jobs SET state=?, reason='None', start_time=?, gpu_ids=? "
                     "WHERE job_id=?", (RUNNING, time.time(), flat, job_id))
        conn.execute("COMMIT")
        return ids
    except BaseException:
        conn.execute("ROLLBACK")
        raise


#: Where the capacity is configured, for the reasons below.
_CONFIGURE = ("in the [local] table of the configuration file ($SBATCH_K8S_CONFIG, else "
              "~/.config/sbatch-k8s/config.toml)")


def fits_ever(cpus: int, gpus: int, config: LocalConfig) -> Tuple[bool, str]:
    """Whether a job of this size could ever run here, and why not (one line naming the
    missing resource and the setting that provides it)."""
    if cpus > local_cpus(config):
        return False, (f"the job needs {cpus} CPUs; this machine offers {local_cpus(config)} "
                       f"(cpus = N {_CONFIGURE})")
    if gpus > config.gpus:
        if not config.gpus:
            return False, (f"the job needs {gpus} GPUs; this machine offers none (pretend "
                           f"GPUs for local jobs: gpus = N {_CONFIGURE})")
        return False, (f"the job needs {gpus} GPUs; this machine offers {config.gpus} "
                       f"(gpus = N {_CONFIGURE})")
    return True, ""


def check_fits(job: JobSpec, allocation: Allocation, config: LocalConfig) -> None:
    """The controller's refusal of a job this machine can never run: the reason, then
    Slurm's "Requested node configuration is not available"."""
    ok, reason = fits_ever(sum(allocation.cpus_per_node),
                           allocation.gpus_per_node * allocation.node_count, config)
    if ok and not config.gpus and any(g.name == "gpu" and g.type for g in job.gres):
        ok, reason = False, (f"the job asks for typed GPUs; this machine offers none (pretend "
                             f"GPUs for local jobs: gpus = N {_CONFIGURE})")
    if not ok:
        raise SlurmInputError(reason, "Batch job submission failed: Requested node "
                              "configuration is not available", exit_code=EXIT_SUBMIT_ERROR)
