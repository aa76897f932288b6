"""The console in headless Chromium on a real API server (opt-in: ``--with-kube-apiserver``,
``$KUBECONFIG``): a namespace of its own, the test kubelet's two nodes with memory cgroups.

Submit from the page and watch PD -> R -> CD, node 1's pod log read live, all logs as a
zip, the job's Kubernetes objects as YAML; then an out-of-memory task: its end on the
Events tab; then a cancel after its confirmation. Screenshots under ``screenshots/``.
"""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.kube.harness import KubeSlurm
from tests.ui.browser import WATCH_STATES, confirm, open_browser, shoot, wait_for_text
from tests.ui.harness import RunningConsole, node1_script

pytestmark = pytest.mark.slow

LOG_LINES = 60
#: A real API server shared with other work answers slower than the emulated one.
CLUSTER_WAIT_MS = 180_000
OOM = r"""#!/bin/sh
#SBATCH -N1 --mem=150M -J oom
python3 -c 'a = []
while True: a.append(bytearray(20 << 20))'
"""


@pytest.fixture
def real(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A namespace of its own on the real API server, the test kubelet's nodes on it."""
    if not request.config.getoption("--with-kube-apiserver"):
        pytest.skip("opt-in: --with-kube-apiserver (a real API server of $KUBECONFIG)")
    kubeconfig = os.environ.get("KUBECONFIG", "")
    if not os.path.exists(kubeconfig):
        pytest.skip("a real API server needs $KUBECONFIG")
    from tests.kube.real_cluster import RealCluster, install_target_crds
    from tests.kubelet import TestKubelet
    from tests.kubelet.memory_cgroups import available

    if not available():
        pytest.skip("this machine offers no writable cgroup v1 memory controller")
    install_target_crds(kubeconfig)
    cluster = RealCluster(kubeconfig, str(tmp_path)).start()
    try:
        with TestKubelet(cluster.kubeconfig, nodes=2, memory_cgroups=True):
            yield cluster
            cluster.drain()
    finally:
        cluster.stop()


@pytest.fixture
def kube(real: Any, tmp_path: Path) -> Iterator[KubeSlurm]:
    slurm = KubeSlurm(tmp_path / "user", real.kubeconfig)
    yield slurm
    slurm.cleanup()


def test_a_session_on_a_real_api_server(kube: KubeSlurm, tmp_path: Path) -> None:
    shots = tmp_path / "screenshots"
    console = RunningConsole(kube.env, kube.work, "--interval", "1")
    try:
        for browser in open_browser(tmp_path / "downloads"):
            browser.set_default_timeout(CLUSTER_WAIT_MS)
            try:
                _session(browser, console, kube, shots)
            except Exception:
                for number, page in enumerate(browser.pages):   # what each page showed
                    page.screenshot(path=str(tmp_path / f"failed-{number}.png"),
                                    full_page=True)
                raise
    finally:
        console.stop()


def _session(browser: Any, console: RunningConsole, kube: KubeSlurm, shots: Path) -> None:
    base = console.url.split("?")[0]
    jobs_tab = browser.new_page()
    jobs_tab.goto(console.url)
    page = browser.new_page()
    page.goto(base + "#/submit")
    page.fill("#script", node1_script(LOG_LINES))
    page.fill("#job-name", "kube-browser")
    page.wait_for_selector("#lint[data-ok='1']")
    page.click("#submit")
    link = page.locator("#submit-result a")
    link.wait_for()
    job = link.inner_text()
    jobs_tab.fill("#filters input[name='names']", "kube-browser")
    jobs_tab.click("#filters button[type='submit']")
    jobs_tab.wait_for_selector(f"#job-rows tr[data-key='{job}']")
    jobs_tab.evaluate(WATCH_STATES, job)

    link.click()
    wait_for_text(page, "#job-title", "RUNNING", 300_000)
    page.click("#tab-logs")
    page.click("#log-sources button[data-key='node-1']")
    wait_for_text(page, "#log-view", "node-one line 1", 120_000)
    assert "RUNNING" in page.inner_text("#job-title")
    shoot(page, shots, "kube-job-logs", ["#log-view", "#log-sources"])
    page.wait_for_selector("#log-view[data-ended='1']", timeout=180_000)
    assert "".join(f"node-one line {i}\n" for i in range(LOG_LINES)) in \
        page.locator("#log-view").text_content()
    jobs_tab.wait_for_selector(f"#job-rows tr[data-key='{job}'][data-state='COMPLETED']",
                               timeout=180_000)
    seen = jobs_tab.evaluate("window.seenStates")
    assert seen[-2:] == ["RUNNING", "COMPLETED"] and seen[0] in ("PENDING", "RUNNING"), seen
    with page.expect_download() as every:
        page.click("#logs-zip")
    archive = zipfile.ZipFile(io.BytesIO(Path(every.value.path()).read_bytes()))
    assert f"job-{job}/slurm-{job}.out" in archive.namelist()
    assert "node-one line 0" in archive.read(f"job-{job}/node-1.log").decode()
    page.click("#tab-yaml")
    yaml_text = page.locator("#yaml").text_content()
    assert "kind: " in yaml_text and f"sbatch-k8s.io/job-id: '{job}'" in yaml_text or \
        f'sbatch-k8s.io/job-id: "{job}"' in yaml_text, yaml_text[:2000]
    shoot(page, shots, "kube-job-yaml", ["#yaml"])

    # An out-of-memory task: its end on the Events tab.
    kube.script("oom.sh", OOM)
    oom = kube.run("sbatch", "oom.sh").stdout.split()[-1]
    page.goto(base + f"#/job/{oom}/events")
    wait_for_text(page, "#job-title", "OUT_OF_MEMORY", 300_000)
    page.click("#tab-events")
    wait_for_text(page, "#events", "OOMKilled|OUT_OF_MEMORY")
    shoot(page, shots, "kube-oom-events", ["#events"])

    # Cancel after its confirmation.
    kube.script("sleepy.sh", "#!/bin/sh\n#SBATCH -N2\nsrun sleep 300\n")
    sleepy = kube.run("sbatch", "sleepy.sh").stdout.split()[-1]
    page.goto(base + f"#/job/{sleepy}")
    page.wait_for_selector("#act-cancel")
    confirm(page, "#act-cancel", yes=True)
    page.wait_for_selector("#action-result.ok")
    wait_for_text(page, "#job-title", "CANCELLED", 120_000)
    shoot(page, shots, "kube-cancelled", ["#job-title"])
