"""A namespace per user (a partition's ``namespace = "<prefix>-{user}"``): each user's jobs
live in their own namespace, which closes what RBAC cannot split by owner in a shared one
(reading another user's pod logs and job ConfigMaps); ids stay cluster-wide; an operator
(``deploy/operators.yaml``) lists and cancels every user's jobs across namespaces.
Emulated API server, and opt-in the real one (:mod:`tests.kube.multi_user`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Iterator, List

import pytest

from sbatch_k8s.backends.kubernetes.api import kinds
from sbatch_k8s.backends.kubernetes.api.client import KubeError
from tests.apiserver.support import wait_until
from tests.kube.real_nodes import skip_on_real_nodes
from tests.kube.harness import CONFIG, KubeSlurm, submitted_id
from tests.local.harness import until_exists
from tests.kube.multi_user import (
    POLICY_LABEL,
    Site,
    _binding,
    deploy_documents,
    emulated_site,
    real_site,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def site(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Site]:
    skip_on_real_nodes(request.config, "the users' restricted pods may not mount the test "
                       "directory (the real API server tier runs these)")
    if request.config.getoption("--with-kube-apiserver"):
        if not os.environ.get("KUBECONFIG"):
            pytest.skip("--with-kube-apiserver needs $KUBECONFIG")
        made = real_site(tmp_path)
    else:
        made = emulated_site(tmp_path)
    with made as ready:
        yield ready


def _user_namespaces(site: Site) -> Dict[str, str]:
    """Create ``<namespace>-alice`` and ``-bob``, each with the Roles and its user bound;
    the operators' ClusterRole bound to their group."""
    admin = site.admin()
    made = {user: f"{site.namespace}-{user}" for user in ("alice", "bob")}
    for user, namespace in made.items():
        admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {
            "name": namespace, "labels": {POLICY_LABEL: site.namespace,
                                          "sbatch-k8s.io/test-namespace": "true"}}}, None)
        docs = [d for d in deploy_documents("rbac.yaml") if not d["kind"].startswith("Cluster")]
        docs.append(_binding("RoleBinding", f"sbatch-k8s-{user}", "Role", "sbatch-k8s-user",
                             user))
        saved = site.namespace
        site.namespace = namespace
        try:
            site.apply(docs)
        finally:
            site.namespace = saved
    operators = deploy_documents("operators.yaml")
    if site.real:                        # cluster-scoped: named for the test
        for doc in operators:
            doc["metadata"]["name"] += f"-{site.namespace}"
            if doc["kind"] == "ClusterRoleBinding":
                doc["roleRef"]["name"] += f"-{site.namespace}"
        site.policies += [f"/apis/rbac.authorization.k8s.io/v1/{plural}/"
                          f"{doc['metadata']['name']}" for doc, plural in
                          zip(operators, ("clusterroles", "clusterrolebindings"))]
        site.policies += [f"/api/v1/namespaces/{n}" for n in made.values()]
    site.apply(operators)
    return made


def _slurm(site: Site, user: str) -> KubeSlurm:
    config = f'state_namespace = "{site.namespace}"\n' + CONFIG + \
        f'namespace = "{site.namespace}-{{user}}"\n'
    return KubeSlurm(site.root / user, site.kubeconfigs[user], config=config,
                     namespace=f"{site.namespace}-{user}")


def test_each_user_in_a_namespace_of_their_own(site: Site) -> None:
    from tests.kubelet import TestKubelet

    made = _user_namespaces(site)
    slurms = {user: _slurm(site, user) for user in ("alice", "bob", "carol")}
    a, b, operator = slurms["alice"], slurms["bob"], slurms["carol"]
    try:
        with TestKubelet(site.cluster.kubeconfig, nodes=1):
            for slurm in (a, b):       # each job runs until cancelled (or its stop file)
                slurm.script("sleep.sh", "#!/bin/sh\necho in $SLURM_JOB_USER\n"
                             f"{until_exists(slurm.work / 'stop')}\n")
            first = submitted_id(_ok(a, "sbatch", "sleep.sh"))
            second = submitted_id(_ok(b, "sbatch", "sleep.sh"))
            assert second == first + 1                       # one counter for everyone
            assert a.objects(kinds.JOB)[0]["metadata"]["namespace"] == made["alice"]
            assert b.objects(kinds.JOB)[0]["metadata"]["namespace"] == made["bob"]
            wait_until(lambda: "RUNNING" in _ok(a, "squeue", "-h", "-o", "%T"), 180,
                       "A's job runs")
            assert str(first) not in _ok(b, "squeue", "-h", "-t", "all", "-o", "%i")
            pod = a.objects(kinds.POD)[0]["metadata"]["name"]
            bob = site.api("bob")
            refused: List[str] = []
            for what, call in (
                    ("A's pod log", lambda: bob.request(
                        "GET", f"/api/v1/namespaces/{made['alice']}/pods/{pod}/log")),
                    ("A's job ConfigMap", lambda: bob.get(
                        kinds.CONFIG_MAP, f"sleep-sh-{first}", made["alice"])),
                    ("A's records", lambda: bob.list(kinds.CONFIG_MAP, made["alice"]))):
                with pytest.raises(KubeError) as denied:
                    call()
                assert denied.value.status == 403, what
                refused.append(what)
            listed = _ok(operator, "squeue", "-h", "-o", "%i %u")
            assert f"{first} alice" in listed and f"{second} bob" in listed, listed
            accounted = _ok(operator, "sacct", "-X", "-n", "-P", "-o", "JobID,User")
            assert f"{first}|alice" in accounted and f"{second}|bob" in accounted, accounted
            _ok(operator, "scancel", str(first), str(second))
            wait_until(lambda: "CANCELLED" in _ok(a, "sacct", "-X", "-n", "-j", str(first),
                                                  "-o", "State"), 60, "cancelled")
            print("\nrefused to B across namespaces:", ", ".join(refused))
    finally:
        for slurm in slurms.values():
            (slurm.work / "stop").touch()
            slurm.cleanup()


def _ok(slurm: KubeSlurm, *args: str) -> str:
    done = slurm.run(*args)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout
