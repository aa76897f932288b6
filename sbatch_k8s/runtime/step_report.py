"""How srun reports a step's end: its exit code and Slurm's per-node failure lines."""

from __future__ import annotations

import signal
from typing import Any, Dict, List, Sequence, Tuple

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
    """``(node, "task 1: Exited with exit code 3")`` for every failed group of tasks."""
    groups: Dict[Tuple[str, int, int], List[int]] = {}
    order: List[Tuple[str, int, int]] = []
    for node, result in results:
        status, signum = int(result.get("status", 0)), int(result.get("signal", 0))
        if not status and not signum:
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


def step_exit_code(results: Sequence[Result]) -> int:
    """srun's exit status: the highest task exit code, 128+signal for a signalled task."""
    codes = [128 + int(r["signal"]) if r.get("signal") else int(r.get("status", 0))
             for _, r in results]
    return max(codes) if codes else 0
