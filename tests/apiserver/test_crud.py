"""Create, get, list, update and delete through the real client, with real error shapes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client

from tests.apiserver import EmulatedCluster
from tests.apiserver.conftest import status_of


def cm(name: str, **labels: str) -> dict:
    return {"metadata": {"name": name, "labels": labels}, "data": {"k": "v"}}


def test_version_and_discovery(cluster: EmulatedCluster) -> None:
    api = cluster.api_client()
    info = client.VersionApi(api).get_code()
    assert (info.git_version, info.major, info.minor) == ("v1.29.0", "1", "29")
    groups = {g.name for g in client.ApisApi(api).get_api_versions().groups}
    assert {"batch", "jobset.x-k8s.io", "kubeflow.org", "apiextensions.k8s.io"} <= groups
    names = {r.name for r in client.BatchV1Api(api).get_api_resources().resources}
    assert {"jobs", "jobs/status"} <= names
    core_names = {r.name for r in client.CoreV1Api(api).get_api_resources().resources}
    assert {"pods", "pods/status", "pods/binding", "nodes", "namespaces"} <= core_names


def test_create_sets_server_metadata(core: Any) -> None:
    first = core.create_namespaced_config_map("default", cm("a"))
    second = core.create_namespaced_config_map("default", cm("b"))
    assert first.metadata.uid and first.metadata.uid != second.metadata.uid
    assert int(second.metadata.resource_version) > int(first.metadata.resource_version)
    assert first.metadata.creation_timestamp is not None
    assert first.metadata.namespace == "default"


def test_generate_name(core: Any) -> None:
    made = core.create_namespaced_config_map(
        "default", {"metadata": {"generateName": "job-"}})
    assert made.metadata.name.startswith("job-") and len(made.metadata.name) == 9


def test_duplicate_is_409_already_exists(core: Any) -> None:
    core.create_namespaced_config_map("default", cm("a"))
    with pytest.raises(client.ApiException) as caught:
        core.create_namespaced_config_map("default", cm("a"))
    assert caught.value.status == 409
    assert status_of(caught.value) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'configmaps "a" already exists', "reason": "AlreadyExists",
        "details": {"name": "a", "kind": "configmaps"}, "code": 409}


def test_missing_namespace_and_object(core: Any, batch: Any) -> None:
    with pytest.raises(client.ApiException) as caught:
        core.create_namespaced_config_map("nowhere", cm("a"))
    assert caught.value.status == 404
    assert status_of(caught.value)["message"] == 'namespaces "nowhere" not found'
    with pytest.raises(client.ApiException) as caught:
        batch.read_namespaced_job("nope", "default")
    body = status_of(caught.value)
    assert body["message"] == 'jobs.batch "nope" not found'
    assert body["details"] == {"name": "nope", "group": "batch", "kind": "jobs"}


def test_missing_name_is_422(core: Any) -> None:
    with pytest.raises(client.ApiException) as caught:
        core.create_namespaced_config_map("default", {"metadata": {}})
    assert caught.value.status == 422
    body = status_of(caught.value)
    assert body["reason"] == "Invalid"
    assert body["message"] == ('ConfigMap "" is invalid: metadata.name: Required value: '
                               'name or generateName is required')


def test_invalid_label_value_is_422(core: Any) -> None:
    with pytest.raises(client.ApiException) as caught:
        core.create_namespaced_config_map("default", cm("a", job="x" * 64))
    assert "must be no more than 63 characters" in status_of(caught.value)["message"]


def test_unknown_resource_is_404(cluster: EmulatedCluster) -> None:
    custom = client.CustomObjectsApi(cluster.api_client())
    with pytest.raises(client.ApiException) as caught:
        custom.list_namespaced_custom_object("example.com", "v1", "default", "widgets")
    assert caught.value.status == 404
    assert status_of(caught.value)["message"] == ("the server could not find the requested "
                                                  "resource")


def test_list_with_selectors(core: Any) -> None:
    core.create_namespaced_config_map("default", cm("a", app="x", tier="web"))
    core.create_namespaced_config_map("default", cm("b", app="y"))
    core.create_namespaced_config_map("default", cm("c"))
    core.create_namespaced_config_map("other", cm("d", app="x"))

    def names(**kw: Any) -> list:
        return [i.metadata.name for i in core.list_namespaced_config_map("default", **kw).items]

    assert names(label_selector="app=x") == ["a"]
    assert names(label_selector="app!=x") == ["b", "c"]
    assert names(label_selector="app in (x, y)") == ["a", "b"]
    assert names(label_selector="app notin (x)") == ["b", "c"]
    assert names(label_selector="app") == ["a", "b"]
    assert names(label_selector="!app") == ["c"]
    assert names(label_selector="app=x,tier=web") == ["a"]
    assert names(field_selector="metadata.name=b") == ["b"]
    everywhere = core.list_config_map_for_all_namespaces(label_selector="app=x")
    assert sorted(i.metadata.name for i in everywhere.items) == ["a", "d"]
    assert int(everywhere.metadata.resource_version) > 0


def test_unsupported_field_selector_is_400(core: Any) -> None:
    with pytest.raises(client.ApiException) as caught:
        core.list_namespaced_config_map("default", field_selector="data.k=v")
    assert caught.value.status == 400


def test_pod_field_selectors(core: Any) -> None:
    pod = {"metadata": {"name": "p"}, "spec": {"nodeName": "n1", "containers": [
        {"name": "c", "image": "busybox"}]}}
    core.create_namespaced_pod("default", pod)
    assert len(core.list_namespaced_pod("default", field_selector="spec.nodeName=n1").items) == 1
    assert not core.list_namespaced_pod("default", field_selector="status.phase=Running").items
    assert len(core.list_namespaced_pod("default",
                                        field_selector="status.phase=Pending").items) == 1


def test_pagination(core: Any) -> None:
    for i in range(5):
        core.create_namespaced_config_map("default", cm(f"c{i}"))
    page = core.list_namespaced_config_map("default", limit=2)
    seen = [i.metadata.name for i in page.items]
    while page.metadata._continue:
        page = core.list_namespaced_config_map("default", limit=2,
                                               _continue=page.metadata._continue)
        seen += [i.metadata.name for i in page.items]
    assert seen == [f"c{i}" for i in range(5)]


def test_replace_with_stale_resource_version_conflicts(core: Any) -> None:
    made = core.create_namespaced_config_map("default", cm("a"))
    made.data = {"k": "2"}
    core.replace_namespaced_config_map("a", "default", made)
    made.data = {"k": "3"}
    with pytest.raises(client.ApiException) as caught:
        core.replace_namespaced_config_map("a", "default", made)
    assert caught.value.status == 409
    assert status_of(caught.value)["message"] == (
        'Operation cannot be fulfilled on configmaps "a": the object has been modified; '
        'please apply your changes to the latest version and try again')


def test_patch_kinds(core: Any) -> None:
    pod = {"metadata": {"name": "p", "labels": {"a": "1"}}, "spec": {"containers": [
        {"name": "main", "image": "busybox", "env": [{"name": "A", "value": "1"}]},
        {"name": "side", "image": "busybox"}]}}
    core.create_namespaced_pod("default", pod)
    merged = core.patch_namespaced_pod(
        "p", "default", {"metadata": {"labels": {"a": None, "b": "2"}}},
        _content_type="application/merge-patch+json")
    assert merged.metadata.labels == {"b": "2"}
    strategic = core.patch_namespaced_pod(
        "p", "default", {"spec": {"containers": [{"name": "main", "env": [
            {"name": "B", "value": "2"}]}]}},
        _content_type="application/strategic-merge-patch+json")
    main = strategic.spec.containers[0]
    assert [c.name for c in strategic.spec.containers] == ["main", "side"]
    assert [(e.name, e.value) for e in main.env] == [("A", "1"), ("B", "2")]
    patched = core.patch_namespaced_pod(
        "p", "default", [{"op": "add", "path": "/metadata/annotations",
                          "value": {"x": "y"}},
                         {"op": "replace", "path": "/metadata/labels/b", "value": "3"}],
        _content_type="application/json-patch+json")
    assert patched.metadata.annotations == {"x": "y"} and patched.metadata.labels == {"b": "3"}


def test_status_subresource_is_separate(bare_cluster: EmulatedCluster) -> None:
    batch = client.BatchV1Api(bare_cluster.api_client())
    job = {"metadata": {"name": "j"}, "spec": {"suspend": True, "template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}},
        "status": {"active": 5}}
    made = batch.create_namespaced_job("default", job)
    assert made.status.active is None
    batch.patch_namespaced_job("j", "default", {"status": {"active": 3}})
    assert batch.read_namespaced_job("j", "default").status.active is None
    batch.patch_namespaced_job_status("j", "default", {"status": {"active": 3}})
    after = batch.read_namespaced_job_status("j", "default")
    assert after.status.active == 3
    assert after.metadata.generation == 1


def test_generation_bumps_on_spec_change(batch: Any) -> None:
    job = {"metadata": {"name": "j"}, "spec": {"suspend": True, "template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}
    batch.create_namespaced_job("default", job)
    after = batch.patch_namespaced_job("j", "default", {"spec": {"suspend": False}})
    assert after.metadata.generation == 2


def test_dry_run_create_stores_nothing(cluster: EmulatedCluster, core: Any) -> None:
    made = core.create_namespaced_config_map("default", cm("a"), dry_run="All")
    assert made.metadata.name == "a" and made.metadata.uid
    assert cluster.objects("configmaps", "default") == []
    with pytest.raises(client.ApiException) as caught:
        core.create_namespaced_config_map("default", {"metadata": {}}, dry_run="All")
    assert caught.value.status == 422


def test_custom_resources_round_trip(custom: Any) -> None:
    body = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": "js"}, "spec": {"replicatedJobs": []}}
    made = custom.create_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", "default",
                                                  "jobsets", body)
    assert made["metadata"]["uid"] and made["kind"] == "JobSet"
    listed = custom.list_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", "default",
                                                  "jobsets")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["js"]
    custom.patch_namespaced_custom_object_status(
        "jobset.x-k8s.io", "v1alpha2", "default", "jobsets", "js",
        {"status": {"conditions": [{"type": "Completed", "status": "True"}]}})
    got = custom.get_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", "default",
                                              "jobsets", "js")
    assert got["status"]["conditions"][0]["type"] == "Completed"


def test_crd_makes_resource_served(cluster: EmulatedCluster) -> None:
    api = cluster.api_client()
    crd = {"metadata": {"name": "widgets.example.com"}, "spec": {
        "group": "example.com", "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
        "versions": [{"name": "v1", "served": True, "storage": True,
                      "schema": {"openAPIV3Schema": {"type": "object"}}}]}}
    client.ApiextensionsV1Api(api).create_custom_resource_definition(crd)
    custom = client.CustomObjectsApi(api)
    custom.create_namespaced_custom_object("example.com", "v1", "default", "widgets", {
        "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}})
    assert len(custom.list_namespaced_custom_object(
        "example.com", "v1", "default", "widgets")["items"]) == 1
    client.ApiextensionsV1Api(api).delete_custom_resource_definition("widgets.example.com")
    with pytest.raises(client.ApiException) as caught:
        custom.list_namespaced_custom_object("example.com", "v1", "default", "widgets")
    assert caught.value.status == 404


def test_cluster_scoped_nodes(core: Any) -> None:
    node = {"metadata": {"name": "n1", "labels": {"x": "y"}},
            "status": {"allocatable": {"cpu": "4"}}}
    made = core.create_node(node)
    assert made.status.allocatable == {"cpu": "4"}
    assert [n.metadata.name for n in core.list_node(label_selector="x=y").items] == ["n1"]


def test_raw_list_shape(cluster: EmulatedCluster, core: Any) -> None:
    core.create_namespaced_config_map("default", cm("a"))
    raw = core.list_namespaced_config_map("default", _preload_content=False)
    body = json.loads(raw.data)
    assert body["kind"] == "ConfigMapList" and body["apiVersion"] == "v1"
    assert "kind" not in body["items"][0]
