"""Talking to the API server: the official ``kubernetes`` client, JSON in and out.

The client library is imported here only, and only when the Kubernetes backend is used (the
warm command server keeps it loaded). Requests go through the library's ``ApiClient`` (its
kubeconfig and in-cluster loading, TLS, auth plugins and connection pool) but bodies stay
plain JSON: no model classes, so a list of ten thousand jobs costs one ``json.loads``.

Failures become :class:`KubeError` carrying the API server's own Status message. Transient
ones — 5xx, 429, a reset connection, a timeout — are retried with exponential backoff for at
most :attr:`KubeClient.retry_budget_s` in all; a create that timed out and then finds its
object already there counts as created only when that object carries the same submission
mark (:data:`SUBMISSION_ANNOTATION`, one random value per submission): an object of another
job under the same name is a conflict (409), never taken over.
"""

from __future__ import annotations

from parsers.vocabulary import SUBMISSION
import json
import os
import random
import time
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

from sbatch_k8s.backends.kubernetes.api.kinds import Kind, kind_of
from sbatch_k8s.operation_errors import BackendError, ConfigurationError

#: HTTP statuses worth another try.
TRANSIENT = frozenset({429, 500, 502, 503, 504})
CONNECT_TIMEOUT_S = 5.0
READ_TIMEOUT_S = 30.0
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
#: One random value per submission on every object it creates: what tells a create retried
#: after a timeout (its object is there: ours) from a name another job holds (a conflict).
SUBMISSION_ANNOTATION = SUBMISSION
#: How the API server names a refusal of an admission policy (``deploy/policy.yaml``): no
#: permission is missing, the write is not the caller's to make.
ADMISSION_POLICY = "ValidatingAdmissionPolicy"
#: Called as ``observe(client, method, path, query, answer)`` after every successful write:
#: how the command server's watch cache learns which resourceVersion a command wrote.
WRITE_OBSERVERS: List[Any] = []


