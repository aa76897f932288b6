"""A real API server (``pytest --with-kube-apiserver``), shaped like the emulated cluster.

The server of ``$KUBECONFIG`` (kube-apiserver, controller-manager and scheduler; no kubelet:
the test kubelet runs the pods) is shared by the whole run, so each test gets a namespace of
its own, ``sbk-<n>-<random>``, created when the test starts and deleted when it ends, and a
kubeconfig whose context names it: the commands and every object of the test live there,
as they would in a fresh emulated cluster (the job-id counter is the cluster's one, in the
state namespace ``default``, unless a test's configuration names another). Nodes are
cluster-wide; the test kubelet unregisters its own when it stops.

What only the emulator has — fault injection (``faults``), the request log, its RBAC
decisions — is absent here, and the tests that need it skip.
"""

from __future__ import annotations

import gzip
import itertools
import os
import re
import secrets
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import yaml

#: Label on every namespace a test made (``kubectl delete ns -l`` cleans up after a crash).
TEST_LABEL = "sbatch-k8s.io/test-namespace"
SERVICE_ACCOUNT_WAIT_S = 60.0
POD_DRAIN_WAIT_S = 60.0
CRD_ESTABLISHED_WAIT_S = 60.0
#: The pinned CRDs (``tests/data/crds``) of the targets the backend submits.
CRD_DIR = Path(__file__).resolve().parent.parent / "data" / "crds"
TARGET_CRDS = ("jobsets.yaml.gz", "pytorchjobs.yaml.gz", "mpijobs.yaml.gz")
#: CEL reserves ``namespace`` before Kubernetes 1.32 (kubernetes PR 126188): such servers
#: refuse JobSet's rule on ``t.metadata.namespace`` unless the field is escaped.
CEL_NAMESPACE_ESCAPED_BEFORE = 32
_numbers = itertools.count(1)


def load_crd(file_name: str) -> Dict[str, Any]:
    """A pinned CRD manifest, parsed."""
    with gzip.open(CRD_DIR / file_name, "rt", encoding="utf-8") as f:
        return yaml.safe_load(f)


def escape_cel_namespace(crd: Dict[str, Any]) -> int:
    """Write every CEL rule's field ``namespace`` as ``__namespace__`` (in place); returns
    how many rules changed."""
    changed = 0

    def walk(node: Any) -> None:
        nonlocal changed
        if isinstance(node, dict):
            for rule in node.get("x-kubernetes-validations") or []:
                escaped = re.sub(r"\.namespace\b", ".__namespace__", rule.get("rule", ""))
                if escaped != rule.get("rule"):
                    rule["rule"] = escaped
                    changed += 1
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(crd)
    return changed


def install_target_crds(admin_kubeconfig: str) -> List[str]:
    """Create (or replace) the JobSet, PyTorchJob and MPIJob CRDs on the server, as
    ``kubectl apply`` would, with JobSet's CEL ``namespace`` escaped on servers older than
    1.32; wait until each is Established. Returns the CRDs' names."""
    from kubernetes import client, config

    api_client = config.new_client_from_config(config_file=admin_kubeconfig)
    try:
        minor = int(re.sub(r"\D.*", "", client.VersionApi(api_client).get_code().minor))
        crds = client.ApiextensionsV1Api(api_client)
        names = []
        for file_name in TARGET_CRDS:
            crd = load_crd(file_name)
            if minor < CEL_NAMESPACE_ESCAPED_BEFORE:
                escape_cel_namespace(crd)
            name = crd["metadata"]["name"]
            try:
                crds.create_custom_resource_definition(crd)
            except client.ApiException as e:
                if e.status != 409:
                    raise
                crd["metadata"]["resourceVersion"] = \
                    crds.read_custom_resource_definition(name).metadata.resource_version
                crds.replace_custom_resource_definition(name, crd)
            names.append(name)
        deadline = time.monotonic() + CRD_ESTABLISHED_WAIT_S
        for name in names:
            while not any(c.type == "Established" and c.status == "True" for c in
                          crds.read_custom_resource_definition(name).status.conditions or []):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"CRD {name} not Established")
                time.sleep(0.2)
        return names
    finally:
        api_client.close()


