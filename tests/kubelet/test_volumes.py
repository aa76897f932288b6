"""Volumes materialised as directories (tests.kubelet.volumes): ConfigMap (with binaryData,
items and modes), Secret, downward API, emptyDir (Memory on a tmpfs), projected; storage
volumes mapped under --volume-dir or refused with a clear message."""

from __future__ import annotations

import base64
import os
import shutil
import stat

import pytest

from tests.kubelet.errors import PrepareError
from tests.kubelet.fakes import FakeApi, secret
from tests.kubelet.fields import PodContext
from tests.kubelet.volumes import VolumeDirs, materialise_volume, materialise_volumes

API = FakeApi(
    config_maps={"job": {"data": {"script": "echo hi\n", "job.json": "{}"},
                         "binaryData": {"blob": base64.b64encode(b"\x00\xff").decode()}}},
    secrets={"tok": secret("tok", token="s3cret", extra="e")})


def pod(volumes, security=None):
    return {"metadata": {"name": "p", "namespace": "ns", "uid": "u",
                         "labels": {"b": "2", "a": "1"}},
            "spec": {"volumes": volumes, "securityContext": security or {},
                     "containers": [{"name": "main", "resources": {"limits": {"cpu": "2"}}}]}}


@pytest.fixture
def dirs(tmp_path):
    return VolumeDirs(str(tmp_path / "pod"), str(tmp_path / "shm"), None)


def make(volume, dirs, security=None):
    context = PodContext(pod([volume], security), "127.10.0.1", "10.11.0.1", {})
    return materialise_volume(context, API, volume, dirs)


def files(path):
    found = {}
    for root, _, names in os.walk(path):
        for name in names:
            full = os.path.join(root, name)
            with open(full, "rb") as f:
                found[os.path.relpath(full, path)] = (f.read(), stat.S_IMODE(os.stat(full).st_mode))
    return found


def test_config_map_all_keys_with_binary_data(dirs):
    site = make({"name": "job", "configMap": {"name": "job"}}, dirs)
    assert site.read_only
    assert files(site.path) == {"script": (b"echo hi\n", 0o644), "job.json": (b"{}", 0o644),
                                "blob": (b"\x00\xff", 0o644)}


def test_config_map_items_and_modes(dirs):
    site = make({"name": "job", "configMap": {"name": "job", "defaultMode": 0o755, "items": [
        {"key": "script", "path": "bin/run.sh"},
        {"key": "job.json", "path": "job.json", "mode": 0o600}]}}, dirs)
    assert files(site.path) == {"bin/run.sh": (b"echo hi\n", 0o755),
                                "job.json": (b"{}", 0o600)}


def test_secret_with_default_mode_and_fs_group(dirs):
    site = make({"name": "t", "secret": {"secretName": "tok", "defaultMode": 256}}, dirs)
    assert files(site.path) == {"token": (b"s3cret", 0o400), "extra": (b"e", 0o400)}
    site = make({"name": "t2", "secret": {"secretName": "tok", "defaultMode": 256,
                                          "items": [{"key": "token", "path": "t"}]}},
                dirs, security={"fsGroup": 4242})
    assert files(site.path) == {"t": (b"s3cret", 0o440)}
    assert os.stat(os.path.join(site.path, "t")).st_gid == 4242


