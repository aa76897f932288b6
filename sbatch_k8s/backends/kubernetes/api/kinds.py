"""The one table of Kubernetes kinds the backend creates, reads or deletes, and their URLs.

Requests go through :mod:`sbatch_k8s.backends.kubernetes.api.client` as plain JSON, so every kind
(built-in or custom) is one row here: its API group/version, plural, and whether it lives in a
namespace. The workload kinds are those the translators render (one per target).
"""

from __future__ import annotations

from typing import Dict, Mapping, NamedTuple, Optional, Tuple


class Kind(NamedTuple):
    """One resource type: ``api_version`` as in manifests (``batch/v1``, ``v1``)."""

    api_version: str
    kind: str
    plural: str
    namespaced: bool = True

    def collection_path(self, namespace: Optional[str]) -> str:
        """``/api/v1/namespaces/<ns>/configmaps`` and the like."""
        root = f"/api/{self.api_version}" if "/" not in self.api_version else \
            f"/apis/{self.api_version}"
        if self.namespaced:
            if namespace is None:
                return f"{root}/{self.plural}"  # across all namespaces (list only)
            return f"{root}/namespaces/{namespace}/{self.plural}"
        return f"{root}/{self.plural}"

    def object_path(self, namespace: Optional[str], name: str) -> str:
        """The URL of one object."""
        return f"{self.collection_path(namespace)}/{name}"

    @property
    def resource(self) -> str:
        """``jobs.batch``: how RBAC and the API server's messages name it."""
        group = self.api_version.rsplit("/", 1)[0] if "/" in self.api_version else ""
        return f"{self.plural}.{group}" if group else self.plural


CONFIG_MAP = Kind("v1", "ConfigMap", "configmaps")
SECRET = Kind("v1", "Secret", "secrets")
SERVICE = Kind("v1", "Service", "services")
POD = Kind("v1", "Pod", "pods")
SERVICE_ACCOUNT = Kind("v1", "ServiceAccount", "serviceaccounts")
NODE = Kind("v1", "Node", "nodes", namespaced=False)
NAMESPACE = Kind("v1", "Namespace", "namespaces", namespaced=False)
JOB = Kind("batch/v1", "Job", "jobs")
JOBSET = Kind("jobset.x-k8s.io/v1alpha2", "JobSet", "jobsets")
PYTORCHJOB = Kind("kubeflow.org/v1", "PyTorchJob", "pytorchjobs")
MPIJOB = Kind("kubeflow.org/v2beta1", "MPIJob", "mpijobs")
POD_GROUP = Kind("scheduling.volcano.sh/v1beta1", "PodGroup", "podgroups")

KINDS: Tuple[Kind, ...] = (CONFIG_MAP, SECRET, SERVICE, POD, SERVICE_ACCOUNT, NODE, NAMESPACE,
                           JOB, JOBSET,
                           PYTORCHJOB, MPIJOB, POD_GROUP)
#: The workload kinds, one per target (what squeue lists).
WORKLOADS: Tuple[Kind, ...] = (JOB, JOBSET, PYTORCHJOB, MPIJOB)
_BY_KIND: Dict[Tuple[str, str], Kind] = {(k.api_version, k.kind): k for k in KINDS}


def kind_of(manifest: Mapping[str, object]) -> Kind:
    """The table row of a manifest; KeyError names a kind the backend does not handle."""
    key = (str(manifest.get("apiVersion")), str(manifest.get("kind")))
    try:
        return _BY_KIND[key]
    except KeyError:
        raise KeyError(f"no table row for {key[0]} {key[1]}") from None
