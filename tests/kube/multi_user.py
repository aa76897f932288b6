"""A shared cluster with users A (alice), B (bob) and an operator (carol), for the attack tests.

The same site on both tiers: ``deploy/rbac.yaml`` and ``deploy/policy.yaml`` applied as an
administrator would, each user bound with the users' Role (and the id counter's), carol in
the operators group ``sbatch-k8s:operators``. On the emulated API server (RBAC on, the
policies evaluated) users are bearer tokens; on a real one (``--with-kube-apiserver``)
they are client certificates signed by the cluster's CA (``$SBATCHK8S_TEST_CA``, default
``/tmp/k8s-real/pki/ca.{crt,key}``), the test's namespace is labelled for the policies'
bindings (named for the test, limited to its namespace: other tests on the server are left
alone) and holds the id counter.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List

import yaml

from tests.kube.harness import CONFIG, KubeSlurm
from tests.local.harness import REPO

RBAC = "rbac.authorization.k8s.io"
OPERATORS = "sbatch-k8s:operators"
USERS = {"alice": (), "bob": (), "carol": (OPERATORS,)}
PLURALS = {"ConfigMap": "configmaps", "ServiceAccount": "serviceaccounts", "Role": "roles",
           "RoleBinding": "rolebindings",
           "ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings",
           "ValidatingAdmissionPolicy": "validatingadmissionpolicies",
           "ValidatingAdmissionPolicyBinding": "validatingadmissionpolicybindings"}
#: The label the real tier's policy bindings select the test's namespace by.
POLICY_LABEL = "sbatch-k8s.io/policy-test"


def deploy_documents(name: str) -> List[Dict[str, Any]]:
    """The documents of a file of ``deploy/``."""
    return [d for d in yaml.safe_load_all((REPO / "deploy" / name).read_text()) if d]


def _path(doc: Dict[str, Any], namespace: str) -> str:
    version = doc["apiVersion"]
    prefix = f"/apis/{version}" if "/" in version else f"/api/{version}"
    cluster_wide = doc["kind"].startswith(("Cluster", "Validating"))
    scope = "" if cluster_wide else f"/namespaces/{namespace}"
    return f"{prefix}{scope}/{PLURALS[doc['kind']]}"


def _binding(kind: str, name: str, role_kind: str, role: str, user: str) -> Dict[str, Any]:
    return {"apiVersion": f"{RBAC}/v1", "kind": kind, "metadata": {"name": name},
            "roleRef": {"apiGroup": RBAC, "kind": role_kind, "name": role},
            "subjects": [{"apiGroup": RBAC, "kind": "User", "name": user}]}


@dataclass
class Site:
    """The cluster, its namespace, the users' kubeconfigs and the admin's client."""

    cluster: Any
    namespace: str
    kubeconfigs: Dict[str, str]
    root: Path
    policies: List[str] = field(default_factory=list)
    real: bool = False

    def admin(self) -> Any:
        from sbatch_k8s.backends.kubernetes.api.client import connect

        return connect(dict(os.environ, KUBECONFIG=self.cluster.kubeconfig))

    def api(self, user: str) -> Any:
        """A KubeClient with ``user``'s credentials."""
        from sbatch_k8s.backends.kubernetes.api.client import connect

        return connect({"KUBECONFIG": self.kubeconfigs[user], "SBATCHK8S_API_RETRY_S": "2"})

    def slurm(self, user: str) -> KubeSlurm:
        """``user``'s commands (their own state directory and working directory)."""
        config = CONFIG
        if self.real:
            config = f'state_namespace = "{self.namespace}"\n' + config
        return KubeSlurm(self.root / user, self.kubeconfigs[user], config=config,
                         namespace=self.namespace)

    def apply(self, documents: List[Dict[str, Any]]) -> None:
        admin = self.admin()
        for doc in documents:
            admin.request("POST", _path(doc, self.namespace), body=doc)

    def remove_policies(self) -> None:
        """Delete the real tier's cluster-scoped policies and bindings of this test."""
        admin = self.admin()
        for path in self.policies:
            try:
                admin.request("DELETE", path)
            except Exception:
                pass


def set_up(site: Site) -> None:
    """Apply ``deploy/`` and bind the users (module docstring)."""
    documents = [d for d in deploy_documents("rbac.yaml") if d["kind"] != "ClusterRole"]
    documents += [d for d in deploy_documents("controller.yaml") if d["kind"] != "Deployment"]
    documents += deploy_documents("job-commands.yaml")
    policies = deploy_documents("policy.yaml")
    if site.real:                      # named for the test, bound to its namespace only
        suffix = "-" + site.namespace
        for doc in policies:
            doc["metadata"]["name"] += suffix
            if doc["kind"].endswith("Binding"):
                doc["spec"]["policyName"] += suffix
                doc["spec"]["matchResources"] = {"namespaceSelector": {
                    "matchLabels": {POLICY_LABEL: site.namespace}}}
        site.policies = [f"{_path(d, site.namespace)}/{d['metadata']['name']}"
                         for d in policies]
    documents += policies
    if site.real:   # ids no other test's namespace holds (an operator sees them all)
        import random

        documents.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": "sbatch-k8s-job-ids", "labels": {
                "app.kubernetes.io/managed-by": "sbatch-k8s",
                "sbatch-k8s.io/kind": "job-id-counter"}},
            "data": {"next": str(random.randrange(10 ** 6, 10 ** 8))}})
    for user in USERS:
        documents.append(_binding("RoleBinding", f"sbatch-k8s-{user}", "Role",
                                  "sbatch-k8s-user", user))
        documents.append(_binding("RoleBinding", f"sbatch-k8s-{user}-ids", "Role",
                                  "sbatch-k8s-ids", user))
    site.apply(documents)


def emulated_site(root: Path) -> Any:
    """A context manager yielding the emulated site."""
    from contextlib import contextmanager

    from tests.apiserver import EmulatedCluster
    from tests.kube.test_rbac import kubeconfig

    @contextmanager
    def made() -> Any:
        with EmulatedCluster(rbac=True) as cluster:
            configs = {user: kubeconfig(root / f"{user}.kubeconfig", cluster.url, user,
                                        cluster.access.add_user(user, groups=groups))
                       for user, groups in USERS.items()}
            site = Site(cluster, "default", configs, root)
            set_up(site)
            yield site
    return made()


def real_site(root: Path) -> Any:
    """A context manager yielding the site on the real API server of ``$KUBECONFIG``."""
    from contextlib import contextmanager

    from tests.kube.client_certs import user_kubeconfig
    from tests.kube.real_cluster import RealCluster

    @contextmanager
    def made() -> Any:
        admin = os.environ["KUBECONFIG"]
        ca = os.environ.get("SBATCHK8S_TEST_CA", "/tmp/k8s-real/pki/ca")
        cluster = RealCluster(admin, str(root)).start()
        site = Site(cluster, cluster.namespace, {}, root, real=True)
        try:
            site.admin().merge_patch(_namespace_kind(), cluster.namespace, None, {
                "metadata": {"labels": {POLICY_LABEL: cluster.namespace}}})
            site.kubeconfigs = {
                user: user_kubeconfig(admin, f"{ca}.crt", f"{ca}.key", user, groups,
                                      cluster.namespace, root / "certs")
                for user, groups in USERS.items()}
            set_up(site)
            yield site
        finally:
            site.remove_policies()
            cluster.stop()
    return made()


def _namespace_kind() -> Any:
    from sbatch_k8s.backends.kubernetes.api.kinds import NAMESPACE

    return NAMESPACE
