"""Out-of-memory kills, as Slurm's task/cgroup plugin reports them.

In a pod, a node is one memory cgroup: the container's. When its processes use more than the
pod's limit, the kernel's cgroup OOM killer SIGKILLs one of them and counts the kill
(cgroup v2: ``oom_kill`` in ``memory.events``; v1: ``oom_kill`` in
``memory/memory.oom_control``). Slurm gives each step its own cgroup and, when a step's
first task on a node has ended, reads that count: more than none and slurmstepd says
``Detected N oom-kill event(s) in StepId=J.S. Some of your processes may have been killed by
the cgroup out-of-memory handler.``, every task exit of that step on that node carries
``SIG_OOM`` (srun: ``task N: Out Of Memory``, exit 1; the step ``OUT_OF_MEMORY``, 0:125), and
for the batch step the job ends ``OUT_OF_MEMORY`` (reason ``OutOfMemory``).

Here every step of a node shares the node's one cgroup, so :class:`OomLedger` attributes each
kill to a step that was running on the node when it happened: a step takes the kills counted
between its start and its first task's end that no other step has taken; the batch step takes
those of its lifetime that no step took. On the local backend there is no cgroup of the
job's own: nothing is counted there.
"""

from __future__ import annotations

import os
from typing import Optional, Set

#: slurmstepd's dummy signal for an out-of-memory end (``SIG_OOM``), as a step's exit
#: signal: sacct prints it as ``0:125`` (``253 & 0x7f``).
SIG_OOM = 253
OOM_EXIT_SIGNAL = SIG_OOM & 0x7F
OUT_OF_MEMORY = "OUT_OF_MEMORY"
#: slurmctld's reason for a job whose batch step ran out of memory (``FAIL_OOM``).
OOM_REASON = "OutOfMemory"
#: What srun exits with when a task ran out of memory.
SRUN_OOM_EXIT = 1
CGROUP_ROOT = "/sys/fs/cgroup"
#: cgroup v2's and v1's files holding the count, under :data:`CGROUP_ROOT`.
COUNT_FILES = ("memory.events", "memory/memory.oom_control")


def detected_line(count: int, step: str) -> str:
    """slurmstepd's line for ``count`` kills in ``step`` (``12.0``, ``12.batch``)."""
    return (f"slurmstepd: error: Detected {count} oom-kill event(s) in StepId={step}. "
            "Some of your processes may have been killed by the cgroup out-of-memory "
            "handler.\n")


def read_oom_kills(root: str = CGROUP_ROOT) -> Optional[int]:
    """The cgroup's ``oom_kill`` count; None when this process sees no such file."""
    for name in COUNT_FILES:
        try:
            with open(os.path.join(root, name)) as f:
                text = f.read()
        except OSError:
            continue
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value)
    return None


class OomLedger:
    """One node's cgroup OOM kills, each attributed once (see the module's docstring)."""

    def __init__(self, root: str = CGROUP_ROOT) -> None:
        self.root = root
        self._taken: Set[int] = set()

    def count(self) -> int:
        """The kills counted so far (0 when unreadable)."""
        return read_oom_kills(self.root) or 0

    def take(self, since: int) -> int:
        """The kills after the ``since``-th not yet taken by another step: now taken."""
        fresh = set(range(since + 1, self.count() + 1)) - self._taken
        self._taken |= fresh
        return len(fresh)


def node_ledger(contract: str, root: str = CGROUP_ROOT) -> Optional[OomLedger]:
    """The ledger of a pod's node (None on the local backend, or where no count is
    readable)."""
    if contract == "local" or read_oom_kills(root) is None:
        return None
    return OomLedger(root)