class KubeError(BackendError):
    """The API server refused or failed a request (``status`` 0: it could not be reached)."""

    def __init__(self, message: str, status: int = 0, reason: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class Target:
    """Which cluster, as whom, and the default namespace."""

    server: str
    context: str
    namespace: str


def _status_message(status: int, body: bytes, method: str, path: str) -> Tuple[str, str]:
    """The API server's Status message and reason, or a description of a non-Status body."""
    try:
        doc = json.loads(body.decode("utf-8", "replace"))
    except ValueError:
        doc = None
    if isinstance(doc, dict) and doc.get("kind") == "Status":
        return str(doc.get("message") or doc.get("reason") or status), str(doc.get("reason", ""))
    text = body.decode("utf-8", "replace").strip().splitlines()
    return f"{method} {path}: HTTP {status}" + (f": {text[0][:200]}" if text else ""), ""


def _explain(status: int, message: str, target: Target) -> str:
    """The server's message plus what a user does about it, for the statuses that need it."""
    if status == 401:
        return (f"the API server at {target.server} refused the credentials of kubeconfig "
                f"context {target.context} (Unauthorized: expired or wrong token?)")
    if status == 403 and ADMISSION_POLICY not in message:
        return (f"{message} (ask the cluster administrator for this permission; "
                "deploy/rbac.yaml lists every permission sbatch-k8s needs)")
    return message


class KubeClient:
    """One API server connection; every request counted in :attr:`calls`."""

    def __init__(self, api_client: Any, target: Target, retry_budget_s: float = 20.0) -> None:
        self.api_client = api_client
        self.target = target
        self.retry_budget_s = retry_budget_s
        self.calls = 0
        self._version: Optional[Tuple[int, int]] = None

    # -- the one request function ---------------------------------------------------------

    def request(self, method: str, path: str, query: Optional[Mapping[str, str]] = None,
                body: Any = None, content_type: str = "application/json",
                retry: bool = True) -> Any:
        """Send one request (retrying transient failures); the parsed JSON answer."""
        deadline = time.monotonic() + (self.retry_budget_s if retry else 0.0)
        delay = 0.1
        while True:
            try:
                return self._send(method, path, query, body, content_type)
            except KubeError as e:
                transient = e.status in TRANSIENT or e.status == 0
                if not (retry and transient) or time.monotonic() + delay > deadline:
                    raise
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 2.0)

    def _send(self, method: str, path: str, query: Optional[Mapping[str, str]], body: Any,
              content_type: str) -> Any:
        import urllib3

        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
        _, url, headers, body, _ = self.api_client.param_serialize(
            method=method, resource_path=path, query_params=list((query or {}).items()),
            header_params=headers, body=body, auth_settings=["BearerToken"])
        self.calls += 1
        try:
            response = self.api_client.call_api(
                method, url, header_params=headers, body=body,
                _request_timeout=(CONNECT_TIMEOUT_S, READ_TIMEOUT_S))
            data = response.read()
        except (urllib3.exceptions.HTTPError, OSError) as e:
            raise KubeError(f"cannot reach the Kubernetes API server at {self.target.server}: "
                            f"{_connection_reason(e)}") from e
        except Exception as e:  # the library's own ApiException(status=0): TLS and the like
            if type(e).__name__ != "ApiException":
                raise
            raise KubeError(f"cannot reach the Kubernetes API server at {self.target.server}: "
                            f"{getattr(e, 'reason', e)}") from e
        if response.status >= 300:
            message, reason = _status_message(response.status, data or b"", method, path)
            raise KubeError(_explain(response.status, message, self.target), response.status,
                            reason)
        answer = json.loads(data) if data else None
        if method != "GET":
            for observe in WRITE_OBSERVERS:
                observe(self, method, path, query or {}, answer)
        return answer

    def stream(self, path: str, query: Optional[Mapping[str, str]] = None,
               read_timeout_s: Optional[float] = None) -> "BodyStream":
        """GET ``path`` with its body read as it arrives (a followed pod log); one try, no
        retries (the caller knows what a broken stream means). KubeError as :meth:`request`."""
        import urllib3

        _, url, headers, _, _ = self.api_client.param_serialize(
            method="GET", resource_path=path, query_params=list((query or {}).items()),
            header_params={"Accept": "text/plain, */*"}, auth_settings=["BearerToken"])
        self.calls += 1
        try:
            response = self.api_client.call_api(
                "GET", url, header_params=headers,
                _request_timeout=(CONNECT_TIMEOUT_S, read_timeout_s))
        except (urllib3.exceptions.HTTPError, OSError) as e:
            raise KubeError(f"cannot reach the Kubernetes API server at {self.target.server}: "
                            f"{_connection_reason(e)}") from e
        if response.status >= 300:
            message, reason = _status_message(response.status, response.read() or b"", "GET",
                                              path)
            raise KubeError(_explain(response.status, message, self.target), response.status,
                            reason)
        return BodyStream(response.response)

    # -- verbs ------------------------------------------------------------------------------

    def create(self, manifest: Mapping[str, Any], namespace: Optional[str],
               dry_run: bool = False) -> Dict[str, Any]:
        """Create one object; with ``dry_run`` the server checks it and stores nothing."""
        kind = kind_of(manifest)
        query = {"dryRun": "All"} if dry_run else None
        try:
            return self.request("POST", kind.collection_path(namespace), query, dict(manifest))
        except KubeError as e:
            if e.status != 409 or dry_run:
                raise
            name = manifest["metadata"]["name"]
            found = self.get(kind, name, namespace)
            if found is not None and _same_origin(found, manifest):
                return found  # an earlier, timed-out attempt of ours created it
            raise

    def get(self, kind: Kind, name: str, namespace: Optional[str]) -> Optional[Dict[str, Any]]:
        """One object, or None when it does not exist."""
        try:
            return self.request("GET", kind.object_path(namespace, name))
        except KubeError as e:
            if e.status == 404:
                return None
            raise

    def list(self, kind: Kind, namespace: Optional[str], label_selector: str = "",
             field_selector: str = "") -> Tuple[List[Dict[str, Any]], str]:
        """Objects of ``kind`` (all namespaces when ``namespace`` is None) and the list's
        resourceVersion; a kind the server does not serve lists as nothing."""
        query = {}
        if label_selector:
            query["labelSelector"] = label_selector
        if field_selector:
            query["fieldSelector"] = field_selector
        try:
            answer = self.request("GET", kind.collection_path(namespace), query)
        except KubeError as e:
            if e.status == 404:
                return [], ""
            raise
        return list(answer.get("items") or []), str(
            (answer.get("metadata") or {}).get("resourceVersion", ""))

    def replace(self, kind: Kind, obj: Mapping[str, Any], namespace: Optional[str]
                ) -> Dict[str, Any]:
        """PUT: 409 (KubeError) when ``obj``'s resourceVersion is stale."""
        return self.request("PUT", kind.object_path(namespace, obj["metadata"]["name"]),
                            body=dict(obj), retry=True)

    def merge_patch(self, kind: Kind, name: str, namespace: Optional[str],
                    patch: Mapping[str, Any]) -> Dict[str, Any]:
        """A JSON merge patch (RFC 7386)."""
        return self.request("PATCH", kind.object_path(namespace, name), body=dict(patch),
                            content_type="application/merge-patch+json")

    def delete(self, kind: Kind, name: str, namespace: Optional[str],
               propagation: str = "Background", grace_s: Optional[int] = None) -> bool:
        """Delete one object; False when it was already gone."""
        query = {"propagationPolicy": propagation}
        if grace_s is not None:
            query["gracePeriodSeconds"] = str(grace_s)
        try:
            self.request("DELETE", kind.object_path(namespace, name), query)
        except KubeError as e:
            if e.status == 404:
                return False
            raise
        return True

    def server_minor(self) -> int:
        """The server's minor version (``/version``), asked once."""
        if self._version is None:
            doc = self.request("GET", "/version")
            major = int("".join(c for c in str(doc.get("major", "1")) if c.isdigit()) or 1)
            minor = int("".join(c for c in str(doc.get("minor", "0")) if c.isdigit()) or 0)
            self._version = (major, minor)
        return self._version[1]


