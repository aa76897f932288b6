"""Fixtures of the Kubernetes suite: an API server (emulated, or real with
``--with-kube-apiserver``), the test kubelet, and the commands pointed at them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator, List

import pytest

from tests.kube import harness
from tests.kube.harness import KubeSlurm


def pytest_configure(config: pytest.Config) -> None:
    """On real nodes every test's partitions are pointed at them (:mod:`.real_nodes`)."""
    if config.getoption("--with-real-node", default=False):
        from tests.kube.real_nodes import on_real_nodes

        harness.CONFIG_FILTER = on_real_nodes


def real_nodes(request: pytest.FixtureRequest) -> bool:
    """Whether this run is on real nodes (``--with-real-node``)."""
    return bool(request.config.getoption("--with-real-node"))


@pytest.fixture(scope="session")
def real_target_crds(request: pytest.FixtureRequest) -> List[str]:
    """On the real server: the JobSet, PyTorchJob and MPIJob CRDs, installed once per run
    (the emulated server serves these kinds from the start)."""
    from tests.kube.real_cluster import install_target_crds
    from tests.kube.real_nodes import kubeconfig

    return install_target_crds(kubeconfig() if real_nodes(request) else
                               os.environ["KUBECONFIG"])


@pytest.fixture
def cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """The API server the tests talk to: a fresh emulated one, or with
    ``--with-kube-apiserver`` a namespace of its own on the real one of ``$KUBECONFIG``."""
    if request.config.getoption("--with-kube-apiserver") or real_nodes(request):
        from tests.kube.real_nodes import kubeconfig as real_kubeconfig

        kubeconfig = real_kubeconfig() if real_nodes(request) else os.environ.get("KUBECONFIG")
        if not kubeconfig or not os.path.exists(kubeconfig):
            pytest.skip("a real API server needs $KUBECONFIG")
        from tests.kube.real_cluster import RealCluster

        request.getfixturevalue("real_target_crds")
        real = RealCluster(kubeconfig, str(tmp_path)).start()
        try:
            yield real
        finally:
            real.stop()
        return
    from tests.apiserver import EmulatedCluster

    with EmulatedCluster() as emulated:
        yield emulated


@pytest.fixture
def kubelet(request: pytest.FixtureRequest, cluster: Any) -> Iterator[Any]:
    """Two Ready nodes whose pods run on this machine (the real nodes with
    ``--with-real-node``)."""
    from tests.kubelet import TestKubelet

    if real_nodes(request):
        from tests.kube.real_nodes import RealNodes

        nodes = RealNodes(cluster)
        if not nodes.node_names:
            pytest.skip("no Ready real node: start ../shared/tools/real-node")
        with nodes:
            yield nodes
        return

    with TestKubelet(cluster.kubeconfig, nodes=2) as running:
        yield running
        if hasattr(cluster, "drain"):          # a real server: its pods end while we run
            cluster.drain()


def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    """On real nodes, the tests that need a fault only the test kubelet makes are skipped."""
    if not config.getoption("--with-real-node", default=False):
        return
    skip = pytest.mark.skip(reason="breaks what only the test kubelet lets a test break "
                                   "(its log connections): not on real nodes")
    for item in items:
        if item.get_closest_marker("test_kubelet_only"):
            item.add_marker(skip)


@pytest.fixture
def kube(request: pytest.FixtureRequest, cluster: Any, tmp_path: Path) -> Iterator[KubeSlurm]:
    """The commands of this checkout, pointed at ``cluster`` (on real nodes, a test marked
    ``unshared`` gets partitions without its directory as a volume)."""
    slurm = KubeSlurm(tmp_path, cluster.kubeconfig,
                      unshared=request.node.get_closest_marker("unshared") is not None)
    yield slurm
    slurm.cleanup()
