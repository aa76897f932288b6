"""Bearer-token authentication, forbidden verbs, and injected faults."""

from __future__ import annotations

import time
from typing import Any

import pytest
import urllib3
from kubernetes import client, config

from tests.apiserver import EmulatedCluster
from tests.apiserver.conftest import status_of


def test_wrong_token_is_401(cluster: EmulatedCluster) -> None:
    core = client.CoreV1Api(cluster.api_client(token="wrong"))
    with pytest.raises(client.ApiException) as caught:
        core.list_namespaced_pod("default")
    assert caught.value.status == 401
    assert status_of(caught.value) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "Unauthorized", "reason": "Unauthorized", "code": 401}


def test_kubeconfig_loads(cluster: EmulatedCluster) -> None:
    api = config.new_client_from_config(config_file=cluster.kubeconfig)
    assert client.CoreV1Api(api).read_namespace("default").metadata.name == "default"
    contexts, active = config.list_kube_config_contexts(config_file=cluster.kubeconfig)
    assert active["name"] == "emulated" and active["context"]["namespace"] == "default"


def test_forbidden_has_rbac_message(cluster: EmulatedCluster, batch: Any) -> None:
    cluster.forbid(verb="create", resource="jobs", group="batch")
    with pytest.raises(client.ApiException) as caught:
        batch.create_namespaced_job("default", {"metadata": {"name": "j"}})
    assert caught.value.status == 403
    body = status_of(caught.value)
    assert body["message"] == ('jobs.batch is forbidden: User "emulated-admin" cannot create '
                               'resource "jobs" in API group "batch" in the namespace "default"')
    assert body["reason"] == "Forbidden"
    assert batch.list_namespaced_job("default").items == []


def test_forbidden_cluster_scope_named(cluster: EmulatedCluster, core: Any) -> None:
    user_token = cluster.add_user("alice")
    cluster.forbid(verb="get", resource="nodes", user="alice")
    core.create_node({"metadata": {"name": "n1"}})
    assert core.read_node("n1").metadata.name == "n1"
    alice = client.CoreV1Api(cluster.api_client(token=user_token))
    with pytest.raises(client.ApiException) as caught:
        alice.read_node("n1")
    assert status_of(caught.value)["message"] == (
        'nodes "n1" is forbidden: User "alice" cannot get resource "nodes" in API group "" '
        'at the cluster scope')


def test_fault_status_then_recovery(cluster: EmulatedCluster, core: Any) -> None:
    fault = cluster.faults.add(method="POST", path=r"/configmaps$", status=500, times=1,
                               body_message="etcd is down")
    with pytest.raises(client.ApiException) as caught:
        core.create_namespaced_config_map("default", {"metadata": {"name": "a"}})
    assert caught.value.status == 500
    assert status_of(caught.value)["message"] == "etcd is down"
    core.create_namespaced_config_map("default", {"metadata": {"name": "a"}})
    assert fault.hits == 1


def test_fault_429_has_retry_after(cluster: EmulatedCluster, core: Any) -> None:
    """urllib3 (under the client) honours Retry-After on 429 by itself, as on a real server."""
    fault = cluster.faults.add(method="GET", path="configmaps", status=429, times=1,
                               retry_after_s=0)
    cluster.requests.clear()
    assert core.list_namespaced_config_map("default").items == []
    assert fault.hits == 1 and len(cluster.requests) == 2
    raw = urllib3.PoolManager(retries=False).request(
        "GET", cluster.url + "/api/v1/namespaces/default/configmaps",
        headers={"Authorization": f"Bearer {cluster.token}"})
    assert raw.status == 200
    cluster.faults.add(method="GET", path="configmaps", status=429, times=1)
    raw = urllib3.PoolManager(retries=False).request(
        "GET", cluster.url + "/api/v1/namespaces/default/configmaps",
        headers={"Authorization": f"Bearer {cluster.token}"})
    assert raw.status == 429 and raw.headers["Retry-After"] == "1"
    assert raw.json()["reason"] == "TooManyRequests"


def test_fault_delay_trips_client_timeout(cluster: EmulatedCluster, core: Any) -> None:
    """urllib3 retries an idempotent GET 3 times, so 4 delayed answers exhaust it."""
    cluster.faults.add(path="configmaps", status=None, delay_s=30.0, times=4)
    started = time.monotonic()
    with pytest.raises(urllib3.exceptions.MaxRetryError) as caught:
        core.list_namespaced_config_map("default", _request_timeout=0.2)
    assert isinstance(caught.value.reason, urllib3.exceptions.ReadTimeoutError)
    assert time.monotonic() - started < 29.0          # no delayed answer was waited for
    assert core.list_namespaced_config_map("default").items == []


def test_fault_reset_drops_connection(cluster: EmulatedCluster, core: Any) -> None:
    cluster.faults.add(path="configmaps", reset=True, times=5)
    with pytest.raises(urllib3.exceptions.HTTPError):
        core.list_namespaced_config_map("default")


def test_requests_are_recorded(cluster: EmulatedCluster, core: Any) -> None:
    cluster.requests.clear()
    core.list_namespaced_config_map("default", label_selector="a=b")
    assert [r[:3] for r in cluster.requests] == [
        ("GET", "/api/v1/namespaces/default/configmaps", {"labelSelector": "a=b"})]
    assert cluster.requests[0].agent.startswith("OpenAPI-Generator/")  # the client's own
