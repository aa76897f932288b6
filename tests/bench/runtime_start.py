"""Starting the runtime zipapp: with its bytecode cache
(:mod:`sbatch_k8s.runtime.warm.bytecode_cache`) against importing from the zip (the zipapp as it
was: every module compiled on every start).

* a no-op start: ``python3 runtime.pyz node`` without a job imports everything a pod's first
  process imports, then exits at once (its one-line error); with the cache warm (each later
  start in the same container: ``srun``, ``scontrol``… of the job) and cold (a container's
  first start: extract, compile, write the bytecode);
* platform-mode start-up for 2 containers (PyTorchJob's contract), each container with its
  own fresh ``/tmp`` as a pod has: the cold case end to end.

The interpreter is the oldest the runtime supports when this machine has it (as in
:mod:`tests.platform.harness`). Samples of both variants are taken in turn.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tempfile
import time
import zipfile
from typing import Callable, Iterable, List, Optional

from sbatch_k8s.runtime_bundle import build_bundle
from tests.bench.context import Context
from tests.bench.core import Figure

CACHE_LINE = b"use_bytecode_cache("


def zip_only(bundle: bytes) -> bytes:
    """``bundle`` with the cache call taken out of its ``__main__``: the zipapp as before."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(bundle)) as source, \
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "__main__.py":
                data = b"".join(line for line in data.splitlines(keepends=True)
                                if b"bytecode_cache" not in line)
                assert CACHE_LINE not in data
            target.writestr(info, data)
    return out.getvalue()


def _python() -> str:
    from tests.platform.harness import CONTAINER_PYTHON

    return CONTAINER_PYTHON


def _no_op_ms(python: str, bundle: str, cache_root: Optional[str]) -> Optional[float]:
    env = {"PATH": "/usr/bin:/bin", "SBATCHK8S_RUNTIME_CACHE": cache_root or "0"}
    begun = time.perf_counter()
    done = subprocess.run([python, bundle, "node"], env=env, capture_output=True, text=True,
                          timeout=120)
    elapsed = (time.perf_counter() - begun) * 1000
    # Without a job description the node says so in one line and exits 1.
    return elapsed if done.returncode == 1 and "job description" in done.stderr else None


def _alternate(runs: int, ours: Callable[[], Optional[float]],
               before: Callable[[], Optional[float]]) -> List[List[float]]:
    samples: List[List[float]] = [[], []]
    for _ in range(runs):
        for k, take in enumerate((ours, before)):
            value = take()
            if value is not None:
                samples[k].append(value)
    return samples


def _figure(name: str, samples: List[List[float]]) -> Figure:
    figure = Figure(name, "ms", samples[0], comparison="zip import (before)",
                    comparison_samples=samples[1])
    if not samples[0] or not samples[1]:
        figure.skipped = "the runtime did not start as expected"
    return figure


def _no_op_figures(ctx: Context, scratch: str) -> Iterable[Figure]:
    python = _python()
    data = build_bundle()
    new, old = os.path.join(scratch, "runtime.pyz"), os.path.join(scratch, "before.pyz")
    with open(new, "wb") as f:
        f.write(data)
    with open(old, "wb") as f:
        f.write(zip_only(data))
    version = os.path.basename(python)
    warm_root = os.path.join(scratch, "warm")
    _no_op_ms(python, new, warm_root)          # fills the cache once
    runs = ctx.repeats(10)
    yield _figure(f"runtime no-op start ({version}), bytecode cache warm",
                  _alternate(runs, lambda: _no_op_ms(python, new, warm_root),
                             lambda: _no_op_ms(python, old, None)))
    counter = iter(range(10 ** 6))
    yield _figure(f"runtime no-op start ({version}), bytecode cache cold (first start)",
                  _alternate(runs, lambda: _no_op_ms(
                      python, new, os.path.join(scratch, f"cold-{next(counter)}")),
                             lambda: _no_op_ms(python, old, None)))


def _platform_figure(ctx: Context) -> Figure:
    name = "platform-mode start-up, pytorchjob, 2 containers, fresh /tmp each"
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return Figure(name, "ms", skipped="needs root and unshare")
    from tests.bench.platform_mode import _oracles, _start_up_ms
    from tests.platform.harness import PlatformCluster

    cluster = PlatformCluster()
    try:
        ours = cluster.bundle.read_bytes()
        before = zip_only(ours)

        def with_bundle(data: bytes) -> Callable[[], Optional[float]]:
            def sample() -> Optional[float]:
                cluster.bundle.write_bytes(data)
                return _start_up_ms(cluster, _oracles()["pytorchjob"](2), 2)
            return sample

        samples = _alternate(ctx.repeats(6), with_bundle(ours), with_bundle(before))
    finally:
        cluster.close()
    return _figure(name, samples)


def figures(ctx: Context) -> Iterable[Figure]:
    scratch = tempfile.mkdtemp(prefix="sbatch-k8s-bench-runtime-")
    try:
        yield from _no_op_figures(ctx, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    yield _platform_figure(ctx)
