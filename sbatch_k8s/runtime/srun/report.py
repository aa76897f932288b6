"""How srun reports a step's end: its exit code and Slurm's per-node failure lines."""

from __future__ import annotations

import signal
from typing import Any, Dict, List, Optional, Sequence, Tuple

from sbatch_k8s.runtime.stepd.oom import SRUN_OOM_EXIT

Result = Tuple[str, Dict[str, Any]]


def rank_ranges(ranks: Sequence[int]) -> str:
    """``[0, 1, 3]`` → ``0-1,3``."""
    parts: List[str] = []
    ordered = sorted(ranks)
    start = prev = ordered[0]
    for rank in ordered[1:] + [None]:  # type: ignore[operator]
        if rank is not None and rank == prev + 1:
            prev = rank
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if rank is not None:
            start = prev = rank
    return ",".join(parts)


def describe_exit(status: int, signum: int) -> str:
    """``Exited with exit code 3`` / ``Killed`` / ``Segmentation fault``."""
    if signum:
        try:
            return signal.strsignal(signum) or f"Signal {signum}"
        except (ValueError, AttributeError):
            return f"Signal {signum}"
    return f"Exited with exit code {status}"


def failure_lines(results: Sequence[Result]) -> List[Tuple[str, str]]:
    """``(node, "task 1: Exited with exit code 3")`` for every failed group of tasks (those
    that ran out of memory are said apart: :func:`oom_line`)."""
    groups: Dict[Tuple[str, int, int], List[int]] = {}
    order: List[Tuple[str, int, int]] = []
    for node, result in results:
        status, signum = int(result.get("status", 0)), int(result.get("signal", 0))
        if (not status and not signum) or result.get("oom"):
            continue
        key = (node, status, signum)
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(int(result["rank"]))
    lines = []
    for key in order:
        ranks = groups[key]
        noun = "task" if len(ranks) == 1 else "tasks"
        lines.append((key[0], f"{noun} {rank_ranges(ranks)}: {describe_exit(key[1], key[2])}"))
    return lines


def oom_line(results: Sequence[Result]) -> Optional[Tuple[str, str]]:
    """``(nodes, "task 0: Out Of Memory")`` for the tasks among ``results`` that ran out of
    memory (srun's line for an exit carrying ``SIG_OOM``); None when none did."""
    hit = [(node, int(r["rank"])) for node, r in results if r.get("oom")]
    if not hit:
        return None
    from parsers.values.hostlist import compress_hostlist

    nodes = compress_hostlist(sorted({node for node, _ in hit}))
    ranks = [rank for _, rank in hit]
    noun = "task" if len(ranks) == 1 else "tasks"
    return nodes, f"{noun} {rank_ranges(ranks)}: Out Of Memory"


def step_exit_code(results: Sequence[Result]) -> int:
    """srun's exit status: 1 when a task ran out of memory (srun's ``SIG_OOM`` rule), else
    the highest task exit code, 128+signal for a signalled task."""
    if any(r.get("oom") for _, r in results):
        return SRUN_OOM_EXIT
    codes = [128 + int(r["signal"]) if r.get("signal") else int(r.get("status", 0))
             for _, r in results]
    return max(codes) if codes else 0
