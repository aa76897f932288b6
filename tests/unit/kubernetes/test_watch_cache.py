"""The command server's watch cache: label selection, the journal pipe from forked commands,
waiting for our own writes, and the snapshot a forked command reads (taken under the cache's
lock while mirrors keep changing)."""

from __future__ import annotations

import json
import os
import threading
from typing import Any, Dict, Iterator, List

import pytest

pytest.importorskip("kubernetes")

from sbatch_k8s.backends.kubernetes.api import kinds  # noqa: E402
from sbatch_k8s.backends.kubernetes.read import watch_cache, watch_journal  # noqa: E402
from sbatch_k8s.backends.kubernetes.api.client import Target, connect  # noqa: E402
from sbatch_k8s.backends.kubernetes.read.cluster_reads import (  # noqa: E402
    CachedReads,
    label_filter,
)
from tests.apiserver import EmulatedCluster  # noqa: E402
from tests.apiserver.support import wait_until  # noqa: E402

RECORD_LABELS = {"sbatch-k8s.io/kind": "record", "app.kubernetes.io/managed-by": "sbatch-k8s"}


@pytest.mark.parametrize("selector, labels, expected", [
    ("a=1", {"a": "1"}, True),
    ("a==1", {"a": "2"}, False),
    ("a!=1", {}, True),
    ("a=1,b in (2, 3)", {"a": "1", "b": "3"}, True),
    ("a=1,b in (2,3)", {"a": "1"}, False),
    ("b notin (2,3)", {"b": "4"}, True),
    ("b notin (2,3)", {"b": "2"}, False),
    ("a", {"a": ""}, True),
    ("!a", {"a": ""}, False),
    ("", {"x": "y"}, True),
])
def test_label_selectors_select_as_the_api_server_does(selector: str, labels: Dict[str, str],
                                                       expected: bool) -> None:
    assert label_filter(selector)(labels) is expected


@pytest.mark.parametrize("path, collection", [
    ("/api/v1/namespaces/ns/configmaps/sbatch-k8s-job-7", "/api/v1/namespaces/ns/configmaps"),
    ("/apis/batch/v1/namespaces/ns/jobs/x/status", "/apis/batch/v1/namespaces/ns/jobs"),
    ("/api/v1/namespaces/ns", None),
    ("/api/v1/nodes/n1", None),
])
def test_a_write_is_known_by_its_collection(path: str, collection: Any) -> None:
    assert watch_journal.collection_of(path) == collection


class _Client:
    target = Target("http://127.0.0.1:1", "ctx", "ns")


def _in_child(action: Any) -> None:
    """Run ``action`` in a forked child (as a served command) and wait for it."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            action()
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.fixture
def journal(monkeypatch: pytest.MonkeyPatch) -> Iterator[watch_journal.JournalReader]:
    """A journal pipe as the server opens it; what its reader got is ``reader.got``."""
    got: List[Dict[str, Any]] = []
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    monkeypatch.setattr(watch_journal, "_write_fd", write_fd)
    monkeypatch.setattr(watch_journal, "_server_pid", os.getpid())
    reader = watch_journal.JournalReader(read_fd, got.append)
    reader.got = got  # type: ignore[attr-defined]
    yield reader
    os.close(read_fd)
    os.close(write_fd)


def test_forked_commands_report_their_writes(journal: watch_journal.JournalReader) -> None:
    record = {"kind": "ConfigMap", "metadata": {"resourceVersion": "1234", "labels": dict(
        RECORD_LABELS, other="x")}}
    path = "/api/v1/namespaces/ns/configmaps/sbatch-k8s-job-7"

    def command() -> None:
        watch_journal.note_write(_Client(), "PATCH", path, {}, record)
        watch_journal.note_write(_Client(), "POST", path, {"dryRun": "All"}, record)
        watch_journal.note_write(_Client(), "DELETE", path, {}, {"kind": "Status"})
    _in_child(command)
    watch_journal.note_write(_Client(), "PATCH", path, {}, record)  # the server itself: no
    journal.drain()
    assert journal.got == [{  # type: ignore[attr-defined]
        "t": "wrote", "server": "http://127.0.0.1:1", "rv": "1234",
        "collection": "/api/v1/namespaces/ns/configmaps", "labels": RECORD_LABELS}]


@pytest.fixture
def cluster() -> Iterator[EmulatedCluster]:
    with EmulatedCluster(controllers=False, crd_groups=()) as running:
        yield running


@pytest.fixture
def cache(cluster: EmulatedCluster) -> Iterator[watch_cache.WatchCache]:
    """The server's cache, hooked into fork, watching ``default`` on ``cluster``."""
    installed = watch_cache.install()
    env = {"KUBECONFIG": cluster.kubeconfig}
    ident = watch_cache.cluster_id(env, connect(env).target)
    installed.ensure(ident, env, None, "default", [kinds.JOB])
    wait_until(lambda: all(m.synced for m in installed.mirrors.values()), 10, "synced")
    installed.ident = ident  # type: ignore[attr-defined]
    yield installed
    installed.stop()
    watch_cache.CACHE = None


