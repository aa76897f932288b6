"""Who is asking, and what the emulated server's admission says: SelfSubjectReview, tokens
bound to pods, immutable ConfigMaps and Secrets, and stored ValidatingAdmissionPolicies
(answers shaped as a real v1.28 server's, checked there)."""

from __future__ import annotations

from typing import Any, Dict

import pytest
from kubernetes import client

from tests.apiserver import EmulatedCluster

REVIEW = "/apis/authentication.k8s.io/v1/selfsubjectreviews"


def _kube(cluster: EmulatedCluster, token: str) -> Any:
    from sbatch_k8s.backends.kubernetes.api.client import KubeClient, Target

    return KubeClient(cluster.api_client(token), Target(cluster.url, "c", "default"), 0.0)


@pytest.fixture(scope="module")
def cluster() -> Any:
    with EmulatedCluster(controllers=False) as emulated:
        yield emulated


def test_self_subject_review_says_who_and_in_which_groups(cluster: EmulatedCluster) -> None:
    token = cluster.access.add_user("alice", groups=["team"])
    answer = _kube(cluster, token).request("POST", REVIEW, body={
        "apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    assert answer["status"]["userInfo"] == {
        "username": "alice", "groups": ["team", "system:authenticated"]}
    admin = _kube(cluster, cluster.token).request("POST", REVIEW, body={})
    assert "system:masters" in admin["status"]["userInfo"]["groups"]


def test_a_token_bound_to_a_pod_names_it(cluster: EmulatedCluster) -> None:
    core = client.CoreV1Api(cluster.api_client())
    core.create_namespaced_service_account("default", {"metadata": {"name": "runner"}})
    pod = core.create_namespaced_pod("default", {
        "metadata": {"name": "p-0"},
        "spec": {"containers": [{"name": "c", "image": "x"}]}})
    token = core.create_namespaced_service_account_token("runner", "default", {"spec": {
        "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p-0",
                           "uid": pod.metadata.uid}}}).status.token
    info = _kube(cluster, token).request("POST", REVIEW, body={})["status"]["userInfo"]
    assert info["username"] == "system:serviceaccount:default:runner"
    assert info["extra"] == {"authentication.kubernetes.io/pod-name": ["p-0"],
                             "authentication.kubernetes.io/pod-uid": [pod.metadata.uid]}
    with pytest.raises(client.ApiException) as missing:
        core.create_namespaced_service_account_token("runner", "default", {"spec": {
            "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "gone"}}})
    assert missing.value.status == 404


@pytest.mark.parametrize("kind", ["ConfigMap", "Secret"])
def test_immutable_data_never_changes(cluster: EmulatedCluster, kind: str) -> None:
    from sbatch_k8s.backends.kubernetes.api.client import KubeError
    from sbatch_k8s.backends.kubernetes.api.kinds import CONFIG_MAP, SECRET

    table = CONFIG_MAP if kind == "ConfigMap" else SECRET
    api = _kube(cluster, cluster.token)
    name = f"frozen-{kind.lower()}"
    api.create({"apiVersion": "v1", "kind": kind, "metadata": {"name": name},
                "immutable": True, "data": {"a": "Yg=="}}, "default")
    api.merge_patch(table, name, "default", {"metadata": {"labels": {"ok": "yes"}}})
    with pytest.raises(KubeError) as refused:
        api.merge_patch(table, name, "default", {"data": {"a": "Yw=="}})
    assert (refused.value.status, str(refused.value)) == (
        422, f'{kind} "{name}" is invalid: data: Forbidden: field is immutable when '
             "`immutable` is set")


def _policy(expression: str, **validation: str) -> Dict[str, Any]:
    return {"apiVersion": "admissionregistration.k8s.io/v1beta1",
            "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "only-mine"},
            "spec": {"matchConstraints": {"resourceRules": [{
                "apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                "resources": ["configmaps"]}], "objectSelector": {
                    "matchLabels": {"checked": "yes"}}},
                "validations": [dict(expression=expression, **validation)]}}


def test_a_policy_denies_as_a_real_server(cluster: EmulatedCluster) -> None:
    from sbatch_k8s.backends.kubernetes.api.client import KubeError
    from sbatch_k8s.backends.kubernetes.api.kinds import CONFIG_MAP

    admin = _kube(cluster, cluster.token)
    base = "/apis/admissionregistration.k8s.io/v1beta1"
    admin.request("POST", f"{base}/validatingadmissionpolicies", body=_policy(
        "object.metadata.name.startsWith(request.userInfo.username)"))
    admin.request("POST", f"{base}/validatingadmissionpolicybindings", body={
        "apiVersion": "admissionregistration.k8s.io/v1beta1",
        "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "only-mine-b"},
        "spec": {"policyName": "only-mine", "validationActions": ["Deny"]}})
    bob = _kube(cluster, cluster.access.add_user("bob"))

    def cm(name: str, checked: str = "yes") -> Dict[str, Any]:
        return {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "labels": {"checked": checked}}}
    bob.create(cm("bob-1"), "default")
    bob.create(cm("alice-1", "no"), "default")        # not selected: not checked
    with pytest.raises(KubeError) as refused:
        bob.create(cm("alice-2"), "default")
    assert refused.value.status == 422 and refused.value.reason == "Invalid"
    assert str(refused.value) == (
        'configmaps "alice-2" is forbidden: ValidatingAdmissionPolicy \'only-mine\' with '
        "binding 'only-mine-b' denied request: failed expression: "
        "object.metadata.name.startsWith(request.userInfo.username)")
    assert admin.get(CONFIG_MAP, "alice-2", "default") is None
