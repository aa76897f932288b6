"""Node 0's step registry: step ids, the CPUs and GPUs steps hold, and the step log.

As in Slurm (≥ 21.08), steps do not share CPUs unless they ask to: a step without
``--overlap`` holds, on each of its nodes, the CPUs it uses — all of the node's CPUs, or only
``tasks × cpus-per-task`` with ``--exact`` (implied by ``-c``) — and a step that does not fit
waits ("step creation temporarily disabled") until another ends. GPUs likewise: a step holds
the GPUs it gets on each node (:mod:`parsers.step_gpus` counts them), bound as Slurm binds
them — the lowest ids no other step holds — so parallel one-GPU steps each see their own. A
step is registered over a connection srun keeps open for the step's life; when srun ends it
(or the connection drops), its CPUs and GPUs are released and the end is logged.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from sbatch_k8s.runtime.batch_host.step_log import BATCH, usage_path

#: A step's holding on one node: ``[node_index, cpus]`` or ``[node_index, cpus, gpus]``.
Hold = Sequence[int]


def _gpus(hold: Hold) -> int:
    return int(hold[2]) if len(hold) > 2 else 0


class StepRegistry:
    """Step ids in order, CPU and GPU holdings per node, and ``steps.jsonl`` for the
    backend. ``gpu_ids`` are the job's GPU ids on each node."""

    def __init__(self, cpus_per_node: Sequence[int], log_path: Optional[str],
                 gpu_ids: Sequence[Sequence[int]] = ()) -> None:
        self.capacity = list(cpus_per_node)
        self.used = [0] * len(cpus_per_node)
        self.gpu_ids = [list(ids) for ids in gpu_ids] or [[] for _ in cpus_per_node]
        #: GPU ids held by running steps, per node.
        self.gpus_held: List[set] = [set() for _ in cpus_per_node]
        self.log_path = log_path
        self.next_id = 0
        self.running: Dict[int, Dict[str, Any]] = {}
        self.changed = asyncio.Event()
        #: Told the running steps after every start and end (node 0's
        #: :class:`~sbatch_k8s.runtime.cluster.step_publisher.StepPublisher`).
        self.on_change: Optional[Callable[[Dict[int, Dict[str, Any]]], None]] = None
        #: Told the running steps after a step's usage so far changed (for sstat; the
        #: publisher writes those no more often than the sampling interval).
        self.on_usage: Optional[Callable[[Dict[int, Dict[str, Any]]], None]] = None
        #: The batch script's usage so far (``sstat -j JOB.batch``; None until sampled).
        self.batch_usage: Optional[Dict[str, Any]] = None

    def _write(self, record: Dict[str, Any]) -> None:
        if self.log_path:
            with open(self.log_path, "a") as f:
                f.write(json.dumps(record, sort_keys=True) + "\n")

    def fits(self, holds: Sequence[Hold]) -> bool:
        """Whether ``holds`` fit next to the running steps."""
        return all(self.used[h[0]] + h[1] <= self.capacity[h[0]] and
                   len(self.gpus_held[h[0]]) + _gpus(h) <= len(self.gpu_ids[h[0]])
                   for h in holds)

    def possible(self, holds: Sequence[Hold]) -> bool:
        """Whether ``holds`` could fit at all, once every other step has ended."""
        return all(0 <= h[0] < len(self.capacity) and h[1] <= self.capacity[h[0]] and
                   _gpus(h) <= len(self.gpu_ids[h[0]]) for h in holds)

    async def next_change(self) -> None:
        """Return when a step next ends."""
        self.changed.clear()
        await self.changed.wait()

    def bind_gpus(self, node: int, count: int, hold: bool) -> List[int]:
        """The lowest ``count`` GPU ids of ``node`` no running step holds (held from now on
        when ``hold``); the lowest ones at all for a step that shares (``--overlap``)."""
        free = [g for g in self.gpu_ids[node] if not hold or g not in self.gpus_held[node]]
        chosen = free[:count]
        if hold:
            self.gpus_held[node].update(chosen)
        return chosen

    def begin(self, info: Dict[str, Any], holds: Sequence[Hold],
              shared_gpus: Sequence[Hold] = ()) -> Tuple[int, Dict[str, List[int]]]:
        """Register a step that fits; its id and the GPU ids bound on each node (by node
        index): held for ``holds``, shared for ``shared_gpus`` (``[node, 0, gpus]``)."""
        step_id = self.next_id
        self.next_id += 1
        bound: Dict[str, List[int]] = {}
        for hold in holds:
            self.used[hold[0]] += hold[1]
            if _gpus(hold):
                bound[str(hold[0])] = self.bind_gpus(hold[0], _gpus(hold), True)
        for share in shared_gpus:
            if _gpus(share):
                bound[str(share[0])] = self.bind_gpus(share[0], _gpus(share), False)
        record = dict(info, step_id=step_id, event="start", time=int(time.time()))
        self.running[step_id] = dict(record, holds=[list(h) for h in holds], gpus=bound)
        self._write(record)
        if self.on_change is not None:
            self.on_change(self.running)
        return step_id, bound

    def end(self, step_id: int, result: Dict[str, Any]) -> None:
        """The step is over: release its CPUs and log its end (once)."""
        record = self.running.pop(step_id, None)
        if record is None:
            return
        for hold in record["holds"]:
            self.used[hold[0]] -= hold[1]
        for node, ids in record["gpus"].items():
            self.gpus_held[int(node)].difference_update(ids)
        self._write(dict(result, step_id=step_id, event="end", time=int(time.time())))
        self.changed.set()
        if self.on_change is not None:
            self.on_change(self.running)

    def update_usage(self, step_id: Any, usage: Any) -> None:
        """A running step's usage so far (its srun's fold of the tasks' latest samples), or
        the batch script's (``step_id`` ``"batch"``)."""
        if not isinstance(usage, dict):
            return
        if step_id == BATCH:
            self.batch_usage = usage
        elif step_id in self.running:
            self.running[step_id]["usage"] = usage
        else:
            return
        self._write_usage()
        if self.on_usage is not None:
            self.on_usage(self.running)

    def _write_usage(self) -> None:
        """The running steps' (and the script's) latest usage, replacing the file whole."""
        if not self.log_path:
            return
        latest = {str(step_id): record["usage"] for step_id, record in self.running.items()
                  if "usage" in record}
        if self.batch_usage is not None:
            latest[BATCH] = self.batch_usage
        path = usage_path(self.log_path)
        with open(path + ".new", "w") as f:
            json.dump(latest, f, separators=(",", ":"))
        os.replace(path + ".new", path)

    def listing(self) -> List[Dict[str, Any]]:
        """The running steps (for ``squeue -s`` inside the job)."""
        return [{k: v for k, v in r.items() if k not in ("holds", "gpus", "usage")}
                for r in self.running.values()]

    async def wait_until_idle(self, timeout_s: float) -> None:
        """Return once no step runs, or after ``timeout_s``."""
        loop = asyncio.get_event_loop()
        deadline = loop.time() + timeout_s
        while self.running and loop.time() < deadline:
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), deadline - loop.time())
            except asyncio.TimeoutError:
                return
