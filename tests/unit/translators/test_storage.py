"""Volumes, mounts and the working directory."""

from __future__ import annotations

import json

import pytest

from parsers.input_errors import SlurmInputError
from translators.storage import FIXED_MOUNTS, SPOOL_DIR
from tests.unit.translators.support import (
    container,
    manifest,
    pod_spec,
    render_script,
    script,
)


def test_fixed_volumes_and_mounts() -> None:
    result = render_script(script())
    volumes = {v["name"]: v for v in pod_spec(result)["volumes"]}
    assert volumes["sbatch-k8s-runtime"]["configMap"] == {
        "name": "sbatch-k8s-runtime-0123456789ab"}
    # Read by the pod's fsGroup only (see translators.security.job_file_mode).
    assert volumes["sbatch-k8s-job"]["configMap"] == {"name": "job-sh-1234",
                                                      "defaultMode": 0o440}
    assert volumes["sbatch-k8s-token"]["secret"] == {"secretName": "job-sh-1234",
                                                     "defaultMode": 0o440}
    assert volumes["sbatch-k8s-shm"]["emptyDir"] == {"medium": "Memory", "sizeLimit": "1Gi"}
    assert volumes["sbatch-k8s-spool"]["emptyDir"] == {}
    assert "sbatch-k8s-tmp" not in volumes
    mounts = {m["mountPath"]: m for m in container(result)["volumeMounts"]}
    for name, path, source in FIXED_MOUNTS:
        assert mounts[path]["name"] == name
        assert mounts[path].get("readOnly", False) == (source not in ("shm", "scratch"))
    assert mounts["/tmp/sbatch-k8s"] == {"name": "sbatch-k8s-spool",
                                         "mountPath": "/tmp/sbatch-k8s"}


def test_spool_is_the_runtimes_default() -> None:
    from sbatch_k8s.runtime.agent.node_setup import settings_from

    assert settings_from("indexed-job", {}).spool == SPOOL_DIR


def test_read_only_root_gets_a_writable_tmp() -> None:
    result = render_script(script("--container-readonly"))
    volumes = {v["name"]: v for v in pod_spec(result)["volumes"]}
    assert volumes["sbatch-k8s-tmp"]["emptyDir"] == {}
    mounts = {m["mountPath"]: m for m in container(result)["volumeMounts"]}
    assert mounts["/tmp"] == {"name": "sbatch-k8s-tmp", "mountPath": "/tmp"}
    assert mounts["/tmp/sbatch-k8s"]["name"] == "sbatch-k8s-spool"
    assert container(result)["securityContext"]["readOnlyRootFilesystem"] is True


def test_read_only_root_keeps_a_users_tmp_mount() -> None:
    result = render_script(script("--container-readonly", "--partition=gpu",
                                  "--container-mounts=/home/alice/tmp:/tmp"))
    mounts = [m for m in container(result)["volumeMounts"] if m["mountPath"] == "/tmp"]
    assert [m["name"] for m in mounts] == ["home"]
    assert "sbatch-k8s-tmp" not in {v["name"] for v in pod_spec(result)["volumes"]}


@pytest.mark.parametrize("partition, name, source", [
    ("debug", "home", {"persistentVolumeClaim": {"claimName": "home"}}),
    ("gpu", "home", {"nfs": {"path": "/export/home", "server": "nfs.example"}}),
    ("gpu", "datasets", {"persistentVolumeClaim": {"claimName": "datasets",
                                                   "readOnly": True}}),
    ("gang", "scratch", {"hostPath": {"path": "/mnt/scratch/home"}}),
])
def test_partition_volumes(partition: str, name: str, source: dict) -> None:
    result = render_script(script(f"--partition={partition}"))
    volumes = {v["name"]: v for v in pod_spec(result)["volumes"]}
    assert volumes[name] == dict({"name": name}, **source)
    assert any(m["name"] == name for m in container(result)["volumeMounts"])


def test_container_mounts_are_sub_paths_of_partition_volumes() -> None:
    result = render_script(script("--container-mounts=/home/alice/data:/data:ro,"
                                  "/home:/h,/datasets/imagenet:/imagenet",
                                  "--partition=gpu"))
    mounts = container(result)["volumeMounts"][-3:]
    assert mounts == [
        {"name": "home", "mountPath": "/data", "readOnly": True, "subPath": "alice/data"},
        {"name": "home", "mountPath": "/h"},
        {"name": "datasets", "mountPath": "/imagenet", "readOnly": True,
         "subPath": "imagenet"}]


@pytest.mark.parametrize("mounts, word", [("/scratch/x:/x", "/scratch/x"),
                                          ("/home/alice:/home", "mounted twice"),
                                          ("data:/data", "absolute")])
def test_bad_container_mounts_are_refused(mounts: str, word: str) -> None:
    with pytest.raises(SlurmInputError) as caught:
        render_script(script(f"--container-mounts={mounts}"))
    assert word in caught.value.lines[0]


def _workdir(result) -> str:
    return json.loads(manifest(result, "ConfigMap")["data"]["job.json"])["workdir"]


@pytest.mark.parametrize("chdir, expected", [(None, "/home/alice/project"),
                                             ("sub/dir", "/home/alice/project/sub/dir"),
                                             ("/home/alice/other", "/home/alice/other")])
def test_working_directory_on_a_shared_volume(chdir, expected) -> None:
    directives = [f"--chdir={chdir}"] if chdir else []
    result = render_script(script(*directives))
    assert container(result)["workingDir"] == expected
    assert _workdir(result) == expected
    assert result.warnings == ()


def test_working_directory_off_shared_volumes_is_left_unset_with_a_warning() -> None:
    result = render_script(script("--chdir=/scratch/alice"))
    assert "workingDir" not in container(result)
    assert _workdir(result) == "/scratch/alice"
    assert result.warnings == (
        "the working directory /scratch/alice is not on a shared volume of partition debug: "
        "the job runs in /tmp when the image lacks it; node 0 copies its output files into "
        "its pod log, from which sbatch --wait and 'sattach --k8s-output <jobid>' write them "
        "into /scratch/alice while the pods exist; other files it writes stay inside the pods",)


def test_container_workdir_overrides_the_pods_working_directory() -> None:
    result = render_script(script("--container-workdir=/workspace"))
    assert container(result)["workingDir"] == "/workspace"
    assert _workdir(result) == "/home/alice/project"


def test_read_only_root_filesystem() -> None:
    result = render_script(script("--container-readonly"))
    assert container(result)["securityContext"]["readOnlyRootFilesystem"] is True
