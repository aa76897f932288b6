"""Comparing the two sides: readable failures, intended differences applied."""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, List, Mapping, Sequence, Tuple

import pytest

from tests.conformance.differences import intended, rewrite_ours, rewrite_real


def sort_lines(text: str) -> str:
    return "".join(sorted(text.splitlines(keepends=True)))


def diff_text(case: str, what: str, real: str, ours: str, sort: bool = False) -> List[str]:
    """Problems (a unified diff) when the normalised texts differ after the intended
    rewrites; ``sort``: compare sorted lines (after the rewrites)."""
    real = rewrite_real(real, case)
    ours = rewrite_ours(ours, case)
    if sort:
        real, ours = sort_lines(real), sort_lines(ours)
    dump(case, what, real, ours)
    if real == ours:
        return []
    diff = difflib.unified_diff(real.splitlines(), ours.splitlines(),
                                fromfile=f"real Slurm ({what})", tofile=f"sbatch-k8s ({what})",
                                lineterm="", n=2)
    body = "\n".join(diff)
    if not body:      # differ only in a trailing newline
        body = f"real ends {real[-1:]!r}, ours ends {ours[-1:]!r}"
    return [f"[{case}] {what} differs:\n{body}"]


def diff_env(case: str, where: str, real: Mapping[str, str],
             ours: Mapping[str, str]) -> List[str]:
    """Problems for variables set by only one side, and for differing values."""
    problems = []
    for name in sorted(set(ours) ^ set(real)):
        if not intended(f"env:{name}", case):
            if name in real:
                problems.append(f"[{case}] {where}: {name} set only by real Slurm "
                                f"({real[name]!r})")
            else:
                problems.append(f"[{case}] {where}: {name} set only by sbatch-k8s "
                                f"({ours[name]!r})")
    for name in sorted(set(ours) & set(real)):
        if ours[name] != real[name] and not intended(f"value:{name}", case):
            problems.append(f"[{case}] {where}: {name}: real Slurm {real[name]!r}, "
                            f"sbatch-k8s {ours[name]!r}")
    return problems


def diff_result(case: str, what: str, real: Tuple[Any, ...], ours: Tuple[Any, ...],
                names: Sequence[str]) -> List[str]:
    """Problems for (stdout, stderr, rc)-like tuples, field by field."""
    problems: List[str] = []
    for name, r, o in zip(names, real, ours):
        if isinstance(r, str) and isinstance(o, str):
            problems += diff_text(case, f"{what} {name}", r, o)
        elif r != o:
            problems.append(f"[{case}] {what} {name}: real Slurm {r!r}, sbatch-k8s {o!r}")
    return problems


def dump(case: str, what: str, real: str, ours: str) -> None:
    """With ``CONFORMANCE_DUMP=<dir>``, keep both normalised texts of every comparison
    (``<dir>/<case>.<what>.real`` and ``.ours``) for inspection."""
    directory = os.environ.get("CONFORMANCE_DUMP")
    if not directory:
        return
    Path(directory).mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^\w.-]+", "_", f"{case}.{what}")[:150]
    (Path(directory) / f"{stem}.real").write_text(real)
    (Path(directory) / f"{stem}.ours").write_text(ours)


def report(problems: List[str]) -> None:
    """Fail with every problem listed (no traceback noise)."""
    if problems:
        pytest.fail("\n\n".join(problems), pytrace=False)


def parallel(calls: Mapping[str, Callable[[], Any]], workers: int = 8) -> Dict[str, Any]:
    """Run the callables concurrently; their results (or the exception raised) by key."""
    results: Dict[str, Any] = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {key: pool.submit(call) for key, call in calls.items()}
        for key, future in futures.items():
            try:
                results[key] = future.result()
            except Exception as e:  # reported by the test that needs the result
                results[key] = e
    return results


def value(result: Any) -> Any:
    """A result of :func:`parallel`, re-raising what the call raised."""
    if isinstance(result, BaseException):
        raise result
    return result
