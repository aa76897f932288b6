"""The console's resource charts on the Kubernetes backend (emulated API server, test
kubelet): the usage node 0 publishes into the job's record while a two-node step burns a core
on each node becomes a series per node, as on the local backend (tests/ui/test_api.py)."""

from __future__ import annotations

import time
from typing import Any, Dict, List

import pytest

from tests.kube.harness import KubeSlurm, submit
from tests.ui.harness import RunningConsole, burn_script, wait_for
# Fixtures of other modules (taken by name through ``request``):
from tests.kube.test_dependencies import account_kube  # noqa: F401

pytestmark = pytest.mark.slow

#: One task a node, each holding ~100 MB and burning a core for a few seconds (two burners,
#: the API server, the kubelet and the console share this machine's cores: a busy node's
#: points read well above :data:`BUSY_CPU`, an idle one's near 0).
BURN = burn_script(12, "#SBATCH -N2 --ntasks-per-node=1 --acctg-freq=1\n", "srun")
BUSY_CPU = 10


def test_charts_of_a_two_node_job_from_its_published_usage(request: pytest.FixtureRequest,
                                                           kubelet: Any) -> None:
    kube: KubeSlurm = request.getfixturevalue("account_kube")
    kube.script("burn.sh", BURN)
    console = RunningConsole(kube.env, kube.work, "--interval", "0.5")
    try:
        job = submit(kube, "burn.sh")

        def state() -> str:
            return str(console.get(f"/api/jobs/{job}")["state"])
        wait_for(lambda: state() == "RUNNING", timeout=120)
        series: Dict[str, List[Any]] = {}
        while state() == "RUNNING":
            samples = console.get(f"/api/jobs/{job}/samples")
            if samples.get("available") is not False:
                series = {s["node"]: s["points"] for s in samples["series"]}
            time.sleep(0.5)
        # A series over time for both nodes, each with a busy point (more on a quiet
        # machine; under load the API server may publish only a few of the samples).
        busy = {node: [v for _, v in points if v.get("cpu", 0) > BUSY_CPU and v["rss_mb"] > 50]
                for node, points in series.items()}
        assert len(series) == 2 and all(len(p) >= 2 for p in series.values()), series
        assert all(busy.values()), series
    finally:
        console.stop()
