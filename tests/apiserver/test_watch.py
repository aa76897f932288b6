"""Watch through ``kubernetes.watch.Watch().stream``: initial state, live events, selectors,
resume from a resourceVersion, timeouts and expiry."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, List, Tuple

import pytest
from kubernetes import client, watch

from tests.apiserver import EmulatedCluster, watch_stream


def collect(core: Any, seconds: int, expect: int = 0, **kw: Any) -> List[Tuple[str, str]]:
    """Events until ``expect`` arrived (then stop early) or the server's timeout ends it."""
    stream = watch.Watch()
    seen = []
    for event in stream.stream(core.list_namespaced_config_map, "default",
                               timeout_seconds=seconds, **kw):
        seen.append((event["type"], event["object"].metadata.name))
        if expect and len(seen) >= expect:
            stream.stop()
    return seen


def once_watching(cluster: EmulatedCluster, action: Callable[[], Any]) -> threading.Thread:
    """``action`` in a thread, once one more watch stream of ``cluster`` is open than now
    (so that every change it makes reaches that watch as a live event; at most 60 s)."""
    before = watch_stream.open_watches(cluster.store)

    def run() -> None:
        deadline = time.monotonic() + 60
        while watch_stream.open_watches(cluster.store) <= before and \
                time.monotonic() < deadline:
            time.sleep(0.01)
        action()
    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_initial_state_then_live_events(cluster: EmulatedCluster, core: Any) -> None:
    core.create_namespaced_config_map("default", {"metadata": {"name": "old"}})

    def changes() -> None:
        core.create_namespaced_config_map("default", {"metadata": {"name": "new"}})
        core.patch_namespaced_config_map("new", "default", {"data": {"a": "b"}})
        core.delete_namespaced_config_map("new", "default")
    thread = once_watching(cluster, changes)
    events = collect(core, 60, expect=4)
    thread.join()
    assert events == [("ADDED", "old"), ("ADDED", "new"), ("MODIFIED", "new"),
                      ("DELETED", "new")]


def test_timeout_seconds_ends_the_stream(core: Any) -> None:
    started = time.monotonic()
    assert collect(core, 1) == []
    assert 0.9 <= time.monotonic() - started < 60     # not the server's default 30 min


def test_resume_from_resource_version(core: Any) -> None:
    core.create_namespaced_config_map("default", {"metadata": {"name": "a"}})
    rv = core.list_namespaced_config_map("default").metadata.resource_version
    core.create_namespaced_config_map("default", {"metadata": {"name": "b"}})
    assert collect(core, 1, resource_version=rv) == [("ADDED", "b")]


def test_selector_transitions(cluster: EmulatedCluster, core: Any) -> None:
    core.create_namespaced_config_map("default", {"metadata": {"name": "a"}})

    def relabel() -> None:
        core.patch_namespaced_config_map("a", "default", {"metadata": {"labels": {"x": "1"}}})
        core.patch_namespaced_config_map("a", "default", {"data": {"k": "v"}})
        core.patch_namespaced_config_map("a", "default", {"metadata": {"labels": {"x": "2"}}})
    thread = once_watching(cluster, relabel)
    stream = watch.Watch()
    events = []
    for event in stream.stream(core.list_namespaced_config_map, "default", timeout_seconds=60,
                               label_selector="x=1"):
        events.append(event)
        if len(events) == 3:
            stream.stop()
    thread.join()
    assert [(e["type"], e["object"].metadata.name) for e in events] == [
        ("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]
    # Leaving the selection: the previous content, at the change's resourceVersion.
    gone = events[2]["object"]
    assert gone.metadata.labels == {"x": "1"} and gone.data == {"k": "v"}
    assert gone.metadata.resource_version == \
        core.read_namespaced_config_map("a", "default").metadata.resource_version


def test_watch_pods_by_node(cluster: EmulatedCluster, core: Any) -> None:
    pod = {"metadata": {"name": "p"}, "spec": {"nodeName": "n1", "containers": [
        {"name": "c", "image": "busybox"}]}}
    other = {"metadata": {"name": "q"}, "spec": {"nodeName": "n2", "containers": [
        {"name": "c", "image": "busybox"}]}}
    thread = once_watching(cluster, lambda: (core.create_namespaced_pod("default", other),
                                             core.create_namespaced_pod("default", pod)))
    stream = watch.Watch()
    events = []
    for event in stream.stream(core.list_pod_for_all_namespaces,
                               field_selector="spec.nodeName=n1", timeout_seconds=60):
        events.append((event["type"], event["object"].metadata.name))
        stream.stop()
    thread.join()
    assert events == [("ADDED", "p")]


def test_too_old_resource_version_is_410(cluster: EmulatedCluster, core: Any) -> None:
    cluster.store._history.clear()
    core.create_namespaced_config_map("default", {"metadata": {"name": "a"}})
    with pytest.raises(client.ApiException) as caught:
        collect(core, 1, resource_version="5")
    assert caught.value.status == 410


def test_watch_ends_when_cluster_stops() -> None:
    cluster = EmulatedCluster(controllers=False).start()
    core = client.CoreV1Api(cluster.api_client())
    thread = once_watching(cluster, cluster.stop)
    started = time.monotonic()
    list(watch.Watch().stream(core.list_namespaced_config_map, "default",
                              timeout_seconds=120))
    thread.join()
    assert time.monotonic() - started < 110           # ended by the stop, not its timeout
