"""RBAC authorization from the stored Role, ClusterRole, RoleBinding and ClusterRoleBinding
objects, as a real API server's RBAC authorizer decides (an opt-in mode of the emulator:
``EmulatedCluster(rbac=True)`` or :meth:`EmulatedCluster.enable_rbac`).

A request is allowed when some binding names its user (``User``), one of its groups
(``Group``: every authenticated user is in ``system:authenticated``, a ServiceAccount's user
also in ``system:serviceaccounts`` and ``system:serviceaccounts:<namespace>``) or its
ServiceAccount (``ServiceAccount``; an empty namespace means the binding's), and a rule of
the bound role matches: the verb, the API group, the resource (``pods/log`` for a
subresource; ``*`` and ``pods/*``, ``*/log`` wildcards) and, when the rule lists
``resourceNames``, the request's object name (so a list, watch or create never matches such a
rule). A RoleBinding grants in its own namespace only (its roleRef a Role of that namespace,
or a ClusterRole); a ClusterRoleBinding grants everywhere, cluster-scoped resources included.
Not emulated: aggregated ClusterRoles, ``nonResourceURLs`` (discovery and health paths are
open to every authenticated user, as the bootstrap ``system:discovery`` role makes them),
impersonation and escalation checks on writes to RBAC objects.

Every decision is recorded (:attr:`Rbac.decisions`) with the rules that allowed it, so a
test can check that a Role grants exactly what its users do.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Tuple

Obj = Dict[str, Any]
RBAC_KEYS = {"roles": "rbac.authorization.k8s.io/roles",
             "rolebindings": "rbac.authorization.k8s.io/rolebindings",
             "clusterroles": "rbac.authorization.k8s.io/clusterroles",
             "clusterrolebindings": "rbac.authorization.k8s.io/clusterrolebindings"}
SA_PREFIX = "system:serviceaccount:"


@dataclass(frozen=True)
class RuleRef:
    """One rule of one role: ``Role/<namespace>/<name>`` or ``ClusterRole/<name>``, index."""

    role: str
    index: int


@dataclass(frozen=True)
class Attributes:
    """What a request asks, in RBAC's terms (``resource`` includes the subresource)."""

    user: str
    verb: str
    group: str
    resource: str
    namespace: Optional[str]
    name: Optional[str]
    #: The user's groups (empty: those :func:`groups_of` implies).
    groups: Tuple[str, ...] = ()


@dataclass(frozen=True)
class Decision:
    """A recorded authorization: the request and the rules that allow it (none: refused)."""

    request: Attributes
    allowed_by: Tuple[RuleRef, ...]

    @property
    def allowed(self) -> bool:
        """Whether some rule allowed the request."""
        return bool(self.allowed_by)


def groups_of(user: str) -> Tuple[str, ...]:
    """The groups an authenticated user is in."""
    groups = ["system:authenticated"]
    if user.startswith(SA_PREFIX):
        namespace = user[len(SA_PREFIX):].split(":", 1)[0]
        groups += ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"]
    return tuple(groups)


def subject_matches(subject: Obj, user: str, binding_namespace: str,
                    groups: Tuple[str, ...] = ()) -> bool:
    """Whether a binding's subject names ``user`` (directly, by one of its ``groups`` —
    by default those :func:`groups_of` implies — or as its account)."""
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "User":
        return name == user
    if kind == "Group":
        return name in (groups or groups_of(user))
    if kind == "ServiceAccount":
        namespace = subject.get("namespace") or binding_namespace
        return user == f"{SA_PREFIX}{namespace}:{name}"
    return False


def _resource_matches(rule_resources: Iterable[str], resource: str) -> bool:
    base, _, sub = resource.partition("/")
    for wanted in rule_resources:
        if wanted in ("*", resource):
            return True
        if sub and wanted == f"{base}/*":
            return True
        if sub and wanted == f"*/{sub}":
            return True
    return False


def rule_allows(rule: Obj, request: Attributes) -> bool:
    """Whether one PolicyRule covers the request."""
    verbs, groups = rule.get("verbs") or [], rule.get("apiGroups") or []
    if "*" not in verbs and request.verb not in verbs:
        return False
    if "*" not in groups and request.group not in groups:
        return False
    if not _resource_matches(rule.get("resources") or [], request.resource):
        return False
    names = rule.get("resourceNames") or []
    return not names or (request.name is not None and request.name in names)


class Rbac:
    """The authorizer over a :class:`~tests.apiserver.store.Store` (thread-safe)."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.decisions: List[Decision] = []
        self._lock = threading.Lock()

    def _objects(self, plural: str, namespace: Optional[str] = None) -> List[Obj]:
        return list(self.store.list(RBAC_KEYS[plural], namespace))

    def _role(self, ref: Obj, namespace: str) -> Tuple[str, List[Obj]]:
        """(label, rules) of a roleRef; no rules when it does not exist."""
        kind, name = ref.get("kind"), ref.get("name")
        if kind == "Role":
            found = [r for r in self._objects("roles", namespace)
                     if r["metadata"]["name"] == name]
            label = f"Role/{namespace}/{name}"
        else:
            found = [r for r in self._objects("clusterroles")
                     if r["metadata"]["name"] == name]
            label = f"ClusterRole/{name}"
        return label, (found[0].get("rules") or []) if found else []

    def _granting_roles(self, user: str, namespace: Optional[str],
                        groups: Tuple[str, ...] = ()) -> List[Tuple[str, List[Obj]]]:
        roles = []
        for binding in self._objects("clusterrolebindings"):
            if any(subject_matches(s, user, "", groups)
                   for s in binding.get("subjects") or []):
                roles.append(self._role(binding.get("roleRef") or {}, ""))
        if namespace:
            for binding in self._objects("rolebindings", namespace):
                if any(subject_matches(s, user, namespace, groups)
                       for s in binding.get("subjects") or []):
                    roles.append(self._role(binding.get("roleRef") or {}, namespace))
        return roles

    def decide(self, request: Attributes) -> Decision:
        """Which rules allow the request (recorded)."""
        allowed_by = tuple(
            RuleRef(label, index)
            for label, rules in self._granting_roles(request.user, request.namespace,
                                                     request.groups)
            for index, rule in enumerate(rules) if rule_allows(rule, request))
        decision = Decision(request, tuple(dict.fromkeys(allowed_by)))
        with self._lock:
            self.decisions.append(decision)
        return decision

    def refused(self) -> List[Attributes]:
        """The requests refused so far."""
        with self._lock:
            return [d.request for d in self.decisions if not d.allowed]

    def unused(self, role_label: str, rules: List[Obj]) -> List[Tuple[str, str, str]]:
        """The (group, resource, verb) a role's rules grant that no allowed request used
        through that rule (resourceNames aside)."""
        with self._lock:
            decisions = list(self.decisions)
        missing = []
        for index, rule in enumerate(rules):
            ref = RuleRef(role_label, index)
            used = [d.request for d in decisions if ref in d.allowed_by]
            for group in rule.get("apiGroups") or []:
                for resource in rule.get("resources") or []:
                    for verb in rule.get("verbs") or []:
                        if not any(r.group == group and r.resource == resource
                                   and r.verb == verb for r in used):
                            missing.append((group, resource, verb))
        return missing