def _record(name: str) -> Dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": RECORD_LABELS}, "data": {}}


def test_mirrors_of_a_namespace_and_our_writes_waited_for(
        cluster: EmulatedCluster, cache: watch_cache.WatchCache) -> None:
    assert sorted(key[2].plural for key in cache.mirrors) == ["configmaps", "jobs", "pods"]
    client = connect({"KUBECONFIG": cluster.kubeconfig})
    made = client.create(_record("sbatch-k8s-job-1"), "default")
    rv = int(made["metadata"]["resourceVersion"])
    collection = kinds.CONFIG_MAP.collection_path("default")
    cache.require(cluster.url, collection, {"other": "x"}, rv + 100)  # not a record: ignored
    cache.require(cluster.url, collection, RECORD_LABELS, rv)
    records = next(m for m in cache.mirrors.values() if m.kind == kinds.CONFIG_MAP)
    assert records.required_rv == rv
    assert cache.wait_caught_up(10)
    assert "sbatch-k8s-job-1" in records.objects


def test_a_forked_command_reads_a_whole_snapshot(cluster: EmulatedCluster,
                                                 cache: watch_cache.WatchCache) -> None:
    client = connect({"KUBECONFIG": cluster.kubeconfig})
    stop = threading.Event()

    def churn() -> None:
        k = 0
        while not stop.is_set() and k < 400:
            client.create(_record(f"r{k}"), "default")
            k += 1
    writer = threading.Thread(target=churn)
    writer.start()
    ident = cache.ident  # type: ignore[attr-defined]
    out_read, out_write = os.pipe()
    try:
        for _ in range(10):
            def command() -> None:
                snap = watch_cache.snapshot()
                assert snap is not None and snap.frozen
                assert snap.condition.acquire(timeout=1)  # nobody holds the child's lock
                mirror = snap.mirror(ident, "default", kinds.CONFIG_MAP,
                                     watch_cache.RECORD_SELECTOR)
                assert mirror is not None
                newest = max([int(o["metadata"]["resourceVersion"])
                              for o, _ in mirror.objects.values()] or [0])
                assert newest <= mirror.rv
                reads = CachedReads(client, snap, ident, {})
                items = reads.items(kinds.CONFIG_MAP, "default", "sbatch-k8s.io/kind=record",
                                    watch_cache.RECORD_SELECTOR)
                assert reads.listed == []  # from the snapshot: no API call
                os.write(out_write, json.dumps(len(items)).encode() + b"\n")
            _in_child(command)
    finally:
        stop.set()
        writer.join()
    os.close(out_write)
    with os.fdopen(out_read) as seen:
        counts = [int(line) for line in seen]
    assert len(counts) == 10 and counts == sorted(counts)
    assert watch_cache.snapshot() is None  # the server itself never reads its own copy


def test_final_records_are_kept_as_metadata_and_their_parsed_record() -> None:
    from parsers.job_records import COMPLETED, with_changes
    from sbatch_k8s.backends.kubernetes.history.records import (
        record_config_map,
        record_from_config_map,
    )
    from tests.unit.kubernetes.test_records import submitted

    ref = {"apiVersion": "batch/v1", "kind": "Job", "name": "x-7", "namespace": "ns"}
    active = record_config_map(submitted(7), ref)
    assert watch_cache.keep_of_record(active, record_from_config_map(active)) is active
    done = record_config_map(with_changes(submitted(7), state=COMPLETED, end_time=1), ref)
    done["metadata"].update(namespace="ns", resourceVersion="99")
    kept = watch_cache.keep_of_record(done, record_from_config_map(done))
    assert kept == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "sbatch-k8s-job-7", "namespace": "ns", "resourceVersion": "99",
        "labels": done["metadata"]["labels"]}}
