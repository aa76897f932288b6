"""The web console (``sbatch-k8s ui``) in headless Chromium on the local backend: the job
table with 1,000 and 10,000 jobs (time until the page shows every row; how long after
``sbatch`` returns its new job appears), and a log's streaming throughput to the page.

The jobs are held copies of one submitted job (:func:`tests.bench.pending.clone_rows`), so
nothing runs while the table is measured. The table's update latency is bounded by the
console's refresh interval (``--interval``, 1 s by default, what a user gets); the log's
throughput is compared with downloading the same log from the same console (the page's
stream decodes, frames and renders what the download only copies).
"""

from __future__ import annotations

import http.client
import time
from typing import Any, Iterable, List, Tuple

from tests.bench.context import Context
from tests.bench.core import Figure
from tests.bench.pending import clone_rows, submit

SIZES = (1000, 10000)
#: The log streamed to the page, in MiB (lines of 100 bytes).
LOG_MIB = 32
WRITE_LOG = ("#!/bin/sh\npython3 -c 'import sys\nline = \"y\" * 99 + \"\\n\"\n"
             "sys.stdout.write(line * ((" + str(LOG_MIB) + " << 20) // 100))'\n")


def _rows_shown(page: Any, count: int, timeout_s: float) -> None:
    page.wait_for_function(f"() => document.querySelectorAll('#job-rows tr').length >= {count}",
                           timeout=timeout_s * 1000)


def _table(ctx: Context, page: Any, console: Any, slurm: Any, count: int
           ) -> Tuple[List[float], List[float]]:
    """Seconds to the first full render (a fresh load each time), and seconds from an
    sbatch's return to its row on the page."""
    renders, updates = [], []
    for _ in range(ctx.repeats(5)):
        begun = time.perf_counter()
        page.goto(console.url)
        _rows_shown(page, count, 300)
        renders.append(time.perf_counter() - begun)
    for _ in range(ctx.repeats(7)):
        job = submit(slurm, "-H", "-o", "/dev/null", "--wrap=true")
        returned = time.perf_counter()
        page.wait_for_selector(f"#job-rows tr[data-key='{job}']", timeout=120_000)
        updates.append(time.perf_counter() - returned)
    return renders, updates


def _download_s(console: Any, path: str) -> Tuple[float, int]:
    connection = http.client.HTTPConnection("127.0.0.1", console.port, timeout=300)
    begun = time.perf_counter()
    connection.request("GET", path, headers={"Host": f"127.0.0.1:{console.port}",
                                             "Cookie": console.cookie})
    response = connection.getresponse()
    size = 0
    while True:
        piece = response.read(1 << 20)
        if not piece:
            break
        size += len(piece)
    connection.close()
    return time.perf_counter() - begun, size


def _log_stream(ctx: Context, page: Any, console: Any, slurm: Any) -> Figure:
    slurm.script("log.sh", WRITE_LOG)
    job = submit(slurm, "--wait", "-o", "big.out", "log.sh")
    size = (slurm.work / "big.out").stat().st_size
    ours, theirs = [], []
    page.goto(console.url)          # the token's URL first: it sets the cookie
    for _ in range(ctx.repeats(3)):
        page.goto(console.url.split("?")[0] + f"#/job/{job}/logs")
        page.click("#log-sources button[data-key='stdout']")
        begun = time.perf_counter()
        page.wait_for_selector("#log-view[data-ended='1']", timeout=600_000)
        elapsed = time.perf_counter() - begun
        assert int(page.get_attribute("#log-view", "data-bytes") or 0) == size
        ours.append(size / elapsed / (1 << 20))
        seconds, got = _download_s(console, f"/api/jobs/{job}/logs/stdout")
        assert got == size
        theirs.append(size / seconds / (1 << 20))
    return Figure(f"console: a {LOG_MIB} MiB log streamed to the page", "MiB/s", ours,
                  comparison="the same log downloaded from the console",
                  comparison_samples=theirs, higher_is_better=True,
                  scaling="the page keeps the last 4 MiB on screen; the download has all")


def figures(ctx: Context) -> Iterable[Figure]:
    from tests.ui.browser import open_browser, chromium_path
    from tests.ui.harness import RunningConsole

    try:
        chromium_path()
    except AssertionError as e:
        yield Figure("console: job table", "s", skipped=str(e))
        return
    results: List[Figure] = []
    for count in SIZES:
        slurm = ctx.fresh_cluster(f"console-{count}")
        console = None
        try:
            probe = submit(slurm, "-H", "-o", "/dev/null", "--wrap=true")
            clone_rows(slurm, probe, count - 1)
            console = RunningConsole(slurm.env, slurm.work)
            for context in open_browser(ctx.root / f"downloads-{count}"):
                page = context.new_page()
                renders, updates = _table(ctx, page, console, slurm, count)
                results.append(Figure(f"console: job table first render, {count:,} jobs",
                                      "s", renders, scaling="a fresh page load each time"))
                results.append(Figure(f"console: new job on the page after sbatch, "
                                      f"{count:,} jobs", "s", updates,
                                      goal="≤ the refresh interval (1 s) + 1 s",
                                      scaling="sbatch's return to the row on screen"))
                results[-1].goal_met = max(updates) <= 2.0
                if count == SIZES[0]:
                    results.append(_log_stream(ctx, page, console, slurm))
        finally:
            if console is not None:
                console.stop()
            slurm.cleanup()
    yield from results


if __name__ == "__main__":   # python -m tests.bench.console: these figures alone
    import sys

    from tests.bench.__main__ import main

    sys.exit(main(["--only", "console", "--no-real-slurm"] + sys.argv[1:]))
