"""``deploy/rbac.yaml`` (and the controller's Role in ``deploy/controller.yaml``) grant exactly
what the backend uses: on an emulated API server that authorizes by RBAC and enforces the
admission policy of ``deploy/policy.yaml``, a user bound as the file says runs every command
a user runs, job pods run node 0's part as the job ServiceAccount (recording their end,
releasing and cancelling the jobs that wait for them, of every kind) and the controller
runs as its own; nothing is refused, and every (resource, verb) the Roles grant was used by
at least one request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest
import yaml

from sbatch_k8s.backends.kubernetes.api import kinds
from tests.apiserver.support import wait_until
from tests.kube.real_nodes import skip_on_real_nodes
from tests.kube.harness import CONFIG, KubeSlurm, submitted_id
from tests.local.harness import REPO

pytestmark = pytest.mark.slow

USER = "alice"
NAMESPACE = "default"
#: The test partition, its pods running as the job ServiceAccount; ``gang``: with a Volcano
#: PodGroup (the emulated scheduler stands in for Volcano's, see the cluster fixture).
PARTITIONS = CONFIG + """\
[partitions.gang]
image = "python:3.12-slim"
pod_security = "baseline"
gang = "volcano"
[partitions.plain]
image = "python:3.12-slim"
pod_security = "baseline"
service_account = ""
"""
#: Workload kinds by target: (group, plural).
WORKLOADS = {"indexed-job": ("batch", "jobs"), "jobset": ("jobset.x-k8s.io", "jobsets"),
             "pytorchjob": ("kubeflow.org", "pytorchjobs"), "mpijob": ("kubeflow.org", "mpijobs")}
PLURALS = {"ServiceAccount": "serviceaccounts", "Role": "roles", "RoleBinding": "rolebindings",
           "ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings",
           "ValidatingAdmissionPolicy": "validatingadmissionpolicies",
           "ValidatingAdmissionPolicyBinding": "validatingadmissionpolicybindings"}
RBAC = "rbac.authorization.k8s.io"


def rbac_documents(name: str) -> List[Dict[str, Any]]:
    """The RBAC objects (and ServiceAccounts) of a file in ``deploy/``."""
    return [doc for doc in yaml.safe_load_all((REPO / "deploy" / name).read_text())
            if doc and doc["kind"] in PLURALS]


def policy_documents() -> List[Dict[str, Any]]:
    """The admission policies and bindings of ``deploy/policy.yaml``."""
    return [doc for doc in yaml.safe_load_all((REPO / "deploy" / "policy.yaml").read_text())
            if doc]


def roles_of(documents: List[Dict[str, Any]]) -> List[Tuple[str, List[Dict[str, Any]]]]:
    """(label as :mod:`tests.apiserver.rbac` names it, rules) of each Role and ClusterRole."""
    return [(f"Role/{NAMESPACE}/{d['metadata']['name']}" if d["kind"] == "Role"
             else f"ClusterRole/{d['metadata']['name']}", d["rules"])
            for d in documents if d["kind"] in ("Role", "ClusterRole")]


def apply(cluster: Any, documents: List[Dict[str, Any]]) -> None:
    """Create the objects as an administrator (``kubectl -n default apply``)."""
    from sbatch_k8s.backends.kubernetes.api.client import connect

    admin = connect(dict(os.environ, KUBECONFIG=cluster.kubeconfig))
    for doc in documents:
        version = doc["apiVersion"]
        prefix = f"/apis/{version}" if "/" in version else f"/api/{version}"
        scope = "" if doc["kind"].startswith(("Cluster", "Validating")) else \
            f"/namespaces/{NAMESPACE}"
        admin.request("POST", f"{prefix}{scope}/{PLURALS[doc['kind']]}", body=doc)


def kubeconfig(path: Path, url: str, user: str, token: str) -> str:
    """A kubeconfig for one bearer-token user."""
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": url}}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": user,
                                               "namespace": NAMESPACE}}]}))
    path.chmod(0o600)
    return str(path)


@pytest.fixture
def cluster(request: pytest.FixtureRequest) -> Iterator[Any]:
    """An emulated cluster authorizing by RBAC, with the files applied and ``alice`` bound
    as ``deploy/rbac.yaml``'s header says (overrides conftest's: the kubelet serves it)."""
    if request.config.getoption("--with-kube-apiserver"):
        pytest.skip("needs the emulator's record of authorization decisions")
    skip_on_real_nodes(request.config, "needs the emulator's record of authorization decisions")
    from tests.apiserver import EmulatedCluster

    with EmulatedCluster(rbac=True, scheduler_names=("default-scheduler", "volcano")) as em:
        apply(em, rbac_documents("rbac.yaml") + rbac_documents("controller.yaml") +
              policy_documents() + [
            {"apiVersion": f"{RBAC}/v1", "kind": "RoleBinding",
             "metadata": {"name": f"sbatch-k8s-{USER}"},
             "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "sbatch-k8s-user"},
             "subjects": [{"apiGroup": RBAC, "kind": "User", "name": USER}]},
            {"apiVersion": f"{RBAC}/v1", "kind": "RoleBinding",
             "metadata": {"name": f"sbatch-k8s-{USER}-ids"},
             "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "sbatch-k8s-ids"},
             "subjects": [{"apiGroup": RBAC, "kind": "User", "name": USER}]},
            {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRoleBinding",
             "metadata": {"name": f"sbatch-k8s-{USER}"},
             "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "sbatch-k8s-nodes"},
             "subjects": [{"apiGroup": RBAC, "kind": "User", "name": USER}]}])
        yield em


@pytest.fixture
def user_kube(cluster: Any, tmp_path: Path) -> Iterator[KubeSlurm]:
    """The commands, as ``alice``."""
    config = kubeconfig(tmp_path / "alice.kubeconfig", cluster.url, USER,
                        cluster.add_user(USER))
    slurm = KubeSlurm(tmp_path, config, config=PARTITIONS)
    yield slurm
    slurm.cleanup()


def _ok(kube: KubeSlurm, command: str, *args: str, timeout: float = 120) -> str:
    done = kube.run(command, *args, timeout=timeout)
    assert done.returncode == 0, (command, args, done.stdout, done.stderr)
    return done.stdout


def _sbatch(kube: KubeSlurm, *args: str) -> int:
    return submitted_id(_ok(kube, "sbatch", *args))


def _state(kube: KubeSlurm, job_id: int) -> str:
    return _ok(kube, "sacct", "-X", "-n", "-P", "-j", str(job_id), "-o", "State").strip()


def _controller(cluster: Any, kube: KubeSlurm) -> "subprocess.Popen[str]":
    """``sbatch-k8s controller`` with the token of its ServiceAccount."""
    from kubernetes import client

    token = client.CoreV1Api(cluster.api_client()).create_namespaced_service_account_token(
        "sbatch-k8s-controller", NAMESPACE, {"spec": {}}).status.token
    config = kubeconfig(kube.root / "controller.kubeconfig", cluster.url,
                        "controller", token)
    return subprocess.Popen([sys.executable, "-m", "sbatch_k8s.tool", "controller",
                             "--interval", "0.5", "-v"], cwd=kube.work,
                            env=dict(kube.env, KUBECONFIG=config,
                                     PYTHONPATH=str(REPO)), text=True,  # this checkout
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _workload(cluster: Any, target: str, job_id: int) -> Any:
    """The job's workload (read as the admin: no command reconciles), or None."""
    group, plural = WORKLOADS[target]
    found = [w for w in cluster.objects(plural, NAMESPACE, group)
             if w["metadata"].get("labels", {}).get("sbatch-k8s.io/job-id") == str(job_id)]
    return found[0] if found else None


