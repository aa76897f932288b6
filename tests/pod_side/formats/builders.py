"""Job records matching the real Slurm 22.05 outputs kept in ``recorded/``.

``recorded/examples`` and ``recorded/observations`` are copies of the project's recorded
outputs; ``recorded/live`` was captured with ``recorded/live/capture.sh`` (jobs 183-191, all
submitted at 09:42:23, running ones started at 09:42:24; squeue and scontrol ran at
09:42:27, sacct and sinfo at 09:42:28). Times are given as local wall-clock text, so the
tests pass in any time zone.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Dict, List, Optional

from parsers.job_records import JobRecord, StepRecord

RECORDED = Path(__file__).parent / "recorded"


def ts(text: str) -> int:
    """Epoch seconds of ``2026-11-22T09:42:23`` in local time."""
    return int(time.mktime(time.strptime(text, "%Y-%m-%dT%H:%M:%S")))


def at(clock: str) -> int:
    """Epoch seconds of a time of day on the day of the recordings."""
    return ts(f"2026-11-22T{clock}")


def recorded(name: str) -> str:
    """A recorded output, e.g. ``examples/squeue-long.txt``."""
    return (RECORDED / name).read_text()


def job(job_id: int, name: str, state: str, **fields: object) -> JobRecord:
    """A job of root on partition debug, with the recording cluster's defaults."""
    base: Dict[str, object] = dict(
        job_id=job_id, name=name, state=state, user="root", uid=0, group="root", gid=0,
        partition="debug", account="root", qos="normal", submit_host="localhost",
        min_memory_mb=256, memory_per_cpu=True, cluster="realslurm")
    base.update(fields)
    return JobRecord(**base)  # type: ignore[arg-type]


def step(step_id: str, name: str, state: str, start: Optional[int], nodes: str,
         node_count: int, ntasks: int, cpus: int, **fields: object) -> StepRecord:
    """A step record."""
    return StepRecord(step_id=step_id, name=name, state=state, start_time=start,
                      node_list=nodes, node_count=node_count, ntasks=ntasks, cpus=cpus,
                      **fields)  # type: ignore[arg-type]


SUBMIT, START = at("09:42:23"), at("09:42:24")
SQUEUE_NOW, SACCT_NOW = at("09:42:27"), at("09:42:28")
_LIVE = dict(work_dir="/tmp/fmtcap", stdout="/dev/null", stderr="/dev/null",
             submit_time=SUBMIT, alloc_sid=20620)
_STARTED = dict(_LIVE, eligible_time=SUBMIT, start_time=START)
SBATCH = "sbatch --parsable "


def _batch_extern(first: str, nodes: str, count: int, batch_cpus: int, batch_tres: str,
                  cpus: int, extern_tres: str) -> tuple:
    """The batch step (on the first node) and the extern step (one task per node)."""
    return (step("batch", "batch", "RUNNING", START, first, 1, 1, batch_cpus, tres=batch_tres),
            step("extern", "extern", "RUNNING", START, nodes, count, count, cpus,
                 tres=extern_tres))