class RealCluster:
    """One test's view of the real API server: its namespace and kubeconfig."""

    faults = None            # no fault injection on a real server

    def __init__(self, admin_kubeconfig: str, directory: str) -> None:
        self.admin_kubeconfig = admin_kubeconfig
        with open(admin_kubeconfig, encoding="utf-8") as f:
            self._config: Dict[str, Any] = yaml.safe_load(f)
        self.namespace = f"sbk-{next(_numbers)}-{secrets.token_hex(3)}"
        self.kubeconfig = os.path.join(directory, "real.kubeconfig")
        self._core: Any = None
        self._volumes: List[str] = []

    # what the tests use of a cluster
    def _entry(self, section: str, name: str) -> Dict[str, Any]:
        for entry in self._config.get(section) or []:
            if entry.get("name") == name:
                return entry
        raise KeyError(f"{section} {name!r} not in {self.admin_kubeconfig}")

    def _context(self) -> Dict[str, Any]:
        return self._entry("contexts", self._config["current-context"])["context"]

    @property
    def url(self) -> str:
        """The API server's address."""
        return str(self._entry("clusters", self._context()["cluster"])["cluster"]["server"])

    @property
    def token(self) -> str:
        """The bearer token of the kubeconfig's user ("" when it authenticates otherwise)."""
        return str(self._entry("users", self._context()["user"])["user"].get("token") or "")

    def api_client(self, token: Optional[str] = None) -> Any:
        """A ``kubernetes.client.ApiClient`` as the kubeconfig's user (or ``token``'s)."""
        from kubernetes import config

        client = config.new_client_from_config(config_file=self.admin_kubeconfig)
        if token:
            client.configuration.api_key = {"authorization": token}
            client.configuration.api_key_prefix = {"authorization": "Bearer"}
        return client

    # life
    def start(self) -> "RealCluster":
        """Create the test's namespace, wait for its ``default`` ServiceAccount (pods are
        refused before it exists), and write the kubeconfig that names the namespace."""
        from kubernetes import client

        self._core = client.CoreV1Api(self.api_client())
        self._core.create_namespace({"metadata": {"name": self.namespace,
                                                  "labels": {TEST_LABEL: "true"}}})
        deadline = time.monotonic() + SERVICE_ACCOUNT_WAIT_S
        while True:
            names = [a.metadata.name for a in
                     self._core.list_namespaced_service_account(self.namespace).items]
            if "default" in names:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"no default ServiceAccount in {self.namespace}: is the "
                                   "controller-manager running?")
            time.sleep(0.2)
        config = dict(self._config)
        config["contexts"] = [
            dict(c, context=dict(c["context"], namespace=self.namespace))
            if c.get("name") == config["current-context"] else c
            for c in config.get("contexts") or []]
        with open(self.kubeconfig, "w", encoding="utf-8") as f:
            yaml.safe_dump(config, f)
        os.chmod(self.kubeconfig, 0o600)
        return self

    def provide_claim(self, claim: str, size: str = "1Gi",
                      host_path: Optional[str] = None) -> None:
        """A PersistentVolumeClaim ``claim`` bound to a PersistentVolume made for it (the
        real scheduler leaves pods of an unbound claim pending). The test kubelet maps the
        claim itself onto a directory and never reads the volume's source; a real kubelet
        mounts ``host_path`` (a directory of this machine, where the real nodes run)."""
        volume = f"{self.namespace}-{claim}"
        self._core.create_persistent_volume({
            "metadata": {"name": volume, "labels": {TEST_LABEL: "true"}},
            "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteMany"],
                     "storageClassName": "", "persistentVolumeReclaimPolicy": "Delete",
                     "hostPath": {"path": host_path or f"/nonexistent/{volume}"},
                     "claimRef": {"namespace": self.namespace, "name": claim}}})
        self._volumes.append(volume)
        self._core.create_namespaced_persistent_volume_claim(self.namespace, {
            "metadata": {"name": claim},
            "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "",
                     "volumeName": volume, "resources": {"requests": {"storage": size}}}})
        deadline = time.monotonic() + SERVICE_ACCOUNT_WAIT_S
        while self._core.read_namespaced_persistent_volume_claim(
                claim, self.namespace).status.phase != "Bound":
            if time.monotonic() > deadline:
                raise TimeoutError(f"claim {claim} not Bound: is the controller-manager "
                                   "running?")
            time.sleep(0.2)

    def drain(self, timeout_s: float = POD_DRAIN_WAIT_S) -> None:
        """Delete the namespace and wait (bounded) until its pods are gone — called while the
        test kubelet still runs, so that it, like a kubelet, stops and removes them."""
        self.delete()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if not self._core.list_namespaced_pod(self.namespace).items:
                    return
            except Exception:
                return
            time.sleep(0.5)

    def delete(self) -> None:
        """Delete the namespace (and so everything in it); not waited for."""
        if self._core is None:
            return
        try:
            self._core.delete_namespace(self.namespace, propagation_policy="Background")
        except Exception as e:
            if getattr(e, "status", None) != 404:
                raise

    def stop(self) -> None:
        """Delete the namespace and the volumes made for it; release the client."""
        try:
            self.delete()
            for volume in self._volumes:
                try:
                    self._core.delete_persistent_volume(volume)
                except Exception as e:
                    if getattr(e, "status", None) != 404:
                        raise
        finally:
            if self._core is not None:
                self._core.api_client.close()
                self._core = None