def _suspended(workload: Any) -> bool:
    spec = workload["spec"]
    return bool(spec.get("suspend") or (spec.get("runPolicy") or {}).get("suspend"))


def _controller_session(cluster: Any, kube: KubeSlurm) -> None:
    """Node 0 without an account, nobody typing after sbatch: the controller alone releases
    and cancels (``--kill-on-invalid-dep``) the dependents of a failed job, of every kind."""
    kube.script("fails.sh", "#!/bin/sh\nsleep 1\nexit 1\n")
    upstream = _sbatch(kube, "-p", "plain", "--hold", "fails.sh")   # until all are submitted
    killed, released = {}, {}
    for target in WORKLOADS:
        killed[target] = _sbatch(kube, "-p", "plain", f"--k8s-target={target}",
                                 f"--dependency=afterok:{upstream}", "--kill-on-invalid-dep=yes",
                                 "ok.sh")
        released[target] = _sbatch(kube, "-p", "plain", f"--k8s-target={target}",
                                   f"--dependency=afternotok:{upstream}", "ok.sh")
    _ok(kube, "scontrol", "release", str(upstream))
    # a write that meets a newer version of the record (409) reads it again
    cluster.faults.add(method="PATCH", status=409, times=1,
                       path=rf"/configmaps/sbatch-k8s-job-{killed['indexed-job']}$")
    controller = _controller(cluster, kube)
    try:
        wait_until(lambda: all(_workload(cluster, t, j) is None for t, j in killed.items()),
                   180, "the controller cancelled the dependents that can never run")
        wait_until(lambda: not any(_suspended(_workload(cluster, t, j))
                                   for t, j in released.items()),
                   180, "the controller released the dependents")
    finally:
        controller.terminate()
        _, log = controller.communicate(timeout=60)
    assert "Traceback" not in log, log
    for job in released.values():
        _ok(kube, "scancel", str(job))


