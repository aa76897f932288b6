"""A tiny Kubernetes API client for the pod side: standard library only.

Node 0's runtime uses it to write its job's end into the job record and to release the jobs
that wait for it (:mod:`sbatch_k8s.runtime.cluster.job_end`). It talks to the API server as the
pod's ServiceAccount, as every in-cluster client does: ``https://$KUBERNETES_SERVICE_HOST:
$KUBERNETES_SERVICE_PORT``, the bearer token and CA certificate Kubernetes mounts at
:data:`SERVICE_ACCOUNT_DIR` (the token file is read again for every request: kubelets rotate it).
Only GET, LIST, merge PATCH and DELETE are needed; answers are parsed JSON, and a failure raises
:class:`ApiError` with the HTTP status (0: not reached).

**For tests only**: ``SBATCHK8S_TEST_API_SCHEME=http`` lets it talk plain HTTP to the
emulated API server of the test suite (which serves no TLS). Nothing else sets it.
"""

from __future__ import annotations

import json
import os
import socket
import ssl
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Mapping, Optional

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
#: Test-suite switch to plain HTTP (see the module docstring).
TEST_SCHEME_VARIABLE = "SBATCHK8S_TEST_API_SCHEME"
TIMEOUT_S = 10.0
#: The ``User-Agent`` of the runtime's requests (what an audit log or a test tells apart).
USER_AGENT = "sbatch-k8s-runtime"


class ApiError(Exception):
    """A request that failed: ``status`` is the HTTP status, 0 when the server was not
    reached."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class KubeApi:
    """The API server as this pod's ServiceAccount."""

    def __init__(self, base_url: str, token_path: str, ca_path: Optional[str],
                 namespace: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.token_path = token_path
        self.namespace = namespace
        self.calls = 0
        self._context: Optional[ssl.SSLContext] = None
        if base_url.startswith("https:"):
            self._context = ssl.create_default_context(cafile=ca_path)

    def _token(self) -> str:
        with open(self.token_path) as f:
            return f.read().strip()

    def request(self, method: str, path: str, query: Optional[Mapping[str, str]] = None,
                body: Any = None, content_type: str = "application/json") -> Any:
        """One request; the parsed JSON answer (None for an empty one)."""
        url = self.base_url + path
        if query:
            url += "?" + urllib.parse.urlencode(dict(query))
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json", "Authorization": f"Bearer {self._token()}",
                   "User-Agent": USER_AGENT}
        if data is not None:
            headers["Content-Type"] = content_type
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        self.calls += 1
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S,
                                        context=self._context) as response:
                answer = response.read()
        except urllib.error.HTTPError as e:
            raise ApiError(f"{method} {path}: {_message(e)}", e.code) from e
        except (urllib.error.URLError, OSError, socket.timeout) as e:
            raise ApiError(f"{method} {path}: cannot reach the API server: {e}") from e
        return json.loads(answer) if answer else None



def get_or_none(api: Any, path: str) -> Optional[Any]:
    """The object at ``path`` through ``api.request`` (a :class:`KubeApi`, or a client with
    the same ``request``); None when it is gone (404)."""
    try:
        return api.request("GET", path)
    except Exception as e:
        if getattr(e, "status", 0) == 404:
            return None
        raise


def _message(error: "urllib.error.HTTPError") -> str:
    """The API server's own Status message, else the HTTP reason."""
    try:
        status = json.loads(error.read() or b"{}")
        return str(status.get("message") or error.reason)
    except (ValueError, OSError, AttributeError):
        return str(error.reason)


def in_cluster(environ: Mapping[str, str], account_dir: str = SERVICE_ACCOUNT_DIR
               ) -> Optional[KubeApi]:
    """This pod's API access, or None when it has none (no service host in the environment,
    no mounted token)."""
    host = environ.get("KUBERNETES_SERVICE_HOST")
    port = environ.get("KUBERNETES_SERVICE_PORT", "443")
    token = os.path.join(account_dir, "token")
    if not host or not os.path.exists(token):
        return None
    scheme = "http" if environ.get(TEST_SCHEME_VARIABLE) == "http" else "https"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    try:
        with open(os.path.join(account_dir, "namespace")) as f:
            namespace = f.read().strip() or "default"
    except OSError:
        namespace = "default"
    ca = os.path.join(account_dir, "ca.crt")
    return KubeApi(f"{scheme}://{host}:{port}", token, ca if os.path.exists(ca) else None,
                   namespace)