def live_jobs() -> List[JobRecord]:
    """Jobs 183-191 in the controller's order (the pending array remainder last)."""
    envlike = job(
        183, "envlike", "RUNNING", priority=4294901620, node_count=2, node_list="n[1-2]",
        batch_host="n1", cpus=4, ntasks_per_node=2, tres="cpu=4,mem=1G,node=2,billing=4",
        submit_line=SBATCH + "-N2 --ntasks-per-node=2 -J envlike -o /dev/null "
                             "--wrap=srun sleep 50",
        steps=_batch_extern("n1", "n[1-2]", 2, 2, "cpu=2,mem=512M,node=1", 4,
                            "billing=4,cpu=4,mem=1G,node=2") + (
            step("0", "sleep", "RUNNING", START, "n[1-2]", 2, 4, 4,
                 tres="cpu=4,mem=1G,node=2", submit_line="srun sleep 50", layout="Block"),),
        **_STARTED)
    lim = job(
        184, "lim", "RUNNING", priority=4294901619, node_list="n1", batch_host="n1",
        time_limit_min=10, comment="hello", tres="cpu=1,mem=256M,node=1,billing=1",
        submit_line=SBATCH + "-t 10 -J lim --comment=hello -o /dev/null --wrap=sleep 50",
        steps=_batch_extern("n1", "n1", 1, 1, "cpu=1,mem=256M,node=1", 1,
                            "billing=1,cpu=1,mem=256M,node=1"), **_STARTED)
    array = dict(_LIVE, priority=4294901618, cpus=4, ntasks=4, array_job_id=185,
                 array_throttle=2, tres="cpu=4,mem=1G,node=1,billing=4",
                 submit_line=SBATCH + "--array=1-6%2 -n4 -J arr -o /dev/null --wrap=sleep 50")
    tasks = [job(jid, "arr", "RUNNING", array_task_id=task, node_list=node, batch_host=node,
                 eligible_time=START, accrue_time=START, start_time=START,
                 steps=_batch_extern(node, node, 1, 4, "cpu=4,mem=1G,node=1", 4,
                                     "billing=4,cpu=4,mem=1G,node=1"), **array)
             for jid, task, node in ((190, 1, "n3"), (191, 2, "n4"))]
    # Once a task has started, the controller has resolved the array's partition limit.
    remainder = job(185, "arr", "PENDING", reason="JobArrayTaskLimit", array_pending="3-6%2",
                    accrue_time=START, last_sched_eval=START, time_limit_min=0, **array)
    held = job(186, "held", "PENDING", priority=0, reason="JobHeldUser", time_limit_min=30,
               tres="cpu=1,mem=256M,node=1,billing=1",
               submit_line=SBATCH + "-H -t 30 -J held -o /dev/null --wrap=sleep 5", **_LIVE)
    dep = job(187, "dep", "PENDING", priority=4294901617, reason="Dependency",
              dependency="afterok:186(unfulfilled)", tres="cpu=1,mem=256M,node=1,billing=1",
              submit_line=SBATCH + "-d afterok:186 -J dep -o /dev/null --wrap=true", **_LIVE)
    big = job(188, "big", "PENDING", priority=4294901616, reason="Resources", node_count=4,
              cpus=16, ntasks=16, eligible_time=SUBMIT, tres="cpu=16,mem=4G,node=4,billing=16",
              submit_line=SBATCH + "-N4 -n16 -J big -o /dev/null --wrap=sleep 5", **_LIVE)
    rich = job(
        189, "richjobname", "PENDING", priority=0, reason="JobHeldUser", node_count=2,
        max_nodes=2, cpus=8, cpus_per_task=2, ntasks_per_node=2, min_memory_mb=1024,
        memory_per_cpu=False, gres="gpu:1", exclusive="", time_limit_min=1564,
        comment="a b", tres="cpu=8,mem=2G,node=2,billing=8,gres/gpu=2",
        submit_line=SBATCH + "-H -N2 --ntasks-per-node=2 -c2 --mem=1G --gres=gpu:1 "
                             "--exclusive -t 1-02:03:04 --comment=a b -J richjobname "
                             "-o out-%j.txt -e err-%j.txt --wrap=true",
        **dict(_LIVE, stdout="/tmp/fmtcap/out-%j.txt", stderr="/tmp/fmtcap/err-%j.txt"))
    return [envlike, lim, held, dep, big, rich, *tasks, remainder]


def live_by_id() -> Dict[int, JobRecord]:
    """The live jobs by job id."""
    return {record.job_id: record for record in live_jobs()}


def sacct_order(records: List[JobRecord]) -> List[JobRecord]:
    """The order the database lists them: by job id, array tasks after plain jobs."""
    plain = [r for r in records if r.array_job_id is None]
    array = [r for r in records if r.array_job_id is not None]
    return sorted(plain, key=lambda r: r.job_id) + sorted(
        array, key=lambda r: (r.array_pending is not None, r.array_task_id or 0))


def with_steps(record: JobRecord, steps: tuple) -> JobRecord:
    """The record with other steps."""
    return replace(record, steps=steps)