def test_downward_api(dirs):
    site = make({"name": "info", "downwardAPI": {"items": [
        {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
        {"path": "name", "fieldRef": {"fieldPath": "metadata.name"}},
        {"path": "cpu", "resourceFieldRef": {"containerName": "main",
                                             "resource": "limits.cpu", "divisor": "1m"}}]}},
        dirs)
    assert files(site.path) == {"labels": (b'a="1"\nb="2"', 0o644), "name": (b"p", 0o644),
                                "cpu": (b"2000", 0o644)}


def test_projected_sources_together(dirs):
    site = make({"name": "all", "projected": {"defaultMode": 0o440, "sources": [
        {"configMap": {"name": "job", "items": [{"key": "script", "path": "script"}]}},
        {"secret": {"name": "tok", "items": [{"key": "token", "path": "token"}]}},
        {"downwardAPI": {"items": [{"path": "ns", "fieldRef": {
            "fieldPath": "metadata.namespace"}}]}},
        {"serviceAccountToken": {"path": "sa-token", "expirationSeconds": 3600}}]}}, dirs)
    assert files(site.path) == {"script": (b"echo hi\n", 0o440), "token": (b"s3cret", 0o440),
                                "ns": (b"ns", 0o440), "sa-token": (b"token-for-ns-default", 0o440)}


def test_empty_dirs_and_memory_ones_on_a_tmpfs(dirs):
    disk = make({"name": "scratch", "emptyDir": {}}, dirs)
    shm = make({"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}}, dirs)
    assert disk.path.startswith(dirs.pod_dir) and not disk.read_only
    assert shm.path.startswith(dirs.memory_dir)
    assert stat.S_IMODE(os.stat(shm.path).st_mode) == 0o777


def test_fs_group_owns_every_volume_as_a_kubelet_gives_it(dirs):
    security = {"fsGroup": 4343}
    scratch = make({"name": "scratch", "emptyDir": {}}, dirs, security=security)
    info = os.stat(scratch.path)
    assert (info.st_gid, stat.S_IMODE(info.st_mode)) == (4343, 0o2777)
    site = make({"name": "job", "configMap": {"name": "job", "defaultMode": 0o400, "items": [
        {"key": "script", "path": "bin/run.sh"},
        {"key": "job.json", "path": "job.json", "mode": 0o000}]}}, dirs, security=security)
    # Group read added to every file (even mode 0), search and setgid to directories.
    assert files(site.path) == {"bin/run.sh": (b"echo hi\n", 0o440),
                                "job.json": (b"{}", 0o440)}
    for path in (site.path, os.path.join(site.path, "bin")):
        info = os.stat(path)
        assert (info.st_gid, stat.S_IMODE(info.st_mode) & 0o2050) == (4343, 0o2050)


def test_a_missing_config_map_is_retried_an_optional_one_is_empty(dirs):
    with pytest.raises(PrepareError) as error:
        make({"name": "x", "configMap": {"name": "later"}}, dirs)
    assert (error.value.reason, error.value.permanent) == ("FailedMount", False)
    site = make({"name": "x", "configMap": {"name": "later", "optional": True}}, dirs)
    assert files(site.path) == {}


@pytest.mark.parametrize("volume, mapped", [
    ({"persistentVolumeClaim": {"claimName": "data"}}, "pvc/ns/data"),
    ({"nfs": {"server": "nfs.example", "path": "/export/home"}}, "nfs/nfs.example/export/home"),
    ({"hostPath": {"path": "/scratch"}}, "hostpath/scratch"),
])
def test_storage_volumes_map_under_volume_dir_or_fail_clearly(tmp_path, volume, mapped):
    without = VolumeDirs(str(tmp_path / "pod"), str(tmp_path / "shm"), None)
    with pytest.raises(PrepareError, match="--volume-dir") as error:
        make(dict(volume, name="v"), without)
    assert error.value.permanent
    mapped_dirs = without._replace(volume_dir=str(tmp_path / "volumes"))
    site = make(dict(volume, name="v"), mapped_dirs)
    assert site.path == str(tmp_path / "volumes" / mapped) and os.path.isdir(site.path)


def test_unknown_volume_types_and_escaping_paths_fail_the_pod(dirs):
    with pytest.raises(PrepareError, match="not emulated") as error:
        make({"name": "c", "csi": {"driver": "x"}}, dirs)
    assert error.value.permanent
    with pytest.raises(PrepareError, match="must be relative"):
        make({"name": "j", "configMap": {"name": "job", "items": [
            {"key": "script", "path": "../evil"}]}}, dirs)


def test_every_volume_of_a_pod(dirs):
    context = PodContext(pod([{"name": "a", "emptyDir": {}},
                              {"name": "b", "configMap": {"name": "job"}}]),
                         "127.10.0.1", "10.11.0.1", {})
    assert sorted(materialise_volumes(context, API, dirs)) == ["a", "b"]


def test_downward_files_follow_the_pods_annotations(dirs):
    from tests.kubelet.volumes import refresh_downward_volumes

    volume = {"name": "control", "downwardAPI": {"items": [
        {"path": "requests", "fieldRef": {"fieldPath": "metadata.annotations['x.io/r']"}},
        {"path": "meta/labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}}
    before = pod([volume])
    site = materialise_volume(PodContext(before, "127.10.0.1", "10.11.0.1", {}), API, volume,
                              dirs)
    requests = os.path.join(site.path, "requests")
    assert files(site.path)["requests"] == (b"", 0o644)
    inode = os.stat(requests).st_ino
    with open(requests, "rb") as reader:          # a reader of the old file keeps it whole
        after = pod([volume])
        after["metadata"]["annotations"] = {"x.io/r": '[{"seq":1}]'}
        context = PodContext(after, "127.10.0.1", "10.11.0.1", {})
        assert refresh_downward_volumes(context, dirs) == [requests]
        assert reader.read() == b""
    assert files(site.path) == {"requests": (b'[{"seq":1}]', 0o644),
                                "meta/labels": (b'a="1"\nb="2"', 0o644)}
    assert os.stat(requests).st_ino != inode     # renamed over: the change shows in a stat
    assert refresh_downward_volumes(context, dirs) == []    # nothing changed: nothing written
    shutil.rmtree(site.path)                      # the pod was cleaned up: left alone
    assert refresh_downward_volumes(context, dirs) == [] and not os.path.exists(site.path)
