"""Create/update validation: the real server's checks that clients actually trip over.

Names (RFC 1123 subdomain, or label for namespaces, RFC 1035 label for services), label and
annotation keys and values, required pod and Job fields. Messages are the apimachinery ones,
so a test sees the same 422 text a real cluster returns. Not a schema validator.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from tests.apiserver import errors
from tests.apiserver.resources import Resource

Obj = Dict[str, Any]
Causes = List[Dict[str, str]]

SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
LABEL_1123 = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
LABEL_1035 = r"[a-z]([-a-z0-9]*[a-z0-9])?"
QUALIFIED = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
VALUE = r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"

SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                 "characters, '-' or '.', and must start and end with an alphanumeric character "
                 "(e.g. 'example.com', regex used for validation is '" + SUBDOMAIN + "')")
LABEL_1123_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric "
                  "characters or '-', and must start and end with an alphanumeric character "
                  "(e.g. 'my-name',  or '123-abc', regex used for validation is '"
                  + LABEL_1123 + "')")
LABEL_1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
                  "start with an alphabetic character, and end with an alphanumeric character "
                  "(e.g. 'my-name',  or 'abc-123', regex used for validation is '"
                  + LABEL_1035 + "')")
QUALIFIED_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must "
                 "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
                 "or '123-abc', regex used for validation is '" + QUALIFIED + "')")
VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, "
             "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
             "'MyValue',  or 'my_value',  or '12345', regex used for validation is '"
             + VALUE + "')")
TOO_LONG = "must be no more than {} characters"

# Which name rule each resource's objects follow (default: RFC 1123 subdomain).
NAME_RULES: Dict[str, str] = {"/namespaces": "label1123", "/services": "label1035"}


def _name_causes(field: str, name: str, rule: str) -> Causes:
    pattern, message, limit = {
        "subdomain": (SUBDOMAIN, SUBDOMAIN_MSG, 253),
        "label1123": (LABEL_1123, LABEL_1123_MSG, 63),
        "label1035": (LABEL_1035, LABEL_1035_MSG, 63)}[rule]
    causes: Causes = []
    if len(name) > limit:
        causes.append(errors.invalid_cause(field, name, TOO_LONG.format(limit)))
    if not re.fullmatch(pattern, name):
        causes.append(errors.invalid_cause(field, name, message))
    return causes


def _key_causes(field: str, key: str) -> Causes:
    prefix, _, name = key.rpartition("/")
    causes: Causes = []
    if prefix and (len(prefix) > 253 or not re.fullmatch(SUBDOMAIN, prefix)):
        causes.append(errors.invalid_cause(field, key, "prefix part " + SUBDOMAIN_MSG))
    if len(name) > 63:
        causes.append(errors.invalid_cause(field, key, "name part " + TOO_LONG.format(63)))
    if not re.fullmatch(QUALIFIED, name):
        causes.append(errors.invalid_cause(field, key, QUALIFIED_MSG))
    return causes


def label_causes(field: str, labels: Optional[Dict[str, Any]]) -> Causes:
    """Problems with a labels map (keys qualified names, values ≤ 63 label-safe strings)."""
    causes: Causes = []
    for key, value in (labels or {}).items():
        causes += _key_causes(field, key)
        text = "" if value is None else str(value)
        if len(text) > 63:
            causes.append(errors.invalid_cause(field, text, TOO_LONG.format(63)))
        if not re.fullmatch(VALUE, text):
            causes.append(errors.invalid_cause(field, text, VALUE_MSG))
    return causes


def metadata_causes(resource: Resource, meta: Obj) -> Causes:
    """Name, labels and annotation keys of any object."""
    name = meta.get("name") or ""
    if not name:
        return [errors.required_cause("metadata.name", "name or generateName is required")]
    causes = _name_causes("metadata.name", name, NAME_RULES.get(resource.key, "subdomain"))
    causes += label_causes("metadata.labels", meta.get("labels"))
    for key in meta.get("annotations") or {}:
        causes += _key_causes("metadata.annotations", key)
    return causes


def pod_spec_causes(field: str, spec: Optional[Obj]) -> Causes:
    """Required pod spec fields: at least one container, each with a name and an image."""
    containers = (spec or {}).get("containers") or []
    if not containers:
        return [errors.required_cause(f"{field}.containers")]
    causes: Causes = []
    for i, container in enumerate(containers):
        where = f"{field}.containers[{i}]"
        if not container.get("name"):
            causes.append(errors.required_cause(f"{where}.name"))
        else:
            causes += _name_causes(f"{where}.name", container["name"], "label1123")
        if not container.get("image"):
            causes.append(errors.required_cause(f"{where}.image"))
    return causes


def job_causes(job: Obj) -> Causes:
    """batch/v1 Job: template, restartPolicy, Indexed completions."""
    spec = job.get("spec") or {}
    template = spec.get("template") or {}
    causes = label_causes("spec.template.labels", (template.get("metadata") or {}).get("labels"))
    causes += pod_spec_causes("spec.template.spec", template.get("spec"))
    policy = (template.get("spec") or {}).get("restartPolicy")
    if policy not in ("OnFailure", "Never"):
        causes.append(errors.required_cause("spec.template.spec.restartPolicy",
                                            'valid values: "OnFailure", "Never"'))
    if spec.get("completionMode") == "Indexed" and spec.get("completions") is None:
        causes.append(errors.required_cause("spec.completions",
                                            "when completion mode is Indexed"))
    if spec.get("podFailurePolicy") and policy != "Never":
        causes.append(errors.invalid_cause(
            "spec.template.spec.restartPolicy", policy,
            'only "Never" is supported when podFailurePolicy is specified'))
    return causes


def validate(resource: Resource, obj: Obj) -> None:
    """Raise 422 Invalid listing every problem found in ``obj``."""
    meta = obj.get("metadata") or {}
    causes = metadata_causes(resource, meta)
    if resource.key == "/pods":
        causes += pod_spec_causes("spec", obj.get("spec"))
    elif resource.key == "batch/jobs":
        causes += job_causes(obj)
    if causes:
        raise errors.invalid(resource.kind, meta.get("name") or "", causes, resource.group)


# Pod template fields a suspended, never-started Job may change (KEP 2926, GA in 1.27).
SCHEDULING_DIRECTIVES = ("nodeSelector", "affinity", "tolerations", "schedulingGates")


def _immutable(field: str, shown: str) -> Dict[str, str]:
    return {"reason": "FieldValueInvalid", "field": field,
            "message": f"Invalid value: {shown}: field is immutable"}


def _without_directives(template: Obj) -> Obj:
    spec = {k: v for k, v in (template.get("spec") or {}).items()
            if k not in SCHEDULING_DIRECTIVES}
    return {"spec": spec}


def job_update_causes(old: Obj, new: Obj) -> Causes:
    """A Job's template, selector and completion mode are immutable (mostly)."""
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    causes: Causes = []
    for field in ("completionMode", "selector"):
        if old_spec.get(field) != new_spec.get(field):
            causes.append(_immutable(f"spec.{field}", f'"{new_spec.get(field)}"'
                                     if field == "completionMode" else "v1.LabelSelector{...}"))
    old_t, new_t = old_spec.get("template") or {}, new_spec.get("template") or {}
    if old_t != new_t:
        may_reschedule = old_spec.get("suspend") and not (old.get("status") or {}).get(
            "startTime")
        if not may_reschedule or _without_directives(old_t) != _without_directives(new_t):
            causes.append(_immutable("spec.template", "core.PodTemplateSpec{...}"))
    return causes


