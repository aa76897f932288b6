"""The HTTP front end: ThreadingHTTPServer speaking the Kubernetes REST protocol.

Order of a request: record it, apply an injected fault, authenticate (401), route (404 for
unserved resources), authorize (403 from the deny list), then the verb, whose writes the
stored admission policies check (:mod:`.admission_policy`). ``SelfSubjectReview`` answers
every authenticated user who it is. Responses are JSON
(``kind: Status`` on error); watches stream with chunked transfer encoding.
"""

from __future__ import annotations

import json
import socket
import ssl
import struct
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, NamedTuple, Optional, Set

from tests.apiserver import discovery, errors, pod_logs, routing, verbs, watch_stream
from tests.apiserver.admission_policy import AsUser
from tests.apiserver.auth import Access, UserInfo
from tests.apiserver.faults import Faults
from tests.apiserver.registry import Api
from tests.apiserver.selectors import make_filter
from tests.apiserver.verbs import Reply

UNAUTHENTICATED_PATHS = ("/healthz", "/livez", "/readyz")
SELF_SUBJECT_REVIEWS = "authentication.k8s.io/selfsubjectreviews"


class Request(NamedTuple):
    """A request as recorded in ``EmulatedCluster.requests``."""

    method: str
    path: str
    query: Dict[str, str]
    #: The client's ``User-Agent`` (the test kubelet's: ``tests.kubelet.api.KUBELET_AGENT``).
    agent: str = ""


@dataclass
class Backend:
    """What the handler threads share: the API, access rules, faults, the request log, and
    the open connections (what a restart breaks)."""

    api: Api
    access: Access
    faults: Faults
    requests: List[Request] = field(default_factory=list)
    connections: Set[socket.socket] = field(default_factory=set)

    def break_connections(self) -> int:
        """Reset every open connection, as a server that goes away does; how many."""
        open_now = list(self.connections)
        for connection in open_now:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        return len(open_now)


def _truthy(text: Optional[str]) -> bool:
    return (text or "").lower() in ("1", "t", "true")