class BodyStream:
    """A response body read chunk by chunk as the server sends it; :meth:`abort` (from any
    thread) ends the reading."""

    CHUNK_BYTES = 65536

    def __init__(self, response: Any) -> None:
        self._response = response         # urllib3's HTTPResponse, body not yet read

    def chunks(self) -> Iterator[bytes]:
        """The body's bytes as they arrive; ends with the body. KubeError when the
        connection breaks or times out first."""
        import urllib3

        try:
            for chunk in self._response.stream(self.CHUNK_BYTES, decode_content=True):
                if chunk:
                    yield chunk
        except (urllib3.exceptions.HTTPError, OSError, ValueError) as e:
            raise KubeError(f"the stream from the API server broke: "
                            f"{_connection_reason(e)}") from e
        finally:
            self._response.release_conn()

    def abort(self) -> None:
        """Stop the transfer: the reader sees the end of :meth:`chunks` or a KubeError.
        A body read to its end has nothing left to stop (urllib3 2.3+ then refuses the
        shutdown: the connection is back in the pool)."""
        try:
            self._response.shutdown()
        except RuntimeError:
            return
        except (AttributeError, OSError):   # urllib3 before 2.3 has no shutdown
            self._response.close()


def _same_origin(found: Mapping[str, Any], manifest: Mapping[str, Any]) -> bool:
    """True when ``found`` is what an earlier attempt of this very submission created: it
    carries the submission mark ``manifest`` carries (labels alone could be another job's)."""
    want = ((manifest.get("metadata") or {}).get("annotations") or {}).get(
        SUBMISSION_ANNOTATION)
    have = ((found.get("metadata") or {}).get("annotations") or {}).get(SUBMISSION_ANNOTATION)
    return bool(want) and want == have


def _connection_reason(error: BaseException) -> str:
    """The innermost reason of a connection failure (``Connection refused``)."""
    reason: Any = getattr(error, "reason", None) or error
    while getattr(reason, "reason", None) is not None and reason is not reason.reason:
        reason = reason.reason
    text = str(reason)
    if "Connection refused" in text:
        return "Connection refused"
    if "timed out" in text.lower():
        return "timed out"
    return text.split(": ", 1)[-1] if ": " in text else text


def connect(environ: Mapping[str, str], context: Optional[str] = None) -> KubeClient:
    """A client for the kubeconfig context (``$SBATCHK8S_CONTEXT``, ``context``, else the
    current one), or for the pod's service account when running inside a cluster."""
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config

    configuration = k8s_client.Configuration()
    kubeconfig = environ.get("KUBECONFIG") or os.path.join(
        environ.get("HOME") or os.path.expanduser("~"), ".kube", "config")
    wanted = environ.get("SBATCHK8S_CONTEXT") or context
    paths = [p for p in kubeconfig.split(os.pathsep) if p and os.path.exists(p)]
    try:
        if not paths and environ.get("KUBERNETES_SERVICE_HOST"):
            _check_service_account(kubeconfig)
            k8s_config.load_incluster_config(client_configuration=configuration)
            target = Target(configuration.host, "in-cluster", _pod_namespace())
        else:
            joined = os.pathsep.join(paths) or kubeconfig
            contexts, active = k8s_config.list_kube_config_contexts(joined)
            chosen = active
            if wanted:
                chosen = next((c for c in contexts if c.get("name") == wanted), None)
                if chosen is None:
                    raise ConfigurationError(f"kubeconfig {joined}: no context named {wanted}")
            k8s_config.load_kube_config(config_file=joined, context=chosen["name"],
                                        client_configuration=configuration,
                                        persist_config=False)
            namespace = (chosen.get("context") or {}).get("namespace") or "default"
            target = Target(configuration.host, chosen["name"], namespace)
    except ConfigurationError:
        raise
    except Exception as e:  # the library's ConfigException, a malformed file, a bad path
        raise ConfigurationError(f"cannot use kubeconfig {kubeconfig}: {e}") from e
    configuration.retries = 0
    budget = float(environ.get("SBATCHK8S_API_RETRY_S", "20"))
    return KubeClient(k8s_client.ApiClient(configuration), target, retry_budget_s=budget)


def _check_service_account(kubeconfig: str) -> None:
    """Inside a pod without a kubeconfig: refuse in one line when the pod has no service
    account token and CA to talk to the API server with (a partition without the job
    ServiceAccount, or ``automountServiceAccountToken: false``)."""
    missing = [name for name in ("token", "ca.crt")
               if not os.path.exists(os.path.join(SERVICE_ACCOUNT_DIR, name))]
    if missing:
        raise ConfigurationError(
            f"no kubeconfig ({kubeconfig}) and no service account {' or '.join(missing)} in "
            f"{SERVICE_ACCOUNT_DIR}: inside a job the commands need a partition whose pods "
            "run as the job ServiceAccount (service_account, deploy/rbac.yaml)")


def _pod_namespace() -> str:
    try:
        with open(os.path.join(SERVICE_ACCOUNT_DIR, "namespace")) as f:
            return f.read().strip() or "default"
    except OSError:
        return "default"
