"""A container's environment and command line, resolved as a kubelet resolves them.

Order and precedence follow the kubelet: ``envFrom`` sources in order, then ``env`` entries
(a later definition wins); ``$(NAME)`` in values, ``command`` and ``args`` expands to a
variable defined before it (``$$`` is a literal ``$``; an unknown ``$(NAME)`` stays as is).
A ConfigMap or Secret that does not exist (yet) keeps the container waiting with
``CreateContainerConfigError`` unless the reference is ``optional``.
"""

from __future__ import annotations

import base64
import re
from typing import Any, Dict, List, Mapping, Optional, Protocol

from tests.kubelet.errors import PrepareError
from tests.kubelet.fields import PodContext, field_value, resource_value

_REFERENCE = re.compile(r"\$(\$|\(([^)]*)\))")
_ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")


class ObjectSource(Protocol):
    """Where the kubelet reads ConfigMaps, Secrets and tokens (the API server; dicts in tests)."""

    def config_map(self, namespace: str, name: str) -> Optional[Dict[str, Any]]:
        """The ConfigMap as a dict, None when it does not exist."""

    def secret(self, namespace: str, name: str) -> Optional[Dict[str, Any]]:
        """The Secret as a dict, None when it does not exist."""

    def service_account_token(self, namespace: str, service_account: str,
                              audience: Optional[str], expiration_s: int,
                              pod: Optional[Dict[str, Any]] = None) -> Optional[str]:
        """A token for the service account (TokenRequest), bound to ``pod``, None when the
        server gives none."""


def expand(text: str, env: Mapping[str, str]) -> str:
    """Kubernetes' ``$(NAME)`` expansion of ``text`` against ``env``."""
    def replace(match: "re.Match[str]") -> str:
        if match.group(1) == "$":
            return "$"
        name = match.group(2)
        return env[name] if name in env else match.group(0)
    return _REFERENCE.sub(replace, text)


def object_data(obj: Dict[str, Any], kind: str) -> Dict[str, bytes]:
    """A ConfigMap's ``data`` + ``binaryData`` or a Secret's ``data`` + ``stringData``, as
    bytes by key."""
    values: Dict[str, bytes] = {}
    if kind == "configmap":
        for key, text in (obj.get("data") or {}).items():
            values[key] = str(text).encode()
        for key, encoded in (obj.get("binaryData") or {}).items():
            values[key] = base64.b64decode(encoded)
    else:
        for key, encoded in (obj.get("data") or {}).items():
            values[key] = base64.b64decode(encoded)
        for key, text in (obj.get("stringData") or {}).items():
            values[key] = str(text).encode()
    return values


def referenced_data(source: ObjectSource, namespace: str, kind: str, name: str,
                    optional: bool, reason: str) -> Optional[Dict[str, bytes]]:
    """The data of ConfigMap/Secret ``name``; None when it is missing and ``optional``."""
    obj = source.config_map(namespace, name) if kind == "configmap" else \
        source.secret(namespace, name)
    if obj is None:
        if optional:
            return None
        raise PrepareError(reason, f'{kind} "{name}" not found')
    return object_data(obj, kind)


def _key_ref(source: ObjectSource, namespace: str, kind: str, ref: Mapping[str, Any],
             variable: str) -> Optional[str]:
    optional = bool(ref.get("optional"))
    data = referenced_data(source, namespace, kind, ref.get("name", ""), optional,
                           "CreateContainerConfigError")
    if data is None:
        return None
    key = ref.get("key", "")
    if key not in data:
        if optional:
            return None
        raise PrepareError("CreateContainerConfigError",
                           f"couldn't find key {key} in {kind} {namespace}/{ref.get('name')} "
                           f"(variable {variable})")
    return data[key].decode("utf-8", "surrogateescape")


def resolve_env(context: PodContext, container: Dict[str, Any], source: ObjectSource,
                base: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """The container's environment: ``base`` (image and runtime defaults), then ``envFrom``,
    then ``env``."""
    namespace = (context.pod.get("metadata") or {}).get("namespace", "default")
    env: Dict[str, str] = dict(base or {})
    for entry in container.get("envFrom") or []:
        prefix = entry.get("prefix", "")
        for kind, field in (("configmap", "configMapRef"), ("secret", "secretRef")):
            ref = entry.get(field)
            if ref is None:
                continue
            data = referenced_data(source, namespace, kind, ref.get("name", ""),
                                   bool(ref.get("optional")), "CreateContainerConfigError")
            for key, value in sorted((data or {}).items()):
                if _ENV_NAME.match(prefix + key):
                    env[prefix + key] = value.decode("utf-8", "surrogateescape")
    for var in container.get("env") or []:
        name = var["name"]
        if "valueFrom" not in var:
            env[name] = expand(str(var.get("value", "")), env)
            continue
        value = _value_from(context, container, source, namespace, var["valueFrom"], name)
        if value is not None:
            env[name] = value
    return env


def _value_from(context: PodContext, container: Dict[str, Any], source: ObjectSource,
                namespace: str, value_from: Mapping[str, Any], name: str) -> Optional[str]:
    if "fieldRef" in value_from:
        return field_value(context, value_from["fieldRef"]["fieldPath"])
    if "resourceFieldRef" in value_from:
        ref = value_from["resourceFieldRef"]
        return resource_value(context, ref.get("containerName") or container["name"],
                              ref["resource"], ref.get("divisor"))
    if "configMapKeyRef" in value_from:
        return _key_ref(source, namespace, "configmap", value_from["configMapKeyRef"], name)
    if "secretKeyRef" in value_from:
        return _key_ref(source, namespace, "secret", value_from["secretKeyRef"], name)
    raise PrepareError("CreateContainerConfigError",
                       f"unsupported valueFrom for {name}: {sorted(value_from)}", permanent=True)


def container_argv(container: Dict[str, Any], env: Mapping[str, str]) -> List[str]:
    """``command`` + ``args`` with ``$(NAME)`` expanded; the test kubelet has no image, so a
    container must give a command."""
    command = [expand(str(word), env) for word in container.get("command") or []]
    args = [expand(str(word), env) for word in container.get("args") or []]
    if not command:
        raise PrepareError("CreateContainerConfigError",
                           f"container {container.get('name')!r} has no command; the test "
                           "kubelet has no image entrypoint to run", permanent=True)
    return command + args
