"""One sample of a task's process tree from /proc, as jobacct_gather/linux reads it.

A task is its leader pid and every live descendant. Per process: RSS (statm resident pages),
VMSize (stat vsize), major faults (stat majflt), CPU (stat utime+stime, in clock ticks) and
I/O (/proc/PID/io rchar/wchar, which Slurm reports as disk read/write; readable for the
sampler's own user's processes). A process that ends mid-read is skipped.
"""

from __future__ import annotations

import os
from typing import Dict, List, NamedTuple, Optional, Tuple

PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class ProcessSample(NamedTuple):
    """What one read of a process tree found (sums over the tree's processes)."""

    rss_bytes: int
    vmsize_bytes: int
    major_faults: int
    cpu_seconds: float
    read_bytes: int
    write_bytes: int
    pids: List[int]


def _stat_fields(pid: int, proc: str) -> Optional[List[str]]:
    """``/proc/PID/stat`` fields after the command name (field 3 is index 0), or None."""
    try:
        with open(os.path.join(proc, str(pid), "stat"), "rb") as handle:
            text = handle.read().decode("ascii", "replace")
    except OSError:
        return None
    return text[text.rfind(")") + 2:].split()


def parent_map(proc: str = "/proc") -> Dict[int, int]:
    """``{pid: parent pid}`` for every process visible in ``proc``."""
    parents: Dict[int, int] = {}
    for name in os.listdir(proc):
        if name.isdigit():
            fields = _stat_fields(int(name), proc)
            if fields is not None:
                parents[int(name)] = int(fields[1])
    return parents


def tree_pids(leader: int, parents: Dict[int, int]) -> List[int]:
    """``leader`` and all its descendants in ``parents`` (leader first)."""
    children: Dict[int, List[int]] = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    found, pending = [], [leader]
    while pending:
        pid = pending.pop()
        if pid in parents:
            found.append(pid)
        pending.extend(children.get(pid, ()))
    return found


def _io_bytes(pid: int, proc: str) -> Tuple[int, int]:
    """(rchar, wchar) of ``pid``, zeros when /proc/PID/io is not readable."""
    values = {"rchar": 0, "wchar": 0}
    try:
        with open(os.path.join(proc, str(pid), "io"), "rb") as handle:
            for line in handle.read().decode("ascii", "replace").splitlines():
                key, _, value = line.partition(":")
                if key in values:
                    values[key] = int(value.strip() or 0)
    except (OSError, ValueError):
        pass
    return values["rchar"], values["wchar"]


def sample_tree(leader: int, proc: str = "/proc",
                parents: Optional[Dict[int, int]] = None) -> Optional[ProcessSample]:
    """Sum the tree under ``leader`` now; None when the leader is gone."""
    pids = tree_pids(leader, parents if parents is not None else parent_map(proc))
    rss = vmsize = faults = ticks = read = write = 0
    seen: List[int] = []
    for pid in pids:
        fields = _stat_fields(pid, proc)
        if fields is None:
            continue
        # Fields (1-based, man proc): 12 majflt, 14 utime, 15 stime, 23 vsize, 24 rss.
        faults += int(fields[9])
        ticks += int(fields[11]) + int(fields[12])
        vmsize += int(fields[20])
        rss += int(fields[21]) * PAGE_BYTES
        pid_read, pid_write = _io_bytes(pid, proc)
        read += pid_read
        write += pid_write
        seen.append(pid)
    if not seen:
        return None
    return ProcessSample(rss, vmsize, faults, ticks / CLOCK_TICKS, read, write, seen)
