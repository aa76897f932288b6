"""Project-wide pytest options."""

from __future__ import annotations

import os

import pytest

from parsers.own_variables import adopt_former_names

# The settings a user (or a shared tool's env.sh) exports under their former SBATCH_K8S_
# names count as the commands count them, for tests that read them too.
adopt_former_names(os.environ)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens", action="store_true", default=False,
        help="rewrite the expected outputs of the golden cases (tests/cases) instead of "
             "comparing against them")
    parser.addoption(
        "--with-real-slurm", action="store_true", default=False,
        help="run the conformance suite (tests/conformance): start the real Slurm 22.05 of "
             "../shared/tools/real-slurm and compare its commands' output with ours")
    parser.addoption(
        "--with-real-node", action="store_true", default=False,
        help="run tests/kube on real nodes: the real kubelets, containerd and cluster DNS of "
             "../shared/tools/real-node joined to the real API server of $KUBECONFIG "
             "(default /tmp/k8s-real/kubeconfig); every partition is pointed at those nodes")
    parser.addoption(
        "--with-kube-apiserver", action="store_true", default=False,
        help="run tests/kube against the real API server of $KUBECONFIG (kube-apiserver, "
             "controller-manager and scheduler, no kubelet: the test kubelet runs the pods) "
             "instead of the emulated one")


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    """True when the run was asked to rewrite golden files (``pytest --update-goldens``)."""
    return bool(request.config.getoption("--update-goldens"))