class Handler(BaseHTTPRequestHandler):
    """One connection; HTTP/1.1 keep-alive as the client's connection pool expects."""

    protocol_version = "HTTP/1.1"
    server_version = "emulated-kube-apiserver"
    timeout = 120
    backend: Backend

    def setup(self) -> None:
        """Disable Nagle: headers and body go in separate writes (else ~40 ms per call);
        over TLS, shake hands here, in the connection's thread (a client that refuses our
        certificate, or speaks plain HTTP, ends only its own connection)."""
        self.handshake_failed = False
        if isinstance(self.request, ssl.SSLSocket):
            try:
                self.request.do_handshake()
            except (ssl.SSLError, OSError):
                self.handshake_failed = True
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.backend.connections.add(self.connection)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (stdlib name)
        """Silence the per-request log lines."""

    def do_GET(self) -> None:  # noqa: N802 (stdlib naming)
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._handle("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._handle("PUT")

    def do_PATCH(self) -> None:  # noqa: N802
        self._handle("PATCH")

    def do_DELETE(self) -> None:  # noqa: N802
        self._handle("DELETE")

    def _handle(self, method: str) -> None:
        url = urllib.parse.urlsplit(self.path)
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query,
                                                            keep_blank_values=True).items()}
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        self.backend.requests.append(Request(method, url.path, query,
                                             self.headers.get("User-Agent") or ""))
        try:
            fault = self.backend.faults.take(method, url.path,
                                             urllib.parse.unquote_plus(url.query))
            if fault is not None:
                if fault.delay_s:
                    time.sleep(fault.delay_s)
                if fault.reset:
                    self._reset()
                    return
                error = fault.error()
                if error is not None:
                    extra = (("Retry-After", str(fault.retry_after_s)),) \
                        if error.code == 429 else ()
                    self._send(Reply(error.code, error.status(), extra))
                    return
            user: Optional[UserInfo] = None
            if url.path.rstrip("/") not in UNAUTHENTICATED_PATHS:
                user = self.backend.access.authenticate(self.headers.get("Authorization"))
            with AsUser(user):
                self._send(self._dispatch(method, url.path, query, raw, user))
        except errors.ApiError as error:
            self._send(Reply(error.code, error.status()))
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _dispatch(self, method: str, path: str, query: Dict[str, str], raw: bytes,
                  user: Optional[UserInfo]) -> Optional[Reply]:
        parts = [p for p in path.split("/") if p]
        api = self.backend.api
        static = _static(api, parts)
        if static is not None:
            if method != "GET":
                raise errors.method_not_allowed()
            return Reply(200, static)
        prefix = routing.split_prefix(parts)
        if prefix is None:
            raise errors.resource_not_found()
        route = routing.resolve(api.resources, *prefix)
        verb = _verb(method, route, query)
        res = route.resource
        body = _json_body(raw) if raw else None
        assert user is not None
        if res.key == SELF_SUBJECT_REVIEWS:    # every user may ask who it is
            if verb != "create":
                raise errors.method_not_allowed()
            return Reply(201, {"kind": "SelfSubjectReview",
                               "apiVersion": "authentication.k8s.io/v1",
                               "metadata": {"creationTimestamp": None},
                               "status": {"userInfo": user.to_json()}})
        self.backend.access.authorize(user, verb, res.group, res.plural, route.subresource,
                                      route.namespace, route.name)
        if verb == "watch":
            matches = make_filter(query.get("labelSelector"), query.get("fieldSelector"),
                                  res.key, res.kind, res.api_version)
            self._stream(lambda write: watch_stream.serve(
                api.store, res, route.namespace, query, matches, write))
            return None
        if route.subresource == "log" and verb == "get" and route.namespace:
            answer = pod_logs.open_log(pod_logs.log_location(api, route.namespace,
                                                             route.name or "", query))
            self._stream(lambda write: pod_logs.relay(answer, write), "text/plain")
            return None
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        if route.subresource == "token" and verb == "create":
            from tests.apiserver.service_accounts import token_request

            return token_request(api, self.backend.access, route, body)
        return verbs.execute(api, verb, route, query, body, content_type)

    def _stream(self, produce: Any, content_type: str = "application/json") -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache, private")
        self.end_headers()

        def write(data: bytes) -> None:
            if data:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
        try:
            produce(write)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True

    def _send(self, reply: Optional[Reply]) -> None:
        if reply is None:
            return
        if isinstance(reply.body, (bytes, str)):
            data = reply.body.encode() if isinstance(reply.body, str) else reply.body
            content_type = "text/plain"
        else:
            data = json.dumps(reply.body).encode()
            content_type = "application/json"
        self.send_response(reply.code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in reply.headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _reset(self) -> None:
        """Drop the connection with a TCP reset (SO_LINGER 0), sending nothing."""
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
            self.connection.close()
        except OSError:
            pass

    def handle(self) -> None:
        """Serve the connection's requests; a client that resets it (a command that exits
        while a log or watch streams) ends it quietly, as a real server does."""
        if self.handshake_failed:
            return
        try:
            super().handle()
        except (ConnectionResetError, BrokenPipeError):
            self.close_connection = True

    def finish(self) -> None:
        """Tolerate connections the client (or a reset fault) already closed."""
        self.backend.connections.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass


def _json_body(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError as error:
        raise errors.bad_request(f"error decoding request body: {error}") from None


def _static(api: Api, parts: List[str]) -> Optional[Dict[str, Any]]:
    """Discovery and health documents, or None for other paths."""
    if parts in (["healthz"], ["livez"], ["readyz"]):
        return "ok"  # type: ignore[return-value]
    if parts == ["version"]:
        return discovery.version_info()
    if parts == ["api"]:
        return discovery.core_versions()
    if parts == ["apis"]:
        return discovery.group_list(api.resources)
    if parts == ["api", "v1"]:
        return discovery.resource_list(api.resources, "", "v1")
    if len(parts) == 2 and parts[0] == "apis":
        found = discovery.group(api.resources, parts[1])
        if found is None:
            raise errors.resource_not_found()
        return found
    if len(parts) == 3 and parts[0] == "apis":
        found = discovery.resource_list(api.resources, parts[1], parts[2])
        if found is None:
            raise errors.resource_not_found()
        return found
    return None


def _verb(method: str, route: routing.Route, query: Dict[str, str]) -> str:
    """The RBAC verb of a request."""
    if method == "GET":
        if route.name is None:
            return "watch" if route.legacy_watch or _truthy(query.get("watch")) else "list"
        return "watch" if route.legacy_watch else "get"
    if method == "POST":
        if route.name is not None and not route.subresource:
            raise errors.method_not_allowed()
        return "create"
    if route.name is None:
        if method == "DELETE":
            return "deletecollection"
        raise errors.method_not_allowed()
    return {"PUT": "update", "PATCH": "patch", "DELETE": "delete"}[method]


def serve(backend: Backend, port: int = 0,
          tls: Optional[ssl.SSLContext] = None) -> ThreadingHTTPServer:
    """A bound (not yet serving) server on 127.0.0.1 whose handlers use ``backend``; HTTPS
    with the ``tls`` context (each connection's handshake in its own thread)."""
    handler = type("BoundHandler", (Handler,), {"backend": backend})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True,
                                        do_handshake_on_connect=False)
    return server
