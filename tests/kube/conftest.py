"""Fixtures of the Kubernetes suite: an API server (emulated, or real with
``--with-kube-apiserver``), the test kubelet, and the commands pointed at them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator, List

import pytest

from tests.kube.harness import KubeSlurm


@pytest.fixture(scope="session")
def real_target_crds() -> List[str]:
    """On the real server: the JobSet, PyTorchJob and MPIJob CRDs, installed once per run
    (the emulated server serves these kinds from the start)."""
    from tests.kube.real_cluster import install_target_crds

    return install_target_crds(os.environ["KUBECONFIG"])


@pytest.fixture
def cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """The API server the tests talk to: a fresh emulated one, or with
    ``--with-kube-apiserver`` a namespace of its own on the real one of ``$KUBECONFIG``."""
    if request.config.getoption("--with-kube-apiserver"):
        kubeconfig = os.environ.get("KUBECONFIG")
        if not kubeconfig:
            pytest.skip("--with-kube-apiserver needs $KUBECONFIG")
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
def kubelet(cluster: Any) -> Iterator[Any]:
    """Two Ready nodes whose pods run on this machine."""
    from tests.kubelet import TestKubelet

    with TestKubelet(cluster.kubeconfig, nodes=2) as running:
        yield running
        if hasattr(cluster, "drain"):          # a real server: its pods end while we run
            cluster.drain()


@pytest.fixture
def kube(cluster: Any, tmp_path: Path) -> Iterator[KubeSlurm]:
    """The commands of this checkout, pointed at ``cluster``."""
    slurm = KubeSlurm(tmp_path, cluster.kubeconfig)
    yield slurm
    slurm.cleanup()
