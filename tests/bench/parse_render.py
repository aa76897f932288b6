"""Parse + render throughput: scripts → JobSpec → manifests, in-process (issue 2's goal:
≥ 1,000 scripts/s). Scaling: the golden cases (short scripts) and a 100-directive script."""

from __future__ import annotations

import time
from typing import Iterable, List, Tuple

from tests.bench.context import Context
from tests.bench.core import Figure
from tests.local.harness import REPO

CONTEXT_ENV = {"HOME": "/home/alice", "PATH": "/usr/bin"}


def _cases() -> List[Tuple[str, str, List[str]]]:
    cases = []
    for path in sorted((REPO / "tests" / "cases").glob("*.sbatch")) + \
            sorted((REPO / "examples").glob("*.sbatch")):
        args_file = path.with_suffix(".args")
        extra = args_file.read_text().split("\n") if args_file.exists() else []
        cases.append((path.name, path.read_text(), [a for a in extra if a]))
    return cases


def _big_script() -> str:
    lines = ["#!/bin/bash"]
    lines += [f"#SBATCH --comment=c{i} --time={i % 50 + 1} -N {i % 4 + 1}" for i in range(100)]
    return "\n".join(lines + ["srun hostname", ""])


def _render_all(cases: List[Tuple[str, str, List[str]]]) -> int:
    from parsers.input_errors import SlurmInputError
    from parsers.jobspec import SubmitContext
    from parsers.sbatch_input import build_job, load_script, split_command_line
    from sbatch_k8s.submission_plan import plan_submission
    from translators import RenderInputs, render
    from translators.config import ClusterConfig, PartitionConfig

    config = ClusterConfig(partitions=(PartitionConfig("debug", image="python:3.12-slim",
                                                       node_cpus=96, node_gpus=8),))
    context = SubmitContext("/home/alice/p", "login1", "alice", 1000, 1000, "alice",
                            tuple(CONTEXT_ENV.items()))
    rendered = 0
    for name, text, extra in cases:
        try:
            command = split_command_line(extra + [name])
            job, submit = build_job(command, CONTEXT_ENV, load_script(command, text, name))
            plan = plan_submission(job, submit, config, CONTEXT_ENV, context=context)
            job, partition, allocation = plan.job, plan.partition, plan.allocation
            render(RenderInputs(job, allocation, context, partition, "k8s", 1234, "t",
                                "0123456789ab", "2026-11-22T09:04:34"))
            rendered += 1
        except SlurmInputError:
            continue
    return rendered


def _throughput(cases: List[Tuple[str, str, List[str]]], seconds: float) -> List[float]:
    """Scripts per second, one sample per pass over ``cases``."""
    samples = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(samples) < 5:
        begun = time.perf_counter()
        count = _render_all(cases)
        samples.append(count / (time.perf_counter() - begun))
    return samples


def figures(ctx: Context) -> Iterable[Figure]:
    cases = _cases()
    _render_all(cases)  # build grammars once: a long-lived process pays this once
    budget = 2.0 if ctx.quick else 6.0
    small = Figure("parse+render, golden cases", "scripts/s", _throughput(cases, budget),
                   goal="≥ 1000 scripts/s", higher_is_better=True)
    small.goal_met = small.median is not None and small.median >= 1000
    big = Figure("parse+render, 100-directive script", "scripts/s",
                 _throughput([("big.sh", _big_script(), [])], budget / 2),
                 higher_is_better=True)
    big.scaling = f"{small.median / big.median:.1f}× slower than the short cases" \
        if big.median else ""
    return [small, big]