def _node0_session(cluster: Any, kube: KubeSlurm) -> None:
    """Node 0 of a failed job (the job ServiceAccount, nothing else running) releases and
    cancels (``--kill-on-invalid-dep``) the jobs waiting for it, of every kind; its end is
    in its record before any command looks."""
    kube.script("fails.sh", "#!/bin/sh\nsleep 1\nexit 1\n")
    upstream = _sbatch(kube, "--hold", "fails.sh")   # until all are submitted
    killed, released = {}, {}
    for target in WORKLOADS:
        killed[target] = _sbatch(kube, "-p", "plain", f"--k8s-target={target}",
                                 f"--dependency=afterok:{upstream}", "--kill-on-invalid-dep=yes",
                                 "ok.sh")
        released[target] = _sbatch(kube, "-p", "plain", f"--k8s-target={target}",
                                   f"--dependency=afternotok:{upstream}", "ok.sh")
    # singleton names no job: node 0 of the earlier job of its name releases it all the same
    solo = _sbatch(kube, "-p", "plain", "--dependency=singleton", "fails.sh")
    _ok(kube, "scontrol", "release", str(upstream))
    wait_until(lambda: all(_workload(cluster, t, j) is None for t, j in killed.items()),
               180, "node 0 cancelled the dependents that can never run")
    wait_until(lambda: not any(_suspended(_workload(cluster, t, j))
                               for t, j in released.items()),
               180, "node 0 released the dependents")
    wait_until(lambda: not _suspended(_workload(cluster, "indexed-job", solo)), 180,
               "node 0 released the singleton of its name")
    for job in released.values():
        _ok(kube, "scancel", str(job))


def _read(kube: KubeSlurm, name: str) -> str:
    try:
        return kube.read(name)
    except FileNotFoundError:
        return ""


