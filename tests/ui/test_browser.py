"""The console in headless Chromium on the local backend: a user's whole session.

Submit from the page (lint as one types), watch the job go PD -> R -> CD in the live
table, read node 1's log while it is written, search it, download it and all logs, cancel
another job after a confirmation (declined once), see a refused action in Slurm's words,
and the cluster as sinfo. Each page's screenshot is saved under the test's directory
(``screenshots/``) once its key elements are on it.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.local.harness import LocalSlurm, job_id_of
from tests.ui.browser import WATCH_STATES, confirm, open_browser, shoot, wait_for_text
from tests.ui.harness import RunningConsole, burn_script, node1_script

pytestmark = pytest.mark.slow

#: Node 1's task writes this many lines, one a second, the last only once the test saw the
#: job run (its stop file): it is read while it runs, however slow the machine.
LOG_LINES = 6

@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    yield from open_browser(tmp_path / "downloads")


def test_a_user_s_session_in_the_browser(slurm: LocalSlurm, console: RunningConsole,
                                         browser: Any, tmp_path: Path) -> None:
    shots = tmp_path / "screenshots"
    stop = slurm.work / "node1.stop"
    jobs_tab = browser.new_page()
    jobs_tab.goto(console.url)
    shoot(jobs_tab, shots, "jobs-empty", ["#jobs thead th[data-key='job']", "#filters",
                                          "#job-count"])
    assert jobs_tab.locator("#who").inner_text().startswith(slurm.env.get("USER", "")
                                                            or "")

    # Submit: the script pasted, a name and --hold chosen; lint answers as one types.
    page = browser.new_page()
    page.goto(console.url.split("?")[0] + "#/submit")
    page.fill("#script", node1_script(LOG_LINES, stop))
    page.fill("#script-name", "two.sh")
    page.fill("#job-name", "browser-job")
    page.fill("#options", "--time=bogus")
    page.wait_for_selector("#lint[data-ok='0']")
    assert "invalid" in page.inner_text("#lint").lower()
    page.fill("#options", "--hold")
    page.wait_for_selector("#lint[data-ok='1']")
    assert "--hold" in page.inner_text("#lint")
    shoot(page, shots, "submit", ["#script", "#lint", "#submit", "#partition"])
    page.click("#submit")
    link = page.locator("#submit-result a")
    link.wait_for()
    job = link.inner_text()
    assert page.inner_text("#submit-result").startswith(f"Submitted batch job {job}")

    # The live table (filtered by name) shows it pending, with no reload.
    jobs_tab.fill("#filters input[name='names']", "browser-job")
    jobs_tab.click("#filters button[type='submit']")
    jobs_tab.wait_for_selector(f"#job-rows tr[data-key='{job}'][data-state='PENDING']")
    jobs_tab.evaluate(WATCH_STATES, job)
    shoot(jobs_tab, shots, "jobs-pending", [f"#job-rows tr[data-key='{job}']"])

    # Its page: why it waits in one sentence; a refused action in Slurm's words.
    link.click()
    page.wait_for_selector("#job-title")
    assert "PENDING (JobHeldUser)" in page.inner_text("#job-title")
    assert page.inner_text("#pending").startswith("Waiting for a release")
    confirm(page, "#act-requeue", yes=True)
    page.wait_for_selector("#action-result.error")
    assert page.inner_text("#action-result") == f"Job is pending execution for job {job}"
    shoot(page, shots, "job-pending", ["#job-title", "#pending", "#act-release", "#overview"])

    # Release (confirmed); node 1's log read while the job runs (until the stop file).
    try:
        confirm(page, "#act-release", yes=True)
        page.wait_for_selector("#action-result.ok")
        page.wait_for_selector("#steps tr[data-step='0']")
        page.click("#tab-logs")
        page.click("#log-sources button[data-key='node-1']")
        wait_for_text(page, "#log-view", "node-one line 1")
        assert "RUNNING" in page.inner_text("#job-title")
        assert "node-one line 0\nnode-one line 1\n" in page.inner_text("#log-view")
        page.fill("#log-search", "line 1")
        assert page.locator("#log-view mark").first.inner_text() == "line 1"
        shoot(page, shots, "job-logs", ["#log-view mark", "#log-sources", "#logs-zip"])
        jobs_tab.wait_for_selector(f"#job-rows tr[data-key='{job}'][data-state='RUNNING']")
    finally:
        stop.touch()
    page.fill("#log-search", "")
    page.wait_for_selector("#log-view[data-ended='1']")
    lines = "".join(f"node-one line {i}\n" for i in range(LOG_LINES))
    assert page.locator("#log-view").text_content() == lines

    # The table saw it PD -> R -> CD.
    jobs_tab.wait_for_selector(f"#job-rows tr[data-key='{job}'][data-state='COMPLETED']")
    assert jobs_tab.evaluate("window.seenStates") == ["PENDING", "RUNNING", "COMPLETED"]
    shoot(jobs_tab, shots, "jobs-completed", [f"#job-rows tr[data-key='{job}']"])

    # Downloads: node 1's log exactly, then all logs as one zip.
    with page.expect_download() as one:
        page.click("#log-download")
    assert Path(one.value.path()).read_text() == lines
    with page.expect_download() as every:
        page.click("#logs-zip")
    archive = zipfile.ZipFile(io.BytesIO(Path(every.value.path()).read_bytes()))
    out = (slurm.work / f"slurm-{job}.out").read_bytes()
    assert archive.read(f"job-{job}/slurm-{job}.out") == out == b"batch starts\nbatch ends\n"
    assert archive.read(f"job-{job}/node-1.log").decode() == lines
    assert f"job-{job}/node-0.log" in archive.namelist()

    # The other tabs of the finished job.
    page.click("#tab-events")
    page.wait_for_selector("#events tbody tr")
    assert "Submitted" in page.inner_text("#events")
    shoot(page, shots, "job-events", ["#events"])
    page.click("#tab-script")
    assert page.locator("#script").text_content() == node1_script(LOG_LINES, stop)
    shoot(page, shots, "job-script", ["#script"])
    page.click("#tab-yaml")
    assert "job_name: browser-job" in page.locator("#yaml").text_content()
    shoot(page, shots, "job-yaml", ["#yaml"])
    page.click("#tab-resources")
    page.wait_for_selector("#charts svg.chart[data-measure='cpu']")
    assert page.locator("#charts svg.chart[data-measure='rss_mb']").count() == 1
    assert "No GPU utilisation was measured" in page.inner_text("#charts")
    shoot(page, shots, "job-resources", ["#charts"])
    page.click("#tab-overview")
    page.wait_for_selector("#steps tr[data-step='batch']")
    shoot(page, shots, "job-completed", ["#steps", "#nodes", "#act-resubmit"])


def test_cancel_after_a_confirmation_and_the_cluster(slurm: LocalSlurm,
                                                     console: RunningConsole, browser: Any,
                                                     tmp_path: Path) -> None:
    shots = tmp_path / "screenshots"
    slurm.script("busy.sh", "#!/bin/sh\n#SBATCH -N 2\nsrun sleep 300\n")
    job = str(job_id_of(slurm.run("sbatch", "busy.sh").stdout))
    page = browser.new_page()
    page.goto(console.url)
    page.goto(console.url.split("?")[0] + f"#/job/{job}")
    page.wait_for_selector("#steps tr[data-step='0']")
    confirm(page, "#act-cancel", yes=False)
    assert page.inner_text("#action-result") == ""
    assert slurm.run("squeue", "-h", "-j", job, "-o", "%T").stdout == "RUNNING\n"

    page.goto(console.url.split("?")[0] + "#/cluster")
    page.wait_for_selector(f".node[data-node='127.0.0.2'] a[href='#/job/{job}']")
    assert page.locator("#sinfo").text_content() == slurm.run("sinfo").stdout
    shoot(page, shots, "cluster", ["#sinfo", "#partitions .node", ".node .bar"])

    page.click(f".node[data-node='127.0.0.2'] a[href='#/job/{job}']")
    page.wait_for_selector("#act-cancel")
    confirm(page, "#act-cancel", yes=True)
    page.wait_for_selector("#action-result.ok")
    wait_for_text(page, "#job-title", "CANCELLED")
    sacct = slurm.run("sacct", "-j", job, "-X", "-n", "-P", "-o", "State").stdout
    assert sacct.startswith("CANCELLED by "), sacct
    shoot(page, shots, "job-cancelled", ["#job-title", "#act-resubmit"])


def test_a_running_job_s_resource_charts(slurm: LocalSlurm, console: RunningConsole,
                                         browser: Any, tmp_path: Path) -> None:
    """A job burning a core with 100 MB, sampled every second: while it runs, its page's
    Resources tab draws a CPU and a memory line for node 0 that grow a point at a time, and
    says in one line that no GPU utilisation was measured."""
    stop = slurm.work / "burn.stop"
    slurm.script("burn.sh", burn_script(stop))
    try:        # it burns until told to stop
        job = str(job_id_of(slurm.run("sbatch", "--acctg-freq=1", "burn.sh").stdout))
        page = browser.new_page()
        page.goto(console.url)
        page.goto(console.url.split("?")[0] + f"#/job/{job}/resources")
        line = "#charts svg.chart[data-measure='cpu'] path[data-node='127.0.0.2']"
        page.wait_for_function("line => (document.querySelector(line)?.getAttribute('d') ?? '')"
                               ".split('L').length >= 3", arg=line)       # three points or more
        assert "RUNNING" in page.inner_text("#job-title")
        assert page.locator("#charts svg.chart[data-measure='rss_mb']").count() == 1
        assert page.locator("#charts svg.chart[data-measure^='gpu']").count() == 0   # no GPU
        assert "No GPU utilisation was measured" in page.inner_text("#charts")
        assert "No GPU memory was seen" in page.inner_text("#charts")
        assert page.inner_text("#chart-nodes").split() == ["\u2014", "127.0.0.2"]
        shoot(page, tmp_path / "screenshots", "job-resources-running", [line, "#chart-nodes"])
    finally:
        stop.touch()


def test_a_page_left_while_it_loads_never_shows(slurm: LocalSlurm, console: RunningConsole,
                                                browser: Any) -> None:
    """Job A's page still waiting for A's record when the user opens job B's: B's page
    alone shows, A's never appears beside it once its record arrives (the jobs list's
    page and a quick second hash change raced the same way: two pages, doubled charts)."""
    slurm.script("held.sh", "#!/bin/sh\ntrue\n")
    first, second = (str(job_id_of(slurm.run("sbatch", "--hold", "held.sh").stdout))
                     for _ in range(2))
    page = browser.new_page()
    held: list = []
    page.route(f"**/api/jobs/{first}", lambda route: held.append(route))   # A waits
    base = console.url.split("?")[0]
    page.goto(console.url)
    with page.expect_request(f"**/api/jobs/{first}"):
        page.goto(f"{base}#/job/{first}")
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(50)
    page.goto(f"{base}#/job/{second}")
    wait_for_text(page, "#job-title", f"Job {second} ")
    with page.expect_request(f"**/api/jobs/{first}/nodes"):    # A's page went on loading
        held[0].continue_()
    assert page.locator("#job-title").count() == 1
    assert page.inner_text("#job-title").startswith(f"Job {second} ")
    slurm.run("scancel", first, second)
