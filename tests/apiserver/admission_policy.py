"""ValidatingAdmissionPolicy: the stored policies and bindings, evaluated as a 1.28 server does.

Written from the Kubernetes documentation ("Validating Admission Policy") and checked against
the v1.28 source (``staging/src/k8s.io/apiserver/pkg/admission/plugin/
validatingadmissionpolicy``): every write a client makes over HTTP (create, update, patch,
delete; not the emulated controllers' own writes, which stand for the kube-system
identities a policy leaves alone) is checked against each ``ValidatingAdmissionPolicy``
(``admissionregistration.k8s.io/v1beta1`` or ``v1``) that a ``ValidatingAdmissionPolicyBinding``
names:

* the policy's ``matchConstraints`` and the binding's ``matchResources``: ``resourceRules``
  (API groups, versions, resources with ``*`` and ``x/*``, operations) minus
  ``excludeResourceRules``, ``namespaceSelector`` (the namespace's labels) and
  ``objectSelector`` (the object's labels, or the old object's: either matching is enough);
* ``matchConditions`` (all true, else the request is not checked);
* ``paramKind`` with the binding's ``paramRef`` (``name`` or ``selector``, in ``namespace`` or
  the request's), evaluated once per param, ``parameterNotFoundAction``;
* ``variables`` (in order, each seeing the earlier ones as ``variables.<name>``) and
  ``validations`` (``expression``; ``message``, ``messageExpression``, ``reason``);
* ``failurePolicy`` (``Fail`` by default: an expression that fails to evaluate denies) and
  the binding's ``validationActions`` (``Deny``; ``Warn`` and ``Audit`` deny nothing).

The CEL is evaluated with ``cel-python`` (a test dependency): the variables are ``object``,
``oldObject`` (null on create and delete, resp. create), ``request`` (``operation``,
``userInfo`` with ``username``/``groups``/``extra``, ``namespace``, ``name``, ``kind``,
``resource``, ``subResource``, ``dryRun``), ``params``, ``namespaceObject`` and
``variables``. Not emulated: ``authorizer``, ``auditAnnotations``, type checking, cost
limits. A denial is what the real server sends (:func:`denial`): ``<resource> "<name>" is
forbidden: ValidatingAdmissionPolicy '<policy>' with binding '<binding>' denied request:
<message>``, status 422 ``Invalid`` unless the validation names another reason
(``Forbidden`` 403).
"""

from __future__ import annotations

import threading
from typing import Any, Dict, Iterator, List, Optional, Tuple

from tests.apiserver import errors
from tests.apiserver.auth import UserInfo
from tests.apiserver.resources import Resource
from tests.apiserver.selectors import make_filter

Obj = Dict[str, Any]
GROUP = "admissionregistration.k8s.io"
POLICIES = f"{GROUP}/validatingadmissionpolicies"
BINDINGS = f"{GROUP}/validatingadmissionpolicybindings"
#: Status codes of the reasons a validation may give (``reasonToCode``).
REASON_CODES = {"Forbidden": 403, "Unauthorized": 401, "RequestEntityTooLarge": 413,
                "Invalid": 422}

#: The user of the HTTP request being served, per handler thread (None: a control loop).
_CURRENT = threading.local()


class AsUser:
    """``with AsUser(info):`` — writes in this thread are the user's (admission applies)."""

    def __init__(self, info: Optional[UserInfo]) -> None:
        self.info = info

    def __enter__(self) -> None:
        _CURRENT.info = self.info

    def __exit__(self, *exc: Any) -> None:
        _CURRENT.info = None


def current_user() -> Optional[UserInfo]:
    """Who the write in this thread is for (None: an emulated controller)."""
    return getattr(_CURRENT, "info", None)


def _label_selector_matches(selector: Optional[Obj], labels: Dict[str, str]) -> bool:
    """A ``metav1.LabelSelector`` against labels (absent or ``{}``: everything)."""
    if not selector:
        return True
    terms = [f"{k}={v}" for k, v in (selector.get("matchLabels") or {}).items()]
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In":
            terms.append(f"{key} in ({','.join(values)})")
        elif op == "NotIn":
            terms.append(f"{key} notin ({','.join(values)})")
        elif op == "Exists":
            terms.append(str(key))
        elif op == "DoesNotExist":
            terms.append(f"!{key}")
    if not terms:
        return True
    return make_filter(",".join(terms), None, "", "", "")({"metadata": {"labels": labels}})