def _user_session(cluster: Any, kube: KubeSlurm) -> None:
    """Everything a user does, each target's workload kind included."""
    kube.script("ok.sh", "#!/bin/sh\necho ok\n")
    kube.script("sleep.sh", "#!/bin/sh\nsleep 60\n")
    plain = _sbatch(kube, "ok.sh")
    _ok(kube, "sbatch", "--wait", "ok.sh", timeout=60)
    assert "to start at" in kube.run("sbatch", "--test-only", "ok.sh").stderr
    array = _sbatch(kube, "--array=0-1", "sleep.sh")
    dependent = _sbatch(kube, f"--dependency=afterok:{plain}", "ok.sh")
    held = _sbatch(kube, "--hold", "ok.sh")
    _ok(kube, "squeue")
    _ok(kube, "scontrol", "show", "job", str(held))
    _ok(kube, "scontrol", "release", str(held))
    later = _sbatch(kube, "--begin=now+3600", "ok.sh")
    _ok(kube, "scontrol", "hold", str(later))
    _ok(kube, "scontrol", "release", str(later))
    _ok(kube, "scancel", str(later))
    sleeper = _sbatch(kube, "sleep.sh")
    wait_until(lambda: "RUNNING" in _ok(kube, "squeue", "-h", "-j", str(sleeper), "-o", "%T"),
               120, "the sleeper runs")
    _ok(kube, "scancel", "--signal=USR1", str(sleeper))
    wait_until(lambda: "RUNNING" in _ok(kube, "squeue", "-h", "-j", f"{array}_1", "-o", "%T"),
               120, "the array element runs")
    _ok(kube, "scancel", f"{array}_1")           # deletes that element's pod
    kube.script("lost.sh", "#!/bin/sh\necho started\nsleep 60\n")
    lost = _sbatch(kube, "--requeue", "-o", "lost-%j.out", "lost.sh")
    wait_until(lambda: "started" in _read(kube, f"lost-{lost}.out"), 120,
               "the script of the job whose pod is lost runs")
    node0 = kube.objects(kinds.POD, f"sbatch-k8s.io/job-id={lost}")[0]["metadata"]["name"]
    kube.api().delete(kinds.POD, node0, NAMESPACE)  # node 0 asks its pod's owners why
    wait_until(lambda: "NODE_FAIL" in _ok(kube, "sacct", "-n", "-D", "-X", "-j", str(lost),
                                          "-o", "State"), 120, "the lost pod's NODE_FAIL")
    _ok(kube, "scancel", str(lost))
    _ok(kube, "scancel", str(sleeper), str(array))
    for target in ("jobset", "pytorchjob", "mpijob"):
        job = _sbatch(kube, f"--k8s-target={target}", "--hold", "ok.sh")
        _ok(kube, "scontrol", "release", str(job))
        _ok(kube, "squeue")
        _ok(kube, "scancel", str(job))
    gang = _sbatch(kube, "-p", "gang", "-N", "2", "ok.sh")
    cluster.faults.add(method="POST", path=rf"/apis/batch/v1/namespaces/{NAMESPACE}/jobs",
                       status=422, times=1, body_message="injected: object is invalid")
    failed = kube.run("sbatch", "-p", "gang", "-N", "2", "ok.sh")   # deletes what it created
    assert failed.returncode == 1 and "injected" in failed.stderr, failed.stderr
    assert "ok" in _ok(kube, "srun", "-N", "1", "echo", "ok", timeout=180)
    for job in (plain, dependent, gang):
        wait_until(lambda j=job: _state(kube, j) == "COMPLETED", 180, f"job {job} completed")
    _ok(kube, "scontrol", "requeue", str(gang))          # a copy of the workload, its companions
    wait_until(lambda: _state(kube, gang) == "COMPLETED", 180, "the requeued job completed")
    _ok(kube, "sacct")
    _ok(kube, "sinfo")
    _ok(kube, "scontrol", "show", "node")
    _ok(kube, "scontrol", "show", "partition")


def test_the_roles_grant_exactly_what_is_used(cluster: Any, user_kube: KubeSlurm,
                                               kubelet: Any) -> None:
    try:
        _user_session(cluster, user_kube)
        _node0_session(cluster, user_kube)
        _controller_session(cluster, user_kube)
    except BaseException:
        print("refused:", *cluster.rbac.refused(), sep="\n  ")   # shown on failure
        print("pods:", *[(p["metadata"]["name"], p["status"].get("phase"))
                         for p in cluster.objects("pods", NAMESPACE)], sep="\n  ")
        raise
    rbac = cluster.rbac
    assert rbac.refused() == []
    done = {(d.request.user, d.request.resource, d.request.verb) for d in rbac.decisions}
    job_account = f"system:serviceaccount:{NAMESPACE}:sbatch-k8s-job"
    controller = f"system:serviceaccount:{NAMESPACE}:sbatch-k8s-controller"
    assert (job_account, "configmaps", "patch") in done        # node 0 recorded its job's end
    assert (job_account, "pods", "get") in done                # and asked why its pod stopped
    assert {(controller, plural, verb) for _, plural in WORKLOADS.values()
            for verb in ("get", "patch", "delete")} <= done     # released and cancelled
    assert (USER, "pods/log", "get") in done
    assert (USER, "secrets", "get") not in done        # nobody reads a job's Secret
    unused = {label: rbac.unused(label, rules) for label, rules in
              roles_of(rbac_documents("rbac.yaml") + rbac_documents("controller.yaml"))}
    unused = {label: grants for label, grants in unused.items() if grants}
    assert unused == {}, "\n".join(f"{label}: {grants}" for label, grants in unused.items())
