"""Fixtures: a fresh emulated cluster per test and typed clients of the real ``kubernetes``."""

from __future__ import annotations

from typing import Any, Iterator

import importlib.util

import pytest

from tests.apiserver import EmulatedCluster

if importlib.util.find_spec("kubernetes") is None:  # the suite needs the real client
    collect_ignore_glob = ["test_*.py"]
else:
    import kubernetes


@pytest.fixture
def cluster() -> Iterator[EmulatedCluster]:
    """A running emulated control plane (namespaces ``default`` and ``other``)."""
    with EmulatedCluster(namespaces=("default", "other")) as running:
        yield running


@pytest.fixture
def bare_cluster() -> Iterator[EmulatedCluster]:
    """An API server without control loops."""
    with EmulatedCluster(controllers=False) as running:
        yield running


@pytest.fixture
def core(cluster: EmulatedCluster) -> Any:
    """``CoreV1Api`` of ``cluster``."""
    return kubernetes.client.CoreV1Api(cluster.api_client())


@pytest.fixture
def batch(cluster: EmulatedCluster) -> Any:
    """``BatchV1Api`` of ``cluster``."""
    return kubernetes.client.BatchV1Api(cluster.api_client())


@pytest.fixture
def custom(cluster: EmulatedCluster) -> Any:
    """``CustomObjectsApi`` of ``cluster``."""
    return kubernetes.client.CustomObjectsApi(cluster.api_client())


def status_of(error: Any) -> Any:
    """The decoded ``kind: Status`` body of an ``ApiException``."""
    import json
    return json.loads(error.body)
