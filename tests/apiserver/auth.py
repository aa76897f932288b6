"""Bearer-token authentication and a deny list standing in for RBAC.

Every request must carry ``Authorization: Bearer <token>`` of a known user (else 401, as a
real server with token authentication answers). Everything is allowed except what a test
forbids with :meth:`Access.forbid`, which then answers 403 with the RBAC authorizer's message;
with :attr:`Access.rbac` set (opt-in), users other than the admin get only what the stored
Roles and bindings grant them (:mod:`tests.apiserver.rbac`).
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass
from typing import Dict, List, Optional

from tests.apiserver import errors
from tests.apiserver.rbac import Attributes, Rbac

ADMIN_USER = "emulated-admin"


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
        self._users: Dict[str, str] = {self.token: ADMIN_USER}
        self._rules: List[Rule] = []
        self._lock = threading.Lock()
        #: The RBAC authorizer when enabled (None: everything not forbidden is allowed).
        self.rbac: Optional[Rbac] = None

    def add_user(self, user: str, token: Optional[str] = None) -> str:
        """Register another user; returns its bearer token."""
        token = token or secrets.token_hex(16)
        with self._lock:
            self._users[token] = user
        return token

    def authenticate(self, header: Optional[str]) -> str:
        """The user of an ``Authorization`` header, or 401.

        With ``allow_anonymous`` a request without the header acts as the admin (kubectl
        never sends a bearer token over plain HTTP); a wrong token is still 401.
        """
        if header is None and self.allow_anonymous:
            return ADMIN_USER
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

    def authorize(self, user: str, verb: str, group: str, plural: str, subresource: str,
                  namespace: Optional[str], name: Optional[str]) -> None:
        """403 Forbidden when a rule denies the request, or RBAC (when on) grants it not."""
        path = f"{plural}/{subresource}" if subresource else plural
        with self._lock:
            rules = list(self._rules)
        denied = any(r.denies(user, verb, group, path, namespace) for r in rules)
        if not denied and self.rbac is not None and user != ADMIN_USER:
            denied = not self.rbac.decide(
                Attributes(user, verb, group, path, namespace, name)).allowed
        if denied:
            qualified = f"{plural}.{group}" if group else plural
            raise errors.forbidden(user, verb, qualified, path, group, namespace, name)
