"""The resource table: which group/version/plural the emulated server serves, and discovery.

One row per resource (:data:`BUILTIN`); custom resources join at run time when a
``CustomResourceDefinition`` is created (:meth:`Resources.add_crd`). Discovery documents
(``/api``, ``/apis``, ``/apis/{group}/{version}``) are derived from the same rows, so what the
client discovers is exactly what the router serves.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Tuple

VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


@dataclass(frozen=True)
class Resource:
    """One served resource. ``status_on_create`` is ``keep`` or ``clear`` (status subresource)."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True
    subresources: Tuple[str, ...] = ()
    short_names: Tuple[str, ...] = ()
    status_on_create: str = "keep"
    returns_deleted_object: bool = False
    custom: bool = False

    @property
    def api_version(self) -> str:
        """``v1`` or ``group/version``."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """``plural.group`` as error messages name it (``pods``, ``jobs.batch``)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def key(self) -> str:
        """Storage key, independent of the version: ``group/plural``."""
        return f"{self.group}/{self.plural}"

    @property
    def singular(self) -> str:
        """Lower-case kind, as discovery's ``singularName``."""
        return self.kind.lower()


def _core(plural: str, kind: str, **kw: Any) -> Resource:
    return Resource("", "v1", plural, kind, **kw)


STATUS = ("status",)
CR = dict(subresources=STATUS, status_on_create="clear", returns_deleted_object=True,
          custom=True)

BUILTIN: Tuple[Resource, ...] = (
    _core("namespaces", "Namespace", namespaced=False, subresources=("status", "finalize"),
          short_names=("ns",), returns_deleted_object=True),
    _core("nodes", "Node", namespaced=False, subresources=STATUS, short_names=("no",),
          returns_deleted_object=True),
    _core("pods", "Pod", subresources=("status", "binding", "log", "eviction"),
          short_names=("po",), returns_deleted_object=True),
    _core("services", "Service", subresources=STATUS, short_names=("svc",),
          status_on_create="clear", returns_deleted_object=True),
    _core("bindings", "Binding"),
    _core("endpoints", "Endpoints", short_names=("ep",)),
    _core("configmaps", "ConfigMap", short_names=("cm",)),
    _core("secrets", "Secret"),
    _core("serviceaccounts", "ServiceAccount", subresources=("token",), short_names=("sa",)),
    _core("events", "Event", short_names=("ev",)),
    _core("persistentvolumeclaims", "PersistentVolumeClaim", subresources=STATUS,
          short_names=("pvc",)),
    Resource("batch", "v1", "jobs", "Job", subresources=STATUS, status_on_create="clear"),
    Resource("batch", "v1", "cronjobs", "CronJob", subresources=STATUS,
             status_on_create="clear", short_names=("cj",)),
    Resource("events.k8s.io", "v1", "events", "Event", short_names=("ev",)),
    Resource("coordination.k8s.io", "v1", "leases", "Lease"),
    Resource("rbac.authorization.k8s.io", "v1", "roles", "Role"),
    Resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding"),
    Resource("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", namespaced=False),
    Resource("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding",
             namespaced=False),
    Resource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", namespaced=False,
             short_names=("pc",)),
    Resource("admissionregistration.k8s.io", "v1beta1", "validatingadmissionpolicies",
             "ValidatingAdmissionPolicy", namespaced=False, subresources=STATUS),
    Resource("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies",
             "ValidatingAdmissionPolicy", namespaced=False, subresources=STATUS),
    Resource("admissionregistration.k8s.io", "v1beta1", "validatingadmissionpolicybindings",
             "ValidatingAdmissionPolicyBinding", namespaced=False),
    Resource("admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings",
             "ValidatingAdmissionPolicyBinding", namespaced=False),
    Resource("authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview",
             namespaced=False),
    Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions",
             "CustomResourceDefinition", namespaced=False, subresources=STATUS,
             short_names=("crd", "crds"), returns_deleted_object=True),
)

