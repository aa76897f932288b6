"""What a benchmark produces and how results are reported.

A :class:`Figure` is one measured quantity: its samples (median, min–max), the comparison
measured in the same run when there is one (real Slurm, a raw pipe, a 1-task job…) and the
ratio, the goal, and how it scales (the same figure at two sizes). A figure that cannot be
measured here says why instead of failing: benchmarks are not tests.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Dict, List, Optional, Sequence


@dataclass
class Figure:
    """One reported number."""

    name: str
    unit: str
    samples: List[float] = field(default_factory=list)
    comparison: Optional[str] = None
    comparison_samples: List[float] = field(default_factory=list)
    goal: str = ""
    goal_met: Optional[bool] = None
    scaling: str = ""
    skipped: str = ""
    higher_is_better: bool = False

    @property
    def median(self) -> Optional[float]:
        return statistics.median(self.samples) if self.samples else None

    @property
    def comparison_median(self) -> Optional[float]:
        return statistics.median(self.comparison_samples) if self.comparison_samples else None

    @property
    def ratio(self) -> Optional[float]:
        """ours ÷ comparison (for throughput: how much of the comparison we reach)."""
        if self.median is None or not self.comparison_median:
            return None
        return self.median / self.comparison_median

    def as_dict(self) -> Dict[str, object]:
        data = asdict(self)
        data.update(median=self.median, min=min(self.samples) if self.samples else None,
                    max=max(self.samples) if self.samples else None,
                    comparison_median=self.comparison_median, ratio=self.ratio)
        return data


def timed(action: Callable[[], object], repeats: int, warmup: int = 1) -> List[float]:
    """Wall-clock seconds of ``repeats`` calls (after ``warmup`` unmeasured ones)."""
    for _ in range(warmup):
        action()
    samples = []
    for _ in range(repeats):
        begun = time.perf_counter()
        action()
        samples.append(time.perf_counter() - begun)
    return samples


def process_times(argv: Sequence[str], repeats: int, env: Optional[Dict[str, str]] = None,
                  cwd: Optional[str] = None, warmup: int = 2) -> List[float]:
    """Whole-process latency of a command, in milliseconds."""
    def once() -> None:
        subprocess.run(list(argv), env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, check=False)

    return [s * 1000 for s in timed(once, repeats, warmup)]


def _cell(value: Optional[float], unit: str) -> str:
    if value is None:
        return "–"
    if unit in ("ms", "s") or value >= 100:
        return f"{value:.1f}"
    return f"{value:.3g}"


def render_table(figures: Sequence[Figure]) -> str:
    """A plain-text table: median, min–max, comparison, ratio, goal."""
    rows = [("figure", "median", "min–max", "unit", "comparison", "ratio", "goal", "")]
    for f in figures:
        if f.skipped or not f.samples:
            why = f.skipped or "no sample"
            rows.append((f.name, "–", "–", f.unit, "", "", f.goal, f"skipped: {why}"))
            continue
        spread = f"{_cell(min(f.samples), f.unit)}–{_cell(max(f.samples), f.unit)}"
        comparison = ""
        if f.comparison:
            comparison = f"{f.comparison} {_cell(f.comparison_median, f.unit)}"
        ratio = f"{f.ratio:.2f}×" if f.ratio is not None else ""
        verdict = {True: "met", False: "NOT met", None: ""}[f.goal_met]
        rows.append((f.name, _cell(f.median, f.unit), spread, f.unit, comparison, ratio,
                     f.goal, verdict + (f"; {f.scaling}" if f.scaling else "")))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip()
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


def write_json(figures: Sequence[Figure], path: str, meta: Dict[str, object]) -> None:
    """All figures, with the machine they were measured on."""
    with open(path, "w") as f:
        json.dump({"meta": meta, "figures": [x.as_dict() for x in figures]}, f, indent=1)


TABLE_BEGIN = "<!-- bench-table: begin (written by python -m tests.bench --doc) -->"
TABLE_END = "<!-- bench-table: end -->"


def update_doc(path: str, table: str, meta: Dict[str, object]) -> None:
    """Replace the table between the markers of ``path`` with this run's."""
    with open(path) as f:
        text = f.read()
    head, found, rest = text.partition(TABLE_BEGIN)
    if not found or TABLE_END not in rest:
        raise SystemExit(f"{path}: no {TABLE_BEGIN!r} … {TABLE_END!r} section to update")
    tail = rest.partition(TABLE_END)[2]
    load = ", ".join(f"{x:.2f}" for x in meta["load"])  # type: ignore[union-attr]
    block = (f"{TABLE_BEGIN}\nMeasured {meta['time']} on {meta['cpus']} CPUs (load {load}), "
             f"Python {meta['python']}, real Slurm: {meta['real_slurm']}; "
             f"{meta['seconds']} s in all.\n\n```\n{table}```\n{TABLE_END}")
    with open(path, "w") as f:
        f.write(head + block + tail)


def machine() -> Dict[str, object]:
    """What the numbers were measured on."""
    return {"python": sys.version.split()[0], "cpus": os.cpu_count(),
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"), "load": os.getloadavg()}
