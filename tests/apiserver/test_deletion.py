"""Deletion: graceful pods, finalizers, propagation policies, garbage collection, namespaces."""

from __future__ import annotations

import json
from typing import Any, Dict

import pytest
from kubernetes import client

from tests.apiserver import EmulatedCluster
from tests.apiserver.support import pod, wait_until


def owned(name: str, owner: Any, kind: str = "Job", api_version: str = "batch/v1",
          block: bool = True) -> Dict[str, Any]:
    return {"metadata": {"name": name, "ownerReferences": [{
        "apiVersion": api_version, "kind": kind, "name": owner.metadata.name,
        "uid": owner.metadata.uid, "controller": False, "blockOwnerDeletion": block}]}}


def suspended_job(name: str) -> Dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"suspend": True, "template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}


def exists(read: Any, *args: Any) -> bool:
    try:
        read(*args)
        return True
    except client.ApiException as error:
        assert error.status == 404
        return False


def test_unbound_pod_goes_at_once(bare_cluster: EmulatedCluster) -> None:
    core = client.CoreV1Api(bare_cluster.api_client())
    core.create_namespaced_pod("default", pod("p"))
    gone = core.delete_namespaced_pod("p", "default")
    assert gone.metadata.name == "p"
    assert not exists(core.read_namespaced_pod, "p", "default")


def test_bound_pod_terminates_gracefully(bare_cluster: EmulatedCluster) -> None:
    core = client.CoreV1Api(bare_cluster.api_client())
    core.create_namespaced_pod("default", pod("p", node_name="n1",
                                              termination_grace_period_seconds=20))
    marked = core.delete_namespaced_pod("p", "default")
    assert marked.metadata.deletion_timestamp is not None
    assert marked.metadata.deletion_grace_period_seconds == 20
    shorter = core.delete_namespaced_pod("p", "default", grace_period_seconds=5)
    assert shorter.metadata.deletion_grace_period_seconds == 5
    assert exists(core.read_namespaced_pod, "p", "default")
    core.delete_namespaced_pod("p", "default", grace_period_seconds=0)  # the kubelet's delete
    assert not exists(core.read_namespaced_pod, "p", "default")


def test_finalizers_hold_deletion(bare_cluster: EmulatedCluster) -> None:
    core = client.CoreV1Api(bare_cluster.api_client())
    core.create_namespaced_config_map("default", {"metadata": {"name": "a",
                                                               "finalizers": ["x/y"]}})
    core.delete_namespaced_config_map("a", "default")
    held = core.read_namespaced_config_map("a", "default")
    assert held.metadata.deletion_timestamp is not None
    with pytest.raises(client.ApiException) as caught:
        core.patch_namespaced_config_map("a", "default",
                                         {"metadata": {"finalizers": ["x/y", "new/one"]}})
    assert caught.value.status == 422
    core.patch_namespaced_config_map("a", "default", {"metadata": {"finalizers": None}})
    assert not exists(core.read_namespaced_config_map, "a", "default")


def test_background_gc_of_job_dependents(core: Any, batch: Any) -> None:
    job = batch.create_namespaced_job("default", suspended_job("j"))
    core.create_namespaced_config_map("default", owned("hosts", job))
    core.create_namespaced_service("default", {**owned("svc", job), "spec": {
        "clusterIP": "None", "selector": {"a": "b"}}})
    core.create_namespaced_secret("default", owned("key", job))
    batch.delete_namespaced_job("j", "default", propagation_policy="Background")
    wait_until(lambda: not exists(core.read_namespaced_config_map, "hosts", "default")
               and not exists(core.read_namespaced_service, "svc", "default")
               and not exists(core.read_namespaced_secret, "key", "default"),
               what="dependents collected")


