"""Fixtures of the Kubernetes suite: an API server (emulated, or real with
``--with-kube-apiserver``), the test kubelet, and the commands pointed at them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.kube.harness import KubeSlurm


class _RealCluster:
    """The API server of ``$KUBECONFIG``, shaped like the emulated cluster's handle."""

    def __init__(self, kubeconfig: str) -> None:
        self.kubeconfig = kubeconfig
        self.faults = None


@pytest.fixture
def cluster(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The API server the tests talk to."""
    if request.config.getoption("--with-kube-apiserver"):
        kubeconfig = os.environ.get("KUBECONFIG")
        if not kubeconfig:
            pytest.skip("--with-kube-apiserver needs $KUBECONFIG")
        yield _RealCluster(kubeconfig)
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


@pytest.fixture
def kube(cluster: Any, tmp_path: Path) -> Iterator[KubeSlurm]:
    """The commands of this checkout, pointed at ``cluster``."""
    slurm = KubeSlurm(tmp_path, cluster.kubeconfig)
    yield slurm
    slurm.cleanup()
