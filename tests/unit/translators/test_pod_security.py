"""Every rendered pod passes the restricted Pod Security Standard by default (checked by
:mod:`tests.unit.translators.pod_security`, written from the standard), for every target and
a spread of options; ``run_as`` and ``pod_security`` do what the configuration says."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Dict, List

import pytest

from parsers.input_errors import SlurmInputError
from translators import render
from translators.config import ClusterConfig, ConfigError, VolumeConfig, cluster_config_from_dict
from translators.security import POD_SECURITY, RUN_AS, VOLUME_SOURCES
from tests.unit.translators import pod_security
from tests.unit.translators.support import (
    CONFIG,
    CONTEXT,
    TARGET_NAMES,
    inputs_for,
    render_script,
    script,
)

#: A cluster whose partitions keep the default level (restricted), one per ``run_as``.
RESTRICTED = cluster_config_from_dict({
    "cluster_name": "k8s",
    "partitions": {
        name: dict({"namespace": "default", "image": "python:3.12-slim",
                    "node_cpus": 64, "node_gpus": 8, "node_memory_mb": 512000,
                    "gpu_type_label": "nvidia.com/gpu.product",
                    "gpu_types": {"a100": "NVIDIA-A100"},
                    "volumes": [{"name": "home", "mount_path": "/home", "pvc": "home"},
                                {"name": "data", "mount_path": "/data", "pvc": "data",
                                 "read_only": True}]},
                   **extra)
        for name, extra in (("uid", {}), ("submitter", {"run_as": "submitter"}),
                            ("image", {"run_as": "image"}),
                            ("custom", {"run_as_uid": 4242, "run_as_gid": 4343}))}})

#: The options each target is rendered with: one line of sbatch words each.
OPTION_SPREAD: Dict[str, List[str]] = {
    "plain": [],
    "two-nodes": ["--nodes=2", "--ntasks-per-node=4"],
    "gpus": ["--nodes=2", "--gpus-per-node=a100:4", "--cpus-per-gpu=8"],
    "gres": ["--gres=gpu:2", "--mem=64G"],
    "exclusive": ["--nodes=2", "--exclusive"],
    "array": ["--array=0-3%2"],
    "array-multinode": ["--nodes=2", "--array=1,3"],
    "container": ["--container-image=nvcr.io/nvidia/pytorch:24.01-py3",
                  "--container-mounts=/home/alice/data:/in:ro,/data/x:/x",
                  "--container-workdir=/workspace", "--container-readonly"],
    "chdir-unshared": ["--chdir=/scratch/run"],
    "hold-time-requeue": ["--hold", "--time=1:00:00", "--requeue", "--signal=B:USR1@90"],
    "constraint": ["--constraint=fast", "--nodes=2", "--ntasks=3"],
}


def _render(words: List[str], partition: str, target: str, config: ClusterConfig = RESTRICTED,
            context: Any = CONTEXT) -> Any:
    inputs = inputs_for(script(f"--partition={partition}"), words, target=target,
                        config=config)
    return render(dataclasses.replace(inputs, context=context))


def _pods(result: Any) -> List[Any]:
    pods = pod_security.pods_in(result.manifests)
    assert pods, "no pod template rendered"
    return pods


@pytest.mark.parametrize("partition", ["uid", "submitter", "custom"])
@pytest.mark.parametrize("options", sorted(OPTION_SPREAD))
@pytest.mark.parametrize("target", TARGET_NAMES)
def test_every_pod_passes_restricted(target: str, options: str, partition: str) -> None:
    result = _render(OPTION_SPREAD[options], partition, target)
    for where, pod in _pods(result):
        assert pod_security.violations(pod) == [], where


@pytest.mark.parametrize("target", TARGET_NAMES)
def test_the_image_user_passes_restricted_as_rendered(target: str) -> None:
    # runAsNonRoot without a uid: admitted; the kubelet then refuses a root image.
    for _, pod in _pods(_render(["--nodes=2"], "image", target)):
        assert pod_security.violations(pod) == []
        security = pod["spec"]["securityContext"]
        assert security["runAsNonRoot"] is True and "runAsUser" not in security
        assert "fsGroup" not in security


@pytest.mark.parametrize("target", TARGET_NAMES)
def test_golden_partitions_pass_their_level(target: str) -> None:
    debug = _pods(_render([], "debug", target, CONFIG))
    assert all(pod_security.violations(pod) == [] for _, pod in debug)
    for _, pod in _pods(_render([], "gpu", target, CONFIG)):      # baseline
        assert pod_security.violations(pod, "baseline") == []
        assert pod_security.violations(pod)      # root allowed, nfs: not restricted
    for _, pod in _pods(_render([], "gang", target, CONFIG)):     # privileged: hostPath
        assert pod_security.violations(pod, "baseline") == [
            "spec.volumes[6] (scratch) must not be a hostPath volume"]


@pytest.mark.parametrize("partition, ids", [
    ("uid", (1000, 1000)), ("custom", (4242, 4343)), ("submitter", (4242, 4343))])
def test_run_as_sets_the_pods_ids_and_fs_group(partition: str, ids: Any) -> None:
    context = dataclasses.replace(CONTEXT, uid=4242, gid=4343)
    for _, pod in _pods(_render(["--nodes=2"], partition, "pytorchjob", context=context)):
        security = pod["spec"]["securityContext"]
        assert (security["runAsUser"], security["runAsGroup"]) == ids
        assert security["fsGroup"] == ids[1]
        assert security["fsGroupChangePolicy"] == "OnRootMismatch"
        volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
        # The token and the job's files: root and the pod's group only.
        assert volumes["sbatch-k8s-token"]["secret"]["defaultMode"] == 0o440
        assert volumes["sbatch-k8s-job"]["configMap"]["defaultMode"] == 0o440


@pytest.mark.parametrize("partition, supplemental", [
    ("submitter", [10, 4444]), ("uid", None), ("custom", None)])
def test_the_submitters_other_groups_come_along(partition: str, supplemental: Any) -> None:
    context = dataclasses.replace(CONTEXT, uid=4242, gid=4343, groups=(4444, 4343, 10))
    pod = _pods(_render([], partition, "indexed-job", context=context))[0][1]
    assert pod["spec"]["securityContext"].get("supplementalGroups") == supplemental
    assert pod_security.violations(pod) == []


def test_a_shared_working_directory_written_as_another_uid_is_warned_about() -> None:
    bob = dataclasses.replace(CONTEXT, uid=1001, gid=1001)
    warning = ("partition uid runs tasks as uid 1000 (run_as_uid), not as uid 1001: what "
               "they write in /home/alice/project belongs to uid 1000, and they may write "
               "only where that uid may")
    assert warning in _render([], "uid", "indexed-job", context=bob).warnings
    # Not when the uid is the submitter's, the submitter's own, or the directory unshared.
    assert not any("run_as_uid" in w for w in _render([], "uid", "indexed-job").warnings)
    assert not any("run_as_uid" in w for w in
                   _render([], "submitter", "indexed-job", context=bob).warnings)
    assert not any("run_as_uid" in w for w in _render(["--chdir=/scratch"], "uid",
                                                      "indexed-job", context=bob).warnings)


def test_the_image_user_keeps_files_readable_in_the_pod() -> None:
    pod = _pods(_render([], "image", "indexed-job"))[0][1]
    volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
    assert volumes["sbatch-k8s-token"]["secret"]["defaultMode"] == 0o444


def test_a_root_submitter_is_refused_where_pods_must_not_run_as_root() -> None:
    root = dataclasses.replace(CONTEXT, user="root", uid=0, gid=0, group="root")
    with pytest.raises(SlurmInputError) as caught:
        _render([], "submitter", "indexed-job", context=root)
    assert caught.value.render("sbatch") == (
        "sbatch: error: Batch job submission failed: Access/permission denied (partition "
        "submitter runs jobs as their submitter, and the restricted Pod Security Standard "
        "admits no pod running as root, uid 0)\n")
    # The default uid does not depend on who submits; baseline admits root.
    assert _render([], "uid", "indexed-job", context=root).manifests
    security = _pods(_render([], "gpu", "indexed-job", CONFIG, root))[0][1]["spec"][
        "securityContext"]
    assert security["runAsUser"] == 0 and "runAsNonRoot" not in security


def test_baseline_pods_are_as_the_image_makes_them() -> None:
    config = cluster_config_from_dict(
        {"partitions": {"p": {"image": "i", "pod_security": "baseline"}}})
    pod = _pods(_render([], "p", "indexed-job", config))[0][1]
    assert "securityContext" not in pod["spec"]
    assert "securityContext" not in pod["spec"]["containers"][0]


@pytest.mark.parametrize("partition, message", [
    ({"pod_security": "restricted",
      "volumes": [{"name": "h", "mount_path": "/h", "nfs": {"server": "s", "path": "/p"}}]},
     'partitions.p.volumes[0] (h): nfs volumes break the restricted Pod Security Standard '
     '(pod_security = "restricted"): give the export as a PersistentVolume and name its '
     'claim in pvc, or set pod_security = "baseline"'),
    ({"pod_security": "baseline",
      "volumes": [{"name": "h", "mount_path": "/h", "host_path": "/x"}]},
     'partitions.p.volumes[0] (h): hostPath volumes break the baseline Pod Security Standard '
     '(pod_security = "baseline"): give the directory as a PersistentVolume and name its '
     'claim in pvc, or set pod_security = "privileged"'),
    ({"run_as_uid": 0},
     'partitions.p.run_as_uid: uid 0 is root, which pod_security = "restricted" does not '
     'admit'),
    ({"run_as": "root"},
     "partitions.p.run_as must be one of uid, submitter, image, not 'root'"),
    ({"pod_security": "open"},
     "partitions.p.pod_security must be one of restricted, baseline, privileged, not 'open'"),
])
def test_the_configuration_refuses_what_the_level_does_not_admit(
        partition: Dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        cluster_config_from_dict({"partitions": {"p": partition}})
    assert str(caught.value) == message


def test_looser_levels_admit_their_volumes() -> None:
    config = cluster_config_from_dict({"partitions": {
        "a": {"pod_security": "baseline", "run_as_uid": 0,
              "volumes": [{"name": "h", "mount_path": "/h", "nfs": {"server": "s", "path": "/"}}]},
        "b": {"pod_security": "privileged",
              "volumes": [{"name": "h", "mount_path": "/h", "host_path": "/x"}]}}})
    assert [p.pod_security for p in config.partitions] == ["baseline", "privileged"]


def test_the_tables_cover_the_schema() -> None:
    sources = [f.name for f in dataclasses.fields(VolumeConfig)
               if f.metadata.get("doc", "").startswith("source:")]
    assert sorted(VOLUME_SOURCES) == sorted(sources)
    assert [level.rank for level in POD_SECURITY.values()] == list(range(len(POD_SECURITY)))
    assert all(level.default_run_as in RUN_AS for level in POD_SECURITY.values())


@pytest.mark.parametrize("change, expected", [
    (lambda p: p["spec"].update(hostNetwork=True), "spec.hostNetwork must not be true"),
    (lambda p: p["spec"].update(hostPID=True), "spec.hostPID must not be true"),
    (lambda p: _main(p)["securityContext"].update(privileged=True),
     "spec.containers[0].securityContext.privileged must not be true"),
    (lambda p: _main(p)["securityContext"]["capabilities"].update(add=["SYS_ADMIN"]),
     "spec.containers[0].securityContext.capabilities.add must not add SYS_ADMIN"),
    (lambda p: p["spec"]["volumes"].append({"name": "h", "hostPath": {"path": "/"}}),
     "spec.volumes[1] (h) must not be a hostPath volume"),
    (lambda p: p["spec"]["volumes"].append({"name": "n", "nfs": {"server": "s", "path": "/"}}),
     "spec.volumes[1] (n) must not be of type nfs"),
    (lambda p: _main(p).update(ports=[{"containerPort": 80, "hostPort": 80}]),
     "spec.containers[0].ports[0].hostPort must not be set"),
    (lambda p: p["spec"]["securityContext"].update(seLinuxOptions={"user": "u"}),
     "spec.securityContext.seLinuxOptions.user must not be set"),
    (lambda p: _main(p)["securityContext"].update(procMount="Unmasked"),
     "spec.containers[0].securityContext.procMount must be Default"),
    (lambda p: p["spec"]["securityContext"].update(sysctls=[{"name": "kernel.msgmax"}]),
     "spec.securityContext.sysctls: kernel.msgmax is not a safe sysctl"),
    (lambda p: p["metadata"].update(annotations={
        pod_security.APPARMOR_ANNOTATION + "main": "unconfined"}),
     "metadata.annotations[container.apparmor.security.beta.kubernetes.io/main] must not be "
     "unconfined"),
    (lambda p: _main(p)["securityContext"].pop("allowPrivilegeEscalation"),
     "spec.containers[0].securityContext.allowPrivilegeEscalation must be false"),
    (lambda p: p["spec"]["securityContext"].pop("runAsNonRoot"),
     "spec.containers[0].securityContext.runAsNonRoot must be true (or the pod's)"),
    (lambda p: p["spec"]["securityContext"].update(runAsUser=0),
     "spec.securityContext.runAsUser must not be 0"),
    (lambda p: p["spec"]["securityContext"].pop("seccompProfile"),
     "spec.containers[0].securityContext.seccompProfile must be RuntimeDefault or Localhost "
     "(or the pod's)"),
    (lambda p: _main(p)["securityContext"].update(seccompProfile={"type": "Unconfined"}),
     "spec.containers[0].securityContext.seccompProfile.type must not be Unconfined"),
    (lambda p: _main(p)["securityContext"]["capabilities"].update(drop=["NET_RAW"]),
     "spec.containers[0].securityContext.capabilities.drop must include ALL"),
    (lambda p: p["spec"].update(initContainers=[{"name": "init", "image": "i"}]),
     "spec.initContainers[0].securityContext.allowPrivilegeEscalation must be false"),
])
def test_the_checker_finds_each_violation(change: Any, expected: str) -> None:
    pod = copy.deepcopy(COMPLIANT)
    assert pod_security.violations(pod) == []
    change(pod)
    assert expected in pod_security.violations(pod)


COMPLIANT: Dict[str, Any] = {
    "metadata": {"labels": {"app": "x"}},
    "spec": {
        "securityContext": {"runAsNonRoot": True, "runAsUser": 1000,
                            "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{"name": "main", "image": "i",
                        "securityContext": {"allowPrivilegeEscalation": False,
                                            "capabilities": {"drop": ["ALL"]}}}],
        "volumes": [{"name": "c", "configMap": {"name": "c"}}],
    },
}


def _main(pod: Dict[str, Any]) -> Dict[str, Any]:
    container: Dict[str, Any] = pod["spec"]["containers"][0]
    return container


def test_the_print_of_a_job_passes_restricted() -> None:
    # The golden configuration's default partition, as `sbatch --k8s-print` renders it.
    result = render_script(script("--nodes=2", "--gpus-per-node=0"), target="jobset")
    assert [pod_security.violations(pod) for _, pod in _pods(result)] == [[]]