IMMUTABLE = "field is immutable when `immutable` is set"


def _immutable_causes(old: Obj, new: Obj, fields: Tuple[str, ...]) -> List[Dict[str, str]]:
    """A ConfigMap's or Secret's ``immutable``: its data fields and the flag itself never
    change (``ValidateConfigMapUpdate``/``ValidateSecretUpdate``)."""
    if old.get("immutable") is not True:
        return []
    causes = []
    if new.get("immutable") is not True:
        causes.append(errors.forbidden_cause("immutable", IMMUTABLE))
    causes += [errors.forbidden_cause(name, IMMUTABLE) for name in fields
               if (new.get(name) or None) != (old.get(name) or None)]
    return causes


def validate_update(resource: Resource, old: Obj, new: Obj) -> None:
    """Checks of updates beyond :func:`validate` (immutable fields)."""
    immutable = {"/configmaps": ("data", "binaryData"), "/secrets": ("data",)}.get(resource.key)
    if immutable:
        causes = _immutable_causes(old, new, immutable)
        if causes:
            raise errors.invalid(resource.kind, new["metadata"].get("name", ""), causes)
    if resource.key == "batch/jobs":
        causes = job_update_causes(old, new)
        if causes:
            name = new["metadata"].get("name", "")
            raise errors.invalid(resource.kind, name, causes, resource.group)
