"""Node 0's step registry: step ids, the CPUs steps hold, and the step log.

As in Slurm (≥ 21.08), steps do not share CPUs unless they ask to: a step without
``--overlap`` holds, on each of its nodes, the CPUs it uses — all of the node's CPUs, or only
``tasks × cpus-per-task`` with ``--exact`` (implied by ``-c``) — and a step that does not fit
waits ("step creation temporarily disabled") until another ends. A step is registered over a
connection srun keeps open for the step's life; when srun ends it (or the connection drops),
the CPUs are released and the end is logged.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Dict, List, Optional, Sequence


class StepRegistry:
    """Step ids in order, CPU holdings per node, and ``steps.jsonl`` for the backend."""

    def __init__(self, cpus_per_node: Sequence[int], log_path: Optional[str]) -> None:
        self.capacity = list(cpus_per_node)
        self.used = [0] * len(cpus_per_node)
        self.log_path = log_path
        self.next_id = 0
        self.running: Dict[int, Dict[str, Any]] = {}
        self.changed = asyncio.Event()

    def _write(self, record: Dict[str, Any]) -> None:
        if self.log_path:
            with open(self.log_path, "a") as f:
                f.write(json.dumps(record, sort_keys=True) + "\n")

    def fits(self, holds: Sequence[List[int]]) -> bool:
        """Whether ``holds`` (``[node_index, cpus]`` pairs) fit next to the running steps."""
        return all(self.used[i] + cpus <= self.capacity[i] for i, cpus in holds)

    def possible(self, holds: Sequence[List[int]]) -> bool:
        """Whether ``holds`` could fit at all, once every other step has ended."""
        return all(0 <= i < len(self.capacity) and cpus <= self.capacity[i]
                   for i, cpus in holds)

    async def wait_for_room(self, holds: Sequence[List[int]]) -> None:
        """Return once ``holds`` fit."""
        while not self.fits(holds):
            self.changed.clear()
            await self.changed.wait()

    def begin(self, info: Dict[str, Any], holds: Sequence[List[int]]) -> int:
        """Register a step that fits; its id."""
        step_id = self.next_id
        self.next_id += 1
        for i, cpus in holds:
            self.used[i] += cpus
        record = dict(info, step_id=step_id, event="start", time=int(time.time()))
        self.running[step_id] = dict(record, holds=[list(h) for h in holds])
        self._write(record)
        return step_id

    def end(self, step_id: int, result: Dict[str, Any]) -> None:
        """The step is over: release its CPUs and log its end (once)."""
        record = self.running.pop(step_id, None)
        if record is None:
            return
        for i, cpus in record["holds"]:
            self.used[i] -= cpus
        self._write(dict(result, step_id=step_id, event="end", time=int(time.time())))
        self.changed.set()

    def listing(self) -> List[Dict[str, Any]]:
        """The running steps (for ``squeue -s`` inside the job)."""
        return [{k: v for k, v in r.items() if k != "holds"} for r in self.running.values()]