def test_job_default_propagation_is_orphan_with_warning(cluster: EmulatedCluster, core: Any,
                                                        batch: Any) -> None:
    job = batch.create_namespaced_job("default", suspended_job("j"))
    core.create_namespaced_config_map("default", owned("hosts", job))
    raw = batch.delete_namespaced_job("j", "default", _preload_content=False)
    assert "child pods are preserved by default" in raw.headers["Warning"]
    wait_until(lambda: not exists(batch.read_namespaced_job, "j", "default"))
    orphan = core.read_namespaced_config_map("hosts", "default")
    assert orphan.metadata.owner_references is None


def test_foreground_waits_for_dependents(core: Any, batch: Any) -> None:
    job = batch.create_namespaced_job("default", suspended_job("j"))
    core.create_namespaced_config_map("default", owned("hosts", job))
    batch.delete_namespaced_job("j", "default", propagation_policy="Foreground")
    wait_until(lambda: not exists(batch.read_namespaced_job, "j", "default"),
               what="owner gone after its dependents")
    assert not exists(core.read_namespaced_config_map, "hosts", "default")


def test_dependent_of_missing_owner_is_collected(core: Any) -> None:
    fake = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="ghost", uid="no-such-uid"))
    core.create_namespaced_config_map("default", owned("orphan", fake, "ConfigMap", "v1"))
    wait_until(lambda: not exists(core.read_namespaced_config_map, "orphan", "default"))


def test_namespace_deletion_empties_it(core: Any) -> None:
    core.create_namespace({"metadata": {"name": "temp"}})
    core.create_namespaced_config_map("temp", {"metadata": {"name": "a"}})
    raw = core.delete_namespace("temp", _preload_content=False)  # the Namespace, not a Status
    assert json.loads(raw.data)["status"]["phase"] == "Terminating"
    with pytest.raises(client.ApiException) as caught:
        core.create_namespaced_config_map("temp", {"metadata": {"name": "b"}})
    assert caught.value.status == 403
    assert "because it is being terminated" in caught.value.body
    wait_until(lambda: not exists(core.read_namespace, "temp"), what="namespace removed")


def test_delete_preconditions_and_status(core: Any) -> None:
    made = core.create_namespaced_config_map("default", {"metadata": {"name": "a"}})
    with pytest.raises(client.ApiException) as caught:
        core.delete_namespaced_config_map("a", "default", body=client.V1DeleteOptions(
            preconditions=client.V1Preconditions(uid="other")))
    assert caught.value.status == 409
    status = core.delete_namespaced_config_map("a", "default", body=client.V1DeleteOptions(
        preconditions=client.V1Preconditions(uid=made.metadata.uid)))
    assert status["status"] == "Success"  # client 37 returns deletes as plain dicts
    assert status["details"] == {"name": "a", "kind": "configmaps", "uid": made.metadata.uid}


def test_delete_collection(core: Any) -> None:
    for name, team in (("a", "x"), ("b", "x"), ("c", "y")):
        core.create_namespaced_config_map("default", {"metadata": {
            "name": name, "labels": {"team": team}}})
    core.delete_collection_namespaced_config_map("default", label_selector="team=x")
    assert [c.metadata.name for c in core.list_namespaced_config_map("default").items] == ["c"]


def test_dry_run_delete_keeps_object(core: Any) -> None:
    core.create_namespaced_config_map("default", {"metadata": {"name": "a"}})
    core.delete_namespaced_config_map("a", "default", dry_run="All")
    assert exists(core.read_namespaced_config_map, "a", "default")


def test_eviction_marks_disruption_and_deletes(bare_cluster: EmulatedCluster) -> None:
    core = client.CoreV1Api(bare_cluster.api_client())
    core.create_namespaced_pod("default", pod("p", node_name="n1"))
    raw = core.create_namespaced_pod_eviction("p", "default", {
        "metadata": {"name": "p", "namespace": "default"}}, _preload_content=False)
    assert raw.status == 201
    evicted = core.read_namespaced_pod("p", "default")
    assert evicted.metadata.deletion_timestamp is not None
    disruption = [c for c in evicted.status.conditions if c.type == "DisruptionTarget"]
    assert disruption[0].status == "True" and disruption[0].reason == "EvictionByEvictionAPI"
