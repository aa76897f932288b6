"""The watch cache's mirror of one collection (:mod:`sbatch_k8s.backends.kubernetes.read.reflector`)
against the emulated API server over HTTP: LIST then WATCH, events, bookmarks, a dropped
connection resumed from the last resourceVersion, 410 Gone re-listed, a kind the server does
not serve, and stopping."""

from __future__ import annotations

import json
import threading
from typing import Any, Dict, Iterator, List, Optional

import pytest

pytest.importorskip("kubernetes")

from sbatch_k8s.backends.kubernetes.api import kinds  # noqa: E402
from sbatch_k8s.backends.kubernetes.api.client import KubeClient, KubeError, connect  # noqa: E402
from sbatch_k8s.backends.kubernetes.read.reflector import Reflector  # noqa: E402
from tests.apiserver import EmulatedCluster, watch_stream  # noqa: E402
from tests.apiserver.support import wait_until  # noqa: E402

RECORD = "sbatch-k8s.io/kind=record"


@pytest.fixture
def cluster() -> Iterator[EmulatedCluster]:
    with EmulatedCluster(controllers=False, crd_groups=()) as running:
        yield running


def _client(cluster: EmulatedCluster) -> KubeClient:
    return connect({"KUBECONFIG": cluster.kubeconfig})


def _config_map(name: str, record: bool = True, data: Optional[Dict[str, str]] = None
                ) -> Dict[str, Any]:
    labels = {"sbatch-k8s.io/kind": "record"} if record else {"other": "yes"}
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": labels}, "data": data or {}}


def _mirror(cluster: EmulatedCluster, kind: kinds.Kind = kinds.CONFIG_MAP,
            selector: str = RECORD) -> Reflector:
    mirror = Reflector(lambda: _client(cluster), kind, "default", selector,
                       threading.Condition(), memo=lambda obj: obj["metadata"]["name"].upper())
    mirror.start()
    wait_until(lambda: mirror.synced and mirror.live, 60, "the first LIST")
    if not mirror.absent:  # live right after its LIST: wait for the watch it opens next
        wait_until(lambda: watch_stream.open_watches(cluster.store) >= 1, 60, "the watch")
    return mirror


def _rv(obj: Dict[str, Any]) -> int:
    return int(obj["metadata"]["resourceVersion"])


def test_lists_then_follows_every_change(cluster: EmulatedCluster) -> None:
    client = _client(cluster)
    client.create(_config_map("a"), "default")
    client.create(_config_map("not-a-record", record=False), "default")
    mirror = _mirror(cluster)
    try:
        assert sorted(mirror.objects) == ["a"]
        assert mirror.objects["a"][1] == "A"  # the memo, computed on arrival
        made = client.create(_config_map("b"), "default")
        changed = client.merge_patch(kinds.CONFIG_MAP, "a", "default", {"data": {"k": "v"}})
        gone = client.delete(kinds.CONFIG_MAP, "b", "default")
        assert gone
        wait_until(lambda: "b" not in mirror.objects and mirror.rv > _rv(made), 60,
                   "the delete")
        assert mirror.objects["a"][0]["data"] == {"k": "v"}
        assert mirror.objects["a"][0]["kind"] == "ConfigMap"
        assert mirror.rv >= _rv(changed)
        assert (mirror.lists, mirror.watches) == (1, 1)
    finally:
        mirror.stop()


def test_bookmarks_move_the_resource_version_while_nothing_matches(
        cluster: EmulatedCluster) -> None:
    mirror = _mirror(cluster)
    try:
        elsewhere = _client(cluster).create(_config_map("x", record=False), "default")
        wait_until(lambda: mirror.rv >= _rv(elsewhere), 60, "a bookmark past the write")
        assert mirror.objects == {}
    finally:
        mirror.stop()


def test_a_dropped_watch_is_resumed_from_its_resource_version(
        cluster: EmulatedCluster) -> None:
    client = _client(cluster)
    mirror = _mirror(cluster)
    try:
        assert watch_stream.drop_watches(cluster.store) == 1
        made = client.create(_config_map("during"), "default")
        wait_until(lambda: "during" in mirror.objects and mirror.live, 60,
                   "the change made while the watch was down")
        assert mirror.rv >= _rv(made)
        assert mirror.lists == 1 and mirror.watches >= 2  # resumed, not re-listed
    finally:
        mirror.stop()