def _labels(obj: Optional[Obj]) -> Dict[str, str]:
    return dict(((obj or {}).get("metadata") or {}).get("labels") or {})


def _rule_matches(rule: Obj, res: Resource, subresource: str, operation: str) -> bool:
    def has(values: List[str], value: str) -> bool:
        return "*" in values or value in values
    resource = f"{res.plural}/{subresource}" if subresource else res.plural
    resources = rule.get("resources") or []
    named = has(resources, resource) or (bool(subresource) and f"{res.plural}/*" in resources) \
        or (bool(subresource) and f"*/{subresource}" in resources)
    if "*" in resources and subresource:
        named = False      # "*" means all resources, not their subresources
    scope = rule.get("scope") or "*"
    scoped = scope == "*" or (scope == "Namespaced") == res.namespaced
    return (has(rule.get("apiGroups") or [], res.group)
            and has(rule.get("apiVersions") or [], res.version) and named
            and has(rule.get("operations") or [], operation) and scoped)


class Request:
    """One write as admission sees it."""

    def __init__(self, info: UserInfo, operation: str, res: Resource, namespace: str,
                 name: str, subresource: str, obj: Optional[Obj], old: Optional[Obj],
                 dry_run: bool) -> None:
        self.info, self.operation, self.res = info, operation, res
        self.namespace, self.name, self.subresource = namespace, name, subresource
        self.obj, self.old, self.dry_run = obj, old, dry_run

    def to_json(self) -> Obj:
        res = self.res
        return {"operation": self.operation, "userInfo": self.info.to_json(),
                "namespace": self.namespace, "name": self.name,
                "kind": {"group": res.group, "version": res.version, "kind": res.kind},
                "resource": {"group": res.group, "version": res.version,
                             "resource": res.plural},
                "subResource": self.subresource, "dryRun": self.dry_run}