# Custom resources served from the start unless the cluster is built with crd_groups=().
BUILTIN_CUSTOM: Tuple[Resource, ...] = (
    Resource("jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet", **CR),
    Resource("kubeflow.org", "v1", "pytorchjobs", "PyTorchJob", **CR),
    Resource("kubeflow.org", "v1", "tfjobs", "TFJob", **CR),
    Resource("kubeflow.org", "v2beta1", "mpijobs", "MPIJob", **CR),
    Resource("trainer.kubeflow.org", "v1alpha1", "trainjobs", "TrainJob", **CR),
    Resource("scheduling.volcano.sh", "v1beta1", "podgroups", "PodGroup", short_names=("pg",),
             **CR),
    Resource("scheduling.volcano.sh", "v1beta1", "queues", "Queue", namespaced=False, **CR),
    Resource("batch.volcano.sh", "v1alpha1", "jobs", "Job", short_names=("vcjob",), **CR),
    Resource("kueue.x-k8s.io", "v1beta1", "workloads", "Workload", **CR),
    Resource("kueue.x-k8s.io", "v1beta1", "localqueues", "LocalQueue", **CR),
    Resource("kueue.x-k8s.io", "v1beta1", "clusterqueues", "ClusterQueue", namespaced=False,
             **CR),
    Resource("kueue.x-k8s.io", "v1beta1", "resourceflavors", "ResourceFlavor",
             namespaced=False, **CR),
)


def crd_to_resources(crd: Dict[str, Any]) -> List[Resource]:
    """The resources a CustomResourceDefinition serves (one per served version)."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    served: List[Resource] = []
    for version in spec.get("versions") or []:
        if not version.get("served", True):
            continue
        subresources = tuple(sorted((version.get("subresources") or {}).keys()))
        served.append(Resource(
            spec.get("group", ""), version.get("name", "v1"), names.get("plural", ""),
            names.get("kind", ""), namespaced=spec.get("scope", "Namespaced") == "Namespaced",
            subresources=subresources, short_names=tuple(names.get("shortNames") or ()),
            status_on_create="clear" if "status" in subresources else "keep",
            returns_deleted_object=True, custom=True))
    return served


@dataclass
class Resources:
    """The served resources, thread-safe (CRDs add and remove rows while serving)."""

    rows: Dict[Tuple[str, str, str], Resource] = field(default_factory=dict)
    crd_rows: Dict[str, List[Resource]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def default(cls, crd_groups: Optional[Iterable[str]] = None) -> "Resources":
        """Built-in resources plus the bundled custom ones (all, or those of ``crd_groups``)."""
        table = cls()
        wanted = None if crd_groups is None else set(crd_groups)
        for row in BUILTIN + tuple(r for r in BUILTIN_CUSTOM
                                   if wanted is None or r.group in wanted):
            table.rows[(row.group, row.version, row.plural)] = row
        return table

    def lookup(self, group: str, version: str, plural: str) -> Optional[Resource]:
        """The resource served at ``group/version/plural``, or None."""
        with self.lock:
            return self.rows.get((group, version, plural))

    def by_key(self, key: str) -> Optional[Resource]:
        """Any served version of the resource stored under ``group/plural``."""
        group, _, plural = key.partition("/")
        with self.lock:
            for row in self.rows.values():
                if row.group == group and row.plural == plural:
                    return row
        return None

    def add_crd(self, crd: Dict[str, Any]) -> None:
        """Serve a CRD's resources (called when the CRD is created or replaced)."""
        rows = crd_to_resources(crd)
        with self.lock:
            for row in self.crd_rows.pop(crd["metadata"]["name"], []):
                self.rows.pop((row.group, row.version, row.plural), None)
            self.crd_rows[crd["metadata"]["name"]] = rows
            for row in rows:
                self.rows[(row.group, row.version, row.plural)] = row

    def remove_crd(self, name: str) -> None:
        """Stop serving a deleted CRD's resources."""
        with self.lock:
            for row in self.crd_rows.pop(name, []):
                self.rows.pop((row.group, row.version, row.plural), None)

    def all(self) -> List[Resource]:
        """A snapshot of every served row."""
        with self.lock:
            return list(self.rows.values())

    def groups(self) -> Dict[str, List[str]]:
        """Group name → its served versions (newest-looking first), core group excluded."""
        found: Dict[str, List[str]] = {}
        for row in self.all():
            if row.group and row.version not in found.setdefault(row.group, []):
                found[row.group].append(row.version)
        return {g: sorted(v, reverse=True) for g, v in sorted(found.items())}
