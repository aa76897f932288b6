"""A loopback HTTP front for a real API server that counts the requests sent through it.

The emulated API server logs every request, so the benchmarks count the API calls one
``squeue`` makes; a real kube-apiserver keeps no such log for us (its audit log is a server
flag). Commands given :meth:`CountingProxy.kubeconfig` talk plain HTTP to this proxy on
127.0.0.1, which relays each connection to the server over TLS (the kubeconfig's CA, and its
client certificate when it has one) and counts the HTTP request heads going up. Answers are
relayed byte for byte, unread, so watches stream through it as they would directly. The
caller's bearer token travels in its own ``Authorization`` header, over loopback only.

Only counting runs go through the proxy: timed runs talk to the server directly.
"""

from __future__ import annotations

import base64
import os
import socket
import ssl
import tempfile
import threading
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import urlsplit

import yaml

HEAD_END = b"\r\n\r\n"
CHUNK = 65536
CONNECT_TIMEOUT_S = 10.0


def _current(config: Dict[str, Any]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The current context's cluster and user entries."""
    context = next(c for c in config["contexts"] if c["name"] == config["current-context"])
    cluster = next(c for c in config["clusters"] if c["name"] == context["context"]["cluster"])
    user = next((u for u in config.get("users") or []
                 if u["name"] == context["context"].get("user")), {"user": {}})
    return cluster["cluster"], user.get("user") or {}


class CountingProxy:
    """Counts the HTTP requests relayed to the API server of one kubeconfig."""

    def __init__(self, kubeconfig: str) -> None:
        with open(kubeconfig, encoding="utf-8") as f:
            self._config: Dict[str, Any] = yaml.safe_load(f)
        cluster, user = _current(self._config)
        if "exec" in user or "auth-provider" in user:
            raise ValueError("the kubeconfig's user authenticates by a plugin")
        upstream = urlsplit(cluster["server"])
        self._host = upstream.hostname or "127.0.0.1"
        self._port = upstream.port or (443 if upstream.scheme == "https" else 80)
        self._tls = self._tls_context(cluster, user) if upstream.scheme == "https" else None
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._lock = threading.Lock()
        self._count = 0
        self._sockets: List[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, name="counting-proxy",
                                        daemon=True)

    def _tls_context(self, cluster: Dict[str, Any], user: Dict[str, Any]) -> ssl.SSLContext:
        context = ssl.create_default_context()
        if cluster.get("insecure-skip-tls-verify"):
            context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        elif cluster.get("certificate-authority-data"):
            context.load_verify_locations(cadata=base64.b64decode(
                cluster["certificate-authority-data"]).decode())
        elif cluster.get("certificate-authority"):
            context.load_verify_locations(cafile=cluster["certificate-authority"])
        cert, key = _pem(user, "client-certificate"), _pem(user, "client-key")
        if cert and key:
            with tempfile.TemporaryDirectory() as directory:
                paths = []
                for name, data in (("cert", cert), ("key", key)):
                    path = os.path.join(directory, name)
                    with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as f:
                        f.write(data)
                    paths.append(path)
                context.load_cert_chain(*paths)
        return context

    # what the benchmark uses
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    @property
    def count(self) -> int:
        """Requests relayed so far."""
        with self._lock:
            return self._count

    def kubeconfig(self, path: str, namespace: Optional[str] = None) -> str:
        """Write a copy of the kubeconfig that reaches the server through the proxy (its
        current context in ``namespace`` when given); returns ``path``."""
        config = yaml.safe_load(yaml.safe_dump(self._config))
        cluster, _ = _current(config)
        for key in ("certificate-authority-data", "certificate-authority",
                    "insecure-skip-tls-verify", "tls-server-name"):
            cluster.pop(key, None)
        cluster["server"] = self.url
        if namespace:
            context = next(c for c in config["contexts"]
                           if c["name"] == config["current-context"])
            context["context"]["namespace"] = namespace
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w",
                  encoding="utf-8") as f:
            yaml.safe_dump(config, f)
        return path

    # life
    def start(self) -> "CountingProxy":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._listener.close()
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            _close(sock)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            raw = socket.create_connection((self._host, self._port), CONNECT_TIMEOUT_S)
            raw.settimeout(None)
            upstream = self._tls.wrap_socket(raw, server_hostname=self._host) \
                if self._tls else raw
        except OSError:
            _close(client)
            return
        with self._lock:
            self._sockets += [client, upstream]
        threading.Thread(target=_relay, args=(upstream, client), daemon=True).start()
        try:
            self._requests(client, upstream)
        except OSError:
            pass
        finally:
            _close(client)
            _close(upstream)

    def _requests(self, client: socket.socket, upstream: socket.socket) -> None:
        """Relay requests one after the other, counting each head; after an upgrade, the
        rest of the connection is relayed as it comes."""
        buffer = b""
        while True:
            while HEAD_END not in buffer:
                data = client.recv(CHUNK)
                if not data:
                    return
                buffer += data
            end = buffer.index(HEAD_END) + len(HEAD_END)
            head, buffer = buffer[:end], buffer[end:]
            with self._lock:
                self._count += 1
            upstream.sendall(head)
            headers = _headers(head)
            if "upgrade" in headers:
                upstream.sendall(buffer)
                _relay(client, upstream)
                return
            if headers.get("transfer-encoding", "").lower() == "chunked":
                buffer = _relay_chunked(client, upstream, buffer)
            else:
                buffer = _relay_exactly(client, upstream, buffer,
                                        int(headers.get("content-length", "0")))


def _pem(user: Dict[str, Any], key: str) -> Optional[bytes]:
    if user.get(f"{key}-data"):
        return base64.b64decode(user[f"{key}-data"])
    if user.get(key):
        with open(user[key], "rb") as f:
            return f.read()
    return None


def _headers(head: bytes) -> Dict[str, str]:
    lines = head.decode("latin-1").split("\r\n")[1:]
    return {name.strip().lower(): value.strip()
            for name, _, value in (line.partition(":") for line in lines if ":" in line)}


def _relay_exactly(client: socket.socket, upstream: socket.socket, buffer: bytes,
                   length: int) -> bytes:
    """Send a body of ``length`` bytes on; returns what came after it."""
    while len(buffer) < length:
        data = client.recv(CHUNK)
        if not data:
            raise OSError("client closed inside a request body")
        buffer += data
    upstream.sendall(buffer[:length])
    return buffer[length:]


def _relay_chunked(client: socket.socket, upstream: socket.socket, buffer: bytes) -> bytes:
    """Send a chunked body on, up to its last chunk and trailer; returns what came after."""
    while True:
        while b"\r\n" not in buffer:
            buffer += _more(client)
        line_end = buffer.index(b"\r\n") + 2
        size = int(buffer[:line_end].split(b";")[0].strip() or b"0", 16)
        if size == 0:
            while b"\r\n\r\n" not in buffer[line_end - 2:]:
                buffer += _more(client)
            end = buffer.index(b"\r\n\r\n", line_end - 2) + 4
            upstream.sendall(buffer[:end])
            return buffer[end:]
        buffer = _relay_exactly(client, upstream, buffer, line_end + size + 2)


def _more(sock: socket.socket) -> bytes:
    data = sock.recv(CHUNK)
    if not data:
        raise OSError("connection closed inside a chunked body")
    return data


def _relay(source: socket.socket, target: socket.socket) -> None:
    """Copy bytes until either side closes."""
    try:
        while True:
            data = source.recv(CHUNK)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    finally:
        _close(source)
        _close(target)


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
