"""Bearer-token authentication and a deny list standing in for RBAC.

Every request must carry ``Authorization: Bearer <token>`` of a known user (else 401, as a
real server with token authentication answers). A token stands for a :class:`UserInfo`: the
user name, its groups (every user is in ``system:authenticated``, the admin also in
``system:masters``, a ServiceAccount in ``system:serviceaccounts`` and
``system:serviceaccounts:<namespace>``) and ``extra`` (a token bound to a pod names it:
``authentication.kubernetes.io/pod-name`` and ``pod-uid``, as the real ServiceAccount
authenticator says). Everything is allowed except what a test forbids with
:meth:`Access.forbid`, which then answers 403 with the RBAC authorizer's message; with
:attr:`Access.rbac` set (opt-in), users other than the admin get only what the stored Roles
and bindings grant them (:mod:`tests.apiserver.rbac`).
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from tests.apiserver import errors
from tests.apiserver.rbac import Attributes, Rbac

ADMIN_USER = "emulated-admin"
SA_PREFIX = "system:serviceaccount:"


@dataclass(frozen=True)
class UserInfo:
    """Who a token authenticates: ``name``, ``groups``, ``extra`` (key → values)."""

    name: str
    groups: Tuple[str, ...] = ()
    extra: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()

    def to_json(self) -> Dict[str, Any]:
        """As ``SelfSubjectReview`` and admission requests show it."""
        info: Dict[str, Any] = {"username": self.name, "groups": list(self.groups)}
        if self.extra:
            info["extra"] = {key: list(values) for key, values in self.extra}
        return info


def user_info(name: str, groups: Sequence[str] = (),
              extra: Optional[Mapping[str, Sequence[str]]] = None) -> UserInfo:
    """``name`` with the groups every such user is in, plus ``groups``."""
    implied: List[str] = []
    if name == ADMIN_USER:
        implied.append("system:masters")
    if name.startswith(SA_PREFIX):
        namespace = name[len(SA_PREFIX):].split(":", 1)[0]
        implied += ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"]
    implied.append("system:authenticated")
    every = tuple(dict.fromkeys(list(groups) + implied))
    return UserInfo(name, every, tuple((k, tuple(v)) for k, v in sorted((extra or {}).items())))


@dataclass(frozen=True)
class Rule:
    """A denied (verb, group, resource[/subresource], namespace, user); None matches any."""

    verb: Optional[str]
    group: Optional[str]
    resource: Optional[str]
    namespace: Optional[str]
    user: Optional[str]

    def denies(self, user: str, verb: str, group: str, resource: str,
               namespace: Optional[str]) -> bool:
        """True when this rule covers the request."""
        return all(want is None or want == got for want, got in (
            (self.verb, verb), (self.group, group), (self.resource, resource),
            (self.namespace, namespace), (self.user, user)))


class Access:
    """Known tokens and denied requests (thread-safe)."""

    def __init__(self, token: Optional[str] = None, allow_anonymous: bool = False) -> None:
        self.token = token or secrets.token_hex(16)
        self.allow_anonymous = allow_anonymous
        self._users: Dict[str, UserInfo] = {self.token: user_info(ADMIN_USER)}
        self._rules: List[Rule] = []
        self._lock = threading.Lock()
        #: The RBAC authorizer when enabled (None: everything not forbidden is allowed).
        self.rbac: Optional[Rbac] = None

    def add_user(self, user: str, token: Optional[str] = None, groups: Sequence[str] = (),
                 extra: Optional[Mapping[str, Sequence[str]]] = None) -> str:
        """Register another user (in ``groups``, with ``extra``); returns its bearer token."""
        token = token or secrets.token_hex(16)
        with self._lock:
            self._users[token] = user_info(user, groups, extra)
        return token

    def authenticate(self, header: Optional[str]) -> UserInfo:
        """The user of an ``Authorization`` header, or 401.

        With ``allow_anonymous`` a request without the header acts as the admin (kubectl
        never sends a bearer token over plain HTTP); a wrong token is still 401.
        """
        if header is None and self.allow_anonymous:
            return self._users[self.token]
        scheme, _, token = (header or "").strip().partition(" ")
        if scheme.lower() == "bearer":      # the scheme is case-insensitive (the in-cluster
            with self._lock:                # configuration of the Python client sends "bearer")
                user = self._users.get(token.strip())
            if user:
                return user
        raise errors.unauthorized()

    def forbid(self, verb: Optional[str] = None, resource: Optional[str] = None,
               group: Optional[str] = None, namespace: Optional[str] = None,
               user: Optional[str] = None) -> Rule:
        """Deny matching requests with 403 (``resource`` may be ``pods/log``, etc.)."""
        rule = Rule(verb, group, resource, namespace, user)
        with self._lock:
            self._rules.append(rule)
        return rule

    def allow_all(self) -> None:
        """Drop every rule added by :meth:`forbid`."""
        with self._lock:
            self._rules.clear()

    def authorize(self, info: UserInfo, verb: str, group: str, plural: str, subresource: str,
                  namespace: Optional[str], name: Optional[str]) -> None:
        """403 Forbidden when a rule denies the request, or RBAC (when on) grants it not."""
        user = info.name
        path = f"{plural}/{subresource}" if subresource else plural
        with self._lock:
            rules = list(self._rules)
        denied = any(r.denies(user, verb, group, path, namespace) for r in rules)
        if not denied and self.rbac is not None and user != ADMIN_USER:
            denied = not self.rbac.decide(
                Attributes(user, verb, group, path, namespace, name, info.groups)).allowed
        if denied:
            qualified = f"{plural}.{group}" if group else plural
            raise errors.forbidden(user, verb, qualified, path, group, namespace, name)