class PolicyAdmission:
    """The validating admission policies stored in ``api`` (see the module docstring)."""

    def __init__(self, api: Any) -> None:
        self.api = api
        self._programs: Dict[str, Any] = {}
        self._lock = threading.Lock()

    # -- CEL -------------------------------------------------------------------------------
    def _program(self, source: str) -> Any:
        import celpy

        with self._lock:
            program = self._programs.get(source)
            if program is None:
                env = celpy.Environment()
                program = env.program(env.compile(source))
                self._programs[source] = program
        return program

    def _evaluate(self, source: str, activation: Dict[str, Any]) -> Any:
        import celpy

        try:
            value = self._program(source).evaluate(activation)
        except Exception as e:  # a compile error: the policy is misconfigured
            raise _EvalError(f"expression {source!r}: {e}") from e
        if isinstance(value, celpy.CELEvalError):
            raise _EvalError(str(value.args[0] if value.args else value))
        return value

    # -- matching ----------------------------------------------------------------------------
    def _namespace_labels(self, namespace: str) -> Dict[str, str]:
        found = self.api.store.get("/namespaces", "", namespace) if namespace else None
        return _labels(found)

    def _matches(self, match: Optional[Obj], request: Request, required: bool) -> bool:
        if not match:
            return not required
        op, res, sub = request.operation, request.res, request.subresource
        if not any(_rule_matches(r, res, sub, op) for r in match.get("resourceRules") or []):
            if required or match.get("resourceRules"):
                return False
        if any(_rule_matches(r, res, sub, op) for r in match.get("excludeResourceRules") or []):
            return False
        if res.namespaced and not _label_selector_matches(
                match.get("namespaceSelector"), self._namespace_labels(request.namespace)):
            return False
        selector = match.get("objectSelector")
        return (_label_selector_matches(selector, _labels(request.obj))
                or (request.old is not None
                    and _label_selector_matches(selector, _labels(request.old))))

    def _params(self, policy: Obj, binding: Obj, request: Request) -> Optional[List[Any]]:
        """The params to evaluate with ([None] without a paramKind); None: not found and
        the binding says deny."""
        kind = (policy.get("spec") or {}).get("paramKind")
        ref = (binding.get("spec") or {}).get("paramRef")
        if not kind or not ref:
            return [None]
        version = str(kind.get("apiVersion", "v1"))
        group, _, ver = version.rpartition("/")
        row = next((r for r in self.api.resources.all()
                    if r.group == group and r.kind == kind.get("kind")), None)
        if row is None:
            found: List[Obj] = []
        else:
            namespace = ref.get("namespace") or (request.namespace if row.namespaced else "")
            items = [self.api._dress(row, o)
                     for o in self.api.store.list(row.key, namespace or None)]
            if ref.get("name"):
                found = [o for o in items if o["metadata"]["name"] == ref["name"]]
            else:
                found = [o for o in items
                         if _label_selector_matches(ref.get("selector") or {}, _labels(o))]
        if not found:
            return None if ref.get("parameterNotFoundAction") == "Deny" else []
        return found

    # -- evaluation --------------------------------------------------------------------------
    def _pairs(self) -> Iterator[Tuple[Obj, Obj]]:
        policies = {p["metadata"]["name"]: p for p in self.api.store.list(POLICIES, None)}
        for binding in self.api.store.list(BINDINGS, None):
            policy = policies.get((binding.get("spec") or {}).get("policyName", ""))
            if policy is not None:
                yield policy, binding

    def check(self, request: Request) -> None:
        """Raise the real server's denial when a bound policy refuses ``request``."""
        for policy, binding in self._pairs():
            spec, bspec = policy.get("spec") or {}, binding.get("spec") or {}
            if not self._matches(spec.get("matchConstraints"), request, True) or \
                    not self._matches(bspec.get("matchResources"), request, False):
                continue
            if "Deny" not in (bspec.get("validationActions") or ["Deny"]):
                continue
            message = self._decide(policy, binding, request)
            if message is not None:
                raise denial(request, policy, binding, *message)

    def _decide(self, policy: Obj, binding: Obj, request: Request
                ) -> Optional[Tuple[str, str]]:
        """(message, reason) of the first failed validation, or None."""
        import celpy

        spec = policy.get("spec") or {}
        fail = (spec.get("failurePolicy") or "Fail") == "Fail"
        params = self._params(policy, binding, request)
        if params is None:
            return ("failed to configure binding: no params found for policy binding with "
                    "`Deny` parameterNotFoundAction", "Invalid") if fail else None
        namespace_obj = self.api.store.get("/namespaces", "", request.namespace) \
            if request.namespace else None
        base = {"object": request.obj, "oldObject": request.old,
                "request": request.to_json(), "namespaceObject": namespace_obj}
        try:
            activation = {k: celpy.json_to_cel(v) for k, v in base.items()}
            for condition in spec.get("matchConditions") or []:
                if not bool(self._evaluate(condition["expression"], activation)):
                    return None
            for param in params:
                found = self._validate(spec, dict(activation,
                                                  params=celpy.json_to_cel(param)))
                if found is not None:
                    return found
        except _EvalError as e:
            return (str(e), "Invalid") if fail else None
        return None

    def _validate(self, spec: Obj, activation: Dict[str, Any]) -> Optional[Tuple[str, str]]:
        import celpy

        computed: Dict[str, Any] = {}
        for variable in spec.get("variables") or []:
            activation["variables"] = celpy.celtypes.MapType(computed)
            computed[celpy.celtypes.StringType(variable["name"])] = self._evaluate(
                variable["expression"], activation)
        activation["variables"] = celpy.celtypes.MapType(computed)
        for validation in spec.get("validations") or []:
            if bool(self._evaluate(validation["expression"], activation)) is True:
                continue
            message = ""
            if validation.get("messageExpression"):
                try:
                    message = str(self._evaluate(validation["messageExpression"],
                                                 activation)).strip()
                except _EvalError:
                    message = ""
            if not message:
                message = (validation.get("message") or "").strip() or \
                    f"failed expression: {validation['expression'].strip()}"
            return message, validation.get("reason") or "Invalid"
        return None


class _EvalError(Exception):
    """An expression that could not be evaluated (the failure policy decides)."""


def denial(request: Request, policy: Obj, binding: Obj, message: str,
           reason: str) -> errors.ApiError:
    """The error a 1.28 server answers for a denied request (module docstring)."""
    full = (f"ValidatingAdmissionPolicy '{policy['metadata']['name']}' with binding "
            f"'{binding['metadata']['name']}' denied request: {message}")
    qualified = request.res.qualified
    text = f'{qualified} "{request.name}" is forbidden: {full}' if request.name else \
        f"{qualified} is forbidden: {full}"
    details: Obj = {"name": request.name, "kind": request.res.plural,
                    "causes": [{"message": full}]}
    if request.res.group:
        details["group"] = request.res.group
    return errors.ApiError(REASON_CODES.get(reason, 422), reason, text, details)
