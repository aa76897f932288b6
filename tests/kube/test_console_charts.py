"""The console's resource charts on the Kubernetes backend (emulated API server, test
kubelet): the usage node 0 publishes into the job's record while a two-node step burns a core
on each node becomes a series per node, as on the local backend (tests/ui/test_api.py)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import pytest

from tests.kube.harness import KubeSlurm, submit
from tests.ui.harness import RunningConsole, burn_script, wait_for
# Fixtures of other modules (taken by name through ``request``):
from tests.kube.test_dependencies import account_kube  # noqa: F401

pytestmark = pytest.mark.slow

#: One task a node, each holding ~100 MB and burning a core (two burners, the API server, the
#: kubelet and the console share this machine's cores: a busy node's points read well above
#: :data:`BUSY_CPU`, an idle one's near 0).
HEADER = "#SBATCH -N2 --ntasks-per-node=1 --acctg-freq=1\n"
BUSY_CPU = 10


def test_charts_of_a_two_node_job_from_its_published_usage(request: pytest.FixtureRequest,
                                                           kubelet: Any) -> None:
    kube: KubeSlurm = request.getfixturevalue("account_kube")
    stop = kube.work / "burn.stop"
    kube.script("burn.sh", burn_script(stop, header=HEADER, launcher="srun"))
    console = RunningConsole(kube.env, kube.work, "--interval", "0.5")
    try:
        job = submit(kube, "burn.sh")

        def state() -> str:
            return str(console.get(f"/api/jobs/{job}")["state"])
        wait_for(lambda: state() == "RUNNING", timeout=120)

        def series() -> Dict[str, List[Any]]:
            samples = console.get(f"/api/jobs/{job}/samples")
            return ({} if samples.get("available") is False else
                    {s["node"]: s["points"] for s in samples["series"]})

        def busy_on_both() -> Optional[Dict[str, List[Any]]]:
            now = series()
            busy = [[v for _, v in points if v.get("cpu", 0) > BUSY_CPU and v["rss_mb"] > 50]
                    for points in now.values()]
            return now if len(busy) == 2 and all(len(b) >= 2 for b in busy) else None
        # While the job runs (it burns until told to stop): a series over time for both
        # nodes, each with busy points.
        seen = wait_for(busy_on_both, timeout=120, interval=0.5)
        assert state() == "RUNNING", seen
        stop.touch()
        wait_for(lambda: state() == "COMPLETED", timeout=120)
    finally:
        stop.touch()
        console.stop()