def test_gone_history_means_a_fresh_list(cluster: EmulatedCluster) -> None:
    client = _client(cluster)
    client.create(_config_map("kept"), "default")
    mirror = _mirror(cluster)
    try:
        cluster.faults.add(method="GET", path="/configmaps$", status=503, times=None)
        watch_stream.drop_watches(cluster.store)
        wait_until(lambda: not mirror.live, 60, "the watch seen broken")
        client.delete(kinds.CONFIG_MAP, "kept", "default")
        client.create(_config_map("new"), "default")
        cluster.store._history.clear()  # compacted past the mirror's revision
        cluster.faults.clear()
        wait_until(lambda: mirror.lists >= 2 and mirror.live, 60, "a second LIST")
        assert sorted(mirror.objects) == ["new"]
    finally:
        mirror.stop()


def test_a_kind_the_server_does_not_serve_mirrors_as_empty(cluster: EmulatedCluster) -> None:
    mirror = _mirror(cluster, kinds.JOBSET, "app.kubernetes.io/managed-by=sbatch-k8s")
    try:
        assert mirror.absent and mirror.usable() and mirror.objects == {}
    finally:
        mirror.stop()


def test_stop_ends_the_thread_and_its_watch(cluster: EmulatedCluster) -> None:
    mirror = _mirror(cluster)
    mirror.stop()
    mirror.join(60)
    assert not mirror._thread.is_alive()
    assert not mirror.live
    wait_until(lambda: watch_stream.drop_watches(cluster.store) == 0, 60,
               "the server's stream closed")


def test_an_unreachable_server_leaves_the_mirror_unusable() -> None:
    cluster = EmulatedCluster(controllers=False).start()
    kubeconfig = cluster.kubeconfig
    mirror = _mirror(cluster)
    env = {"KUBECONFIG": kubeconfig}
    try:
        mirror.connect = lambda: connect(env)
        cluster.stop()
        wait_until(lambda: not mirror.live, 60, "the watch seen broken")
        assert not mirror.usable() and mirror.last_error
    finally:
        mirror.stop()


def test_a_server_restarted_on_an_empty_store_is_listed_afresh(cluster: EmulatedCluster) -> None:
    """Its history never issued the mirror's resourceVersion: a watch resumed from it would
    be silent for ever (the server sends only newer events), the vanished object kept."""
    _client(cluster).create(_config_map("vanishes"), "default")
    mirror = _mirror(cluster)
    try:
        before = mirror.rv
        cluster.restart_empty()
        _client(cluster).create(_config_map("after"), "default")
        wait_until(lambda: mirror.live and sorted(mirror.objects) == ["after"], 60,
                   f"the new server's objects only; have {sorted(mirror.objects)}")
        assert mirror.rv < before and mirror.lists == 2
        assert mirror.usable()
    finally:
        mirror.stop()


def _names(chunks: List[bytes]) -> List[Optional[str]]:
    """The objects' names in the complete lines of a watch stream (None: a bookmark)."""
    return [json.loads(line)["object"]["metadata"].get("name")
            for line in b"".join(chunks).split(b"\n")[:-1] if line.strip()]


def test_a_watch_from_a_revision_the_server_never_reached_is_silent(
        cluster: EmulatedCluster) -> None:
    """What the emulated server now does as the real one (the mirror must not rely on it)."""
    client = _client(cluster)
    future = cluster.store.rv + 4
    response = client.stream(kinds.CONFIG_MAP.collection_path("default"),
                             {"watch": "true", "resourceVersion": str(future),
                              "allowWatchBookmarks": "true", "timeoutSeconds": "120"})
    got: List[bytes] = []

    def read() -> None:
        try:
            for chunk in response.chunks():
                got.append(chunk)
                if "late-1" in _names(got):     # the last change: all before it have come
                    response.abort()
        except KubeError:
            pass
    reading = threading.Thread(target=read, daemon=True)
    reading.start()
    for i in range(4):
        client.create(_config_map(f"early-{i}"), "default")    # at or before `future`
    for i in range(2):
        client.create(_config_map(f"late-{i}"), "default")      # past it
    reading.join(120)
    names = _names(got)
    assert [n for n in names if n] == ["late-0", "late-1"], names


def test_a_mirror_lists_again_within_its_staleness_bound(cluster: EmulatedCluster) -> None:
    """Whatever the server did unseen (here: an object removed with no event), the mirror
    is corrected by the next LIST, due at most ``relist_s`` after the last."""
    client = _client(cluster)
    client.create(_config_map("unseen"), "default")
    mirror = Reflector(lambda: _client(cluster), kinds.CONFIG_MAP, "default", RECORD,
                       threading.Condition())
    mirror.relist_s = 2.0
    mirror.start()
    try:
        wait_until(lambda: mirror.synced and "unseen" in mirror.objects, 60, "the first LIST")
        with cluster.store.lock:       # gone without a watch event
            cluster.store._objects["/configmaps"].pop(("default", "unseen"))
        wait_until(lambda: "unseen" not in mirror.objects, 60, "a LIST within the bound")
        assert mirror.lists >= 2
    finally:
        mirror.stop()
