"""The scheduler binds pending pods to fitting nodes or explains why it cannot."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.apiserver import EmulatedCluster
from tests.apiserver.support import node, pod, wait_until


def bound_node(core: Any, name: str) -> Any:
    return core.read_namespaced_pod(name, "default").spec.node_name


def scheduled_condition(core: Any, name: str) -> Any:
    conditions = core.read_namespaced_pod(name, "default").status.conditions or []
    return next((c for c in conditions if c.type == "PodScheduled"), None)


def test_binds_and_spreads(core: Any) -> None:
    core.create_node(node("n1"))
    core.create_node(node("n2"))
    core.create_namespaced_pod("default", pod("a"))
    core.create_namespaced_pod("default", pod("b"))
    first = wait_until(lambda: bound_node(core, "a"), what="a bound")
    second = wait_until(lambda: bound_node(core, "b"), what="b bound")
    assert {first, second} == {"n1", "n2"}
    assert scheduled_condition(core, "a").status == "True"
    assert core.read_namespaced_pod("a", "default").status.phase == "Pending"


def test_insufficient_gpu_message(core: Any) -> None:
    core.create_node(node("n1", gpus=1))
    core.create_node(node("n2"))
    core.create_namespaced_pod("default", pod("big", gpus=2))
    condition = wait_until(lambda: scheduled_condition(core, "big"), what="condition")
    assert (condition.status, condition.reason) == ("False", "Unschedulable")
    assert condition.message == "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
    core.create_node(node("n3", gpus=4))
    assert wait_until(lambda: bound_node(core, "big")) == "n3"


def test_capacity_counts_bound_pods(core: Any) -> None:
    core.create_node(node("n1", gpus=2))
    for name in ("a", "b"):
        core.create_namespaced_pod("default", pod(name, gpus=1))
    core.create_namespaced_pod("default", pod("c", gpus=1))
    wait_until(lambda: bound_node(core, "a") and bound_node(core, "b"))
    condition = wait_until(lambda: scheduled_condition(core, "c"))
    assert condition.reason == "Unschedulable"
    core.patch_namespaced_pod_status("a", "default", {"status": {"phase": "Succeeded"}})
    assert wait_until(lambda: bound_node(core, "c")) == "n1"


def test_selector_affinity_taints_cordon(core: Any) -> None:
    core.create_node(node("cpu", labels={"pool": "cpu"}))
    core.create_node(node("gpu", labels={"pool": "gpu"},
                          taints=[{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]))
    core.create_node(node("off", labels={"pool": "gpu"}, unschedulable=True))
    core.create_node(node("sick", labels={"pool": "gpu"}, ready=False))
    core.create_namespaced_pod("default", pod("sel", node_selector={"pool": "cpu"}))
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "pool", "operator": "In", "values": ["gpu"]}]}]}}}
    core.create_namespaced_pod("default", pod("untolerated", affinity=affinity))
    core.create_namespaced_pod("default", pod("tolerated", affinity=affinity, tolerations=[
        {"key": "gpu", "operator": "Equal", "value": "yes", "effect": "NoSchedule"}]))
    assert wait_until(lambda: bound_node(core, "sel")) == "cpu"
    assert wait_until(lambda: bound_node(core, "tolerated")) == "gpu"
    condition = wait_until(lambda: scheduled_condition(core, "untolerated"))
    assert condition.message == (
        "0/4 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        "1 node(s) had untolerated taint {gpu: yes}, "
        "1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, "
        "1 node(s) were unschedulable.")


def test_scheduling_gates(core: Any) -> None:
    core.create_node(node("n1"))
    core.create_namespaced_pod("default", pod("gated", scheduling_gates=[{"name": "wait"}]))
    condition = wait_until(lambda: scheduled_condition(core, "gated"))
    assert (condition.status, condition.reason) == ("False", "SchedulingGated")
    core.patch_namespaced_pod("gated", "default", [{"op": "remove",
                                                    "path": "/spec/schedulingGates"}],
                              _content_type="application/json-patch+json")
    assert wait_until(lambda: bound_node(core, "gated")) == "n1"


def test_no_nodes(core: Any) -> None:
    core.create_namespaced_pod("default", pod("lonely"))
    condition = wait_until(lambda: scheduled_condition(core, "lonely"))
    assert condition.message == "no nodes available to schedule pods"


def test_binding_subresource(bare_cluster: EmulatedCluster) -> None:
    """Binding answers a Status, as the real server (the client must not deserialize it)."""
    from kubernetes import client
    core = client.CoreV1Api(bare_cluster.api_client())
    core.create_namespaced_pod("default", pod("p"))
    raw = core.create_namespaced_binding("default", {
        "metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n9"}},
        _preload_content=False)
    assert raw.status == 201 and json.loads(raw.data)["status"] == "Success"
    assert bound_node(core, "p") == "n9"
    with pytest.raises(client.ApiException) as caught:
        core.create_namespaced_pod_binding("p", "default", {
            "metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n8"}},
            _preload_content=False)
    assert caught.value.status == 409
    assert json.loads(caught.value.body)["message"] == (
        'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to '
        'node "n9"')
