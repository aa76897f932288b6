"""The opt-in RBAC authorizer: Roles and bindings decide what users other than the admin do."""

from __future__ import annotations

from typing import Any, Dict

import pytest
from kubernetes import client

from tests.apiserver import EmulatedCluster
from tests.apiserver.conftest import status_of
from tests.apiserver.rbac import RuleRef

RBAC = "rbac.authorization.k8s.io"


def _create(cluster: EmulatedCluster, plural: str, body: Dict[str, Any],
            namespace: str = "default") -> None:
    api = client.CustomObjectsApi(cluster.api_client())
    if plural.startswith("cluster"):
        api.create_cluster_custom_object(RBAC, "v1", plural, body)
    else:
        api.create_namespaced_custom_object(RBAC, "v1", namespace, plural, body)


def _forbidden(call: Any, *args: Any) -> str:
    with pytest.raises(client.ApiException) as caught:
        call(*args)
    assert caught.value.status == 403
    return str(status_of(caught.value)["message"])


@pytest.fixture
def rbac_cluster() -> Any:
    with EmulatedCluster(namespaces=("default", "other"), rbac=True) as running:
        yield running


def test_off_by_default(cluster: EmulatedCluster) -> None:
    token = cluster.add_user("alice")
    assert cluster.rbac is None
    client.CoreV1Api(cluster.api_client(token)).list_namespaced_pod("default")


def test_role_binding_grants_in_its_namespace(rbac_cluster: EmulatedCluster) -> None:
    core = client.CoreV1Api(rbac_cluster.api_client(rbac_cluster.add_user("alice")))
    assert _forbidden(core.list_namespaced_pod, "default") == (
        'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the '
        'namespace "default"')
    _create(rbac_cluster, "roles", {"metadata": {"name": "reader"}, "rules": [
        {"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list"]},
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"],
         "resourceNames": ["mine"]}]})
    _create(rbac_cluster, "rolebindings", {
        "metadata": {"name": "alice-reader"},
        "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "reader"},
        "subjects": [{"kind": "User", "name": "alice"}]})
    assert core.list_namespaced_pod("default").items == []
    assert _forbidden(core.list_namespaced_pod, "other").endswith('namespace "other"')
    assert _forbidden(core.delete_namespaced_pod, "p", "default") == (
        'pods "p" is forbidden: User "alice" cannot delete resource "pods" in API group "" '
        'in the namespace "default"')
    assert "cannot list resource \"configmaps\"" in _forbidden(
        core.list_namespaced_config_map, "default")   # resourceNames: never a list
    with pytest.raises(client.ApiException) as caught:
        core.read_namespaced_config_map("mine", "default")
    assert caught.value.status == 404                  # allowed, then not found
    assert 'cannot get resource "configmaps"' in _forbidden(
        core.read_namespaced_config_map, "yours", "default")
    rbac = rbac_cluster.rbac
    assert rbac is not None
    assert rbac.unused("Role/default/reader", [
        {"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list"]}]) == [
        ("", "pods", "get"), ("", "pods/log", "get"), ("", "pods/log", "list")]
    assert any(RuleRef("Role/default/reader", 1) in d.allowed_by for d in rbac.decisions)


def test_subresource_needs_its_own_rule(rbac_cluster: EmulatedCluster) -> None:
    core = client.CoreV1Api(rbac_cluster.api_client(rbac_cluster.add_user("bob")))
    _create(rbac_cluster, "clusterroles", {"metadata": {"name": "pod-reader"}, "rules": [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["*"]}]})
    _create(rbac_cluster, "rolebindings", {
        "metadata": {"name": "bob"}, "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole",
                                                 "name": "pod-reader"},
        "subjects": [{"kind": "User", "name": "bob"}]}, namespace="other")
    core.list_namespaced_pod("other")
    assert _forbidden(core.list_namespaced_pod, "default").endswith('namespace "default"')
    assert _forbidden(core.read_namespaced_pod_log, "p", "other") == (
        'pods "p" is forbidden: User "bob" cannot get resource "pods/log" in API group "" in '
        'the namespace "other"')


def test_cluster_role_binding_and_service_account(rbac_cluster: EmulatedCluster) -> None:
    admin = client.CoreV1Api(rbac_cluster.api_client())
    admin.create_namespaced_service_account("other", {"metadata": {"name": "robot"}})
    token = admin.create_namespaced_service_account_token(
        "robot", "other", {"spec": {}}).status.token
    robot = client.CoreV1Api(rbac_cluster.api_client(token))
    assert _forbidden(robot.list_node) == (
        'nodes is forbidden: User "system:serviceaccount:other:robot" cannot list resource '
        '"nodes" in API group "" at the cluster scope')
    _create(rbac_cluster, "clusterroles", {"metadata": {"name": "nodes"}, "rules": [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}]})
    _create(rbac_cluster, "clusterrolebindings", {
        "metadata": {"name": "robots"}, "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole",
                                                    "name": "nodes"},
        "subjects": [{"kind": "Group", "name": "system:serviceaccounts:other"}]})
    robot.list_node()
    _create(rbac_cluster, "roles", {"metadata": {"name": "sa"}, "rules": [
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}]}, namespace="other")
    _create(rbac_cluster, "rolebindings", {   # no subject namespace: the binding's
        "metadata": {"name": "sa"}, "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "sa"},
        "subjects": [{"kind": "ServiceAccount", "name": "robot"}]}, namespace="other")
    robot.list_namespaced_secret("other")
    assert rbac_cluster.rbac is not None and len(rbac_cluster.rbac.refused()) == 1
