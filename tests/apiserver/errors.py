"""API errors as the real kube-apiserver renders them (``kind: Status`` bodies).

One exception type, :class:`ApiError`, carries the HTTP code and the Status document. The
builders below reproduce the real server's wording (``pkg/api/errors`` in apimachinery) so the
official client's ``ApiException`` shows the same text a real cluster would.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

REASONS: Dict[int, str] = {
    400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
    405: "MethodNotAllowed", 406: "NotAcceptable", 409: "Conflict", 410: "Expired",
    415: "UnsupportedMediaType", 422: "Invalid", 429: "TooManyRequests",
    500: "InternalError", 503: "ServiceUnavailable", 504: "Timeout",
}


def reason_for_code(code: int) -> str:
    """The Status reason the real server uses for an HTTP code (``Unknown`` otherwise)."""
    return REASONS.get(code, "Unknown")


class ApiError(Exception):
    """A failed API call: HTTP ``code`` plus the ``kind: Status`` body to send."""

    def __init__(self, code: int, reason: str, message: str,
                 details: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def status(self) -> Dict[str, Any]:
        """The ``kind: Status`` document, shaped as the real server's."""
        body: Dict[str, Any] = {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": self.message, "reason": self.reason,
        }
        if self.details is not None:
            body["details"] = self.details
        body["code"] = self.code
        return body


def _details(qualified: str, name: Optional[str]) -> Dict[str, Any]:
    """``details`` of a resource error: ``{name, group, kind}`` (kind is the plural)."""
    plural, _, group = qualified.partition(".")
    details: Dict[str, Any] = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    details["kind"] = plural
    return details


def not_found(qualified: str, name: str) -> ApiError:
    """404 for a missing object: ``jobs.batch "x" not found``."""
    return ApiError(404, "NotFound", f'{qualified} "{name}" not found',
                    _details(qualified, name))


def resource_not_found() -> ApiError:
    """404 for a URL naming no served resource (unknown group, version or plural)."""
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})


def already_exists(qualified: str, name: str) -> ApiError:
    """409 for a create whose name is taken."""
    return ApiError(409, "AlreadyExists", f'{qualified} "{name}" already exists',
                    _details(qualified, name))


def conflict(qualified: str, name: str, detail: str) -> ApiError:
    """409 Conflict, e.g. a stale ``metadata.resourceVersion`` on update."""
    return ApiError(409, "Conflict",
                    f'Operation cannot be fulfilled on {qualified} "{name}": {detail}',
                    _details(qualified, name))


STALE_DETAIL = ("the object has been modified; please apply your changes to the latest "
                "version and try again")


def invalid(kind: str, name: str, causes: List[Dict[str, str]], group: str = "") -> ApiError:
    """422 Invalid with field causes ``{field, reason, message}`` (message lists them all)."""
    texts = [f"{c['field']}: {c['message']}" for c in causes]
    joined = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    details: Dict[str, Any] = {"name": name} if name else {}
    if group:
        details["group"] = group
    details["kind"] = kind
    details["causes"] = causes
    shown = f"{kind}.{group}" if group else kind
    return ApiError(422, "Invalid", f'{shown} "{name}" is invalid: {joined}', details)


def required_cause(field: str, what: str = "") -> Dict[str, str]:
    """A ``FieldValueRequired`` cause."""
    return {"reason": "FieldValueRequired",
            "message": "Required value" + (f": {what}" if what else ""), "field": field}


def forbidden_cause(field: str, what: str) -> Dict[str, str]:
    """A ``FieldValueForbidden`` cause."""
    return {"reason": "FieldValueForbidden", "message": f"Forbidden: {what}", "field": field}


def invalid_cause(field: str, value: Any, what: str) -> Dict[str, str]:
    """A ``FieldValueInvalid`` cause (value rendered as Go's ``%q``/``%v`` does)."""
    shown = f'"{value}"' if isinstance(value, str) else str(value)
    return {"reason": "FieldValueInvalid", "message": f"Invalid value: {shown}: {what}",
            "field": field}


def bad_request(message: str) -> ApiError:
    """400 BadRequest."""
    return ApiError(400, "BadRequest", message)


def method_not_allowed() -> ApiError:
    """405 for a verb the resource does not support."""
    return ApiError(405, "MethodNotAllowed",
                    "the server does not allow this method on the requested resource", {})


def unsupported_media_type(content_type: str) -> ApiError:
    """415 for a PATCH with an unknown content type."""
    return ApiError(415, "UnsupportedMediaType",
                    f'the body of the request was in an unknown format - accepted media '
                    f'types include: application/json-patch+json, application/merge-patch+json, '
                    f'application/apply-patch+yaml, application/strategic-merge-patch+json '
                    f'(got "{content_type}")', {})


def unauthorized() -> ApiError:
    """401 for a missing or wrong bearer token."""
    return ApiError(401, "Unauthorized", "Unauthorized")


def forbidden(user: str, verb: str, qualified: str, resource_path: str, group: str,
              namespace: Optional[str], name: Optional[str]) -> ApiError:
    """403 with the RBAC authorizer's message shape."""
    what = f'{qualified} "{name}"' if name else qualified
    where = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    message = (f'{what} is forbidden: User "{user}" cannot {verb} resource "{resource_path}" '
               f'in API group "{group}" {where}')
    return ApiError(403, "Forbidden", message, _details(qualified, name))


def namespace_terminating(namespace: str, qualified: str, name: str) -> ApiError:
    """403 for a create in a namespace being deleted (the NamespaceLifecycle admission)."""
    return ApiError(403, "Forbidden",
                    f'{qualified} "{name}" is forbidden: unable to create new content in '
                    f'namespace {namespace} because it is being terminated',
                    _details(qualified, name))


def expired(requested: int, oldest: int) -> ApiError:
    """410 Gone for a watch from a resourceVersion older than the kept history."""
    return ApiError(410, "Expired", f"too old resource version: {requested} ({oldest})")
