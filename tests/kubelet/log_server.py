"""The kubelet's log endpoint, which the API server's ``pods/log`` subresource proxies to.

A real kubelet serves ``GET /containerLogs/{namespace}/{pod}/{container}`` over HTTPS on its
port (10250), advertised in its Node's ``status.daemonEndpoints.kubeletEndpoint.Port``; the API
server connects to the node's preferred address from ``status.addresses``. Here one server on
``127.0.0.1`` (an ephemeral port, a throwaway self-signed certificate made at start-up) serves
every node of the test kubelet, whose Nodes advertise its port and the Hostname address
``localhost`` (the kube-apiserver's default preference, Hostname first, finds it).

Served as a kubelet does (:mod:`.log_reading`): the container's output in the current log
file (stdout and stderr interleaved as the runtime wrote them, decoded from the CRI format
with the runtime's alterations: :mod:`.cri_log`), then with ``follow=true`` what it writes
until that container run ends — across rotations as a 1.28 kubelet follows, which can stall
at one; ``tailLines``, ``limitBytes`` and ``sinceTime``/``sinceSeconds`` (the lines written
from then on, by the time the runtime wrote in each). Rotated files are never served. Errors
are a kubelet's: 404 for an unknown pod or container, 400 for a container that has not
started. Not served: ``previous``, ``timestamps`` (ignored); a
restarted container's log holds the output of every run. :meth:`LogServer.drop_streams`
breaks every open stream, as a kubelet restart or a network fault does (tests of clients
that reconnect). No client authentication (a real kubelet checks the API server's).
"""

from __future__ import annotations

import logging
import os
import shutil
import ssl
import subprocess
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, Optional, Set, Tuple

from tests.kubelet.log_reading import LogReading

LISTEN_HOST = "127.0.0.1"
#: The node address (type Hostname) under which this machine's log endpoint is reached.
ADVERTISED_HOST = "localhost"
log = logging.getLogger("tests.kubelet")

#: ``(namespace, pod name)`` → the pod's worker on this kubelet (None: not here).
WorkerLookup = Callable[[str, str], Optional[Any]]


def self_signed_certificate(directory: str) -> Optional[Tuple[str, str]]:
    """A throwaway certificate and key for ``localhost``/``127.0.0.1`` in ``directory``
    (the ``openssl`` command, else the ``cryptography`` package); None when neither exists."""
    cert, key = os.path.join(directory, "kubelet.crt"), os.path.join(directory, "kubelet.key")
    if shutil.which("openssl"):
        done = subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
             "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", cert,
             "-days", "2", "-subj", "/CN=localhost",
             "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)
        if done.returncode == 0:
            return cert, key
        log.warning("openssl could not make the kubelet's certificate: %s",
                    done.stderr.decode(errors="replace").strip())
    try:
        return _certificate_with_cryptography(cert, key)
    except ImportError:
        return None


def _certificate_with_cryptography(cert_path: str, key_path: str) -> Tuple[str, str]:
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.SubjectAlternativeName([
            x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False)
        .sign(key, hashes.SHA256()))
    with open(key_path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM,
                                  serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    with open(cert_path, "wb") as f:
        f.write(certificate.public_bytes(serialization.Encoding.PEM))
    return cert_path, key_path


class LogRequestError(Exception):
    """A request the kubelet refuses: HTTP ``code`` and its plain-text message."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def container_run(lookup: WorkerLookup, namespace: str, pod: str, container: str) -> Any:
    """The :class:`~tests.kubelet.lifecycle.ContainerRun` whose log is asked for, once its
    container has started (LogRequestError otherwise, worded as a kubelet words it)."""
    worker = lookup(namespace, pod)
    if worker is None:
        raise LogRequestError(404, f'pod "{pod}" does not exist')
    names = [c.get("name") for key in ("initContainers", "containers")
             for c in (worker.pod.get("spec") or {}).get(key) or []]
    if container not in names:
        raise LogRequestError(404, f'container "{container}" not found in pod "{pod}"')
    prepared = worker.prepared
    run = None if prepared is None else next(
        (r for r in prepared.all_runs() if r.spec.name == container), None)
    if run is None or run.process is None:
        reason = "PodInitializing" if prepared is not None else "ContainerCreating"
        if run is not None:
            reason = (run.state.get("waiting") or {}).get("reason") or reason
        raise LogRequestError(400, f'container "{container}" in pod "{pod}" is waiting to '
                                   f'start: {reason}')
    return run


class LogHandler(BaseHTTPRequestHandler):
    """One API server connection asking for container logs."""

    protocol_version = "HTTP/1.1"
    server_version = "test-kubelet"
    lookup: WorkerLookup
    stopping: threading.Event
    open_streams: Set["LogHandler"]

    def setup(self) -> None:
        super().setup()
        self.open_streams.add(self)
        handshake = getattr(self.connection, "do_handshake", None)
        if handshake is not None:
            self.connection.settimeout(30)
            handshake()
            self.connection.settimeout(None)

    def finish(self) -> None:
        self.open_streams.discard(self)
        try:
            super().finish()
        except OSError:
            pass

    def drop(self) -> None:
        """Break this connection (the client sees its stream end early)."""
        import socket

        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (stdlib name)
        """Silence the per-request log lines."""

    def do_GET(self) -> None:  # noqa: N802 (stdlib naming)
        url = urllib.parse.urlsplit(self.path)
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query).items()}
        parts = [urllib.parse.unquote(p) for p in url.path.split("/") if p]
        try:
            if len(parts) != 4 or parts[0] != "containerLogs":
                raise LogRequestError(404, "404 page not found")
            run = container_run(self.lookup, parts[1], parts[2], parts[3])
            self._serve(run, query)
        except LogRequestError as e:
            self._error(e.code, e.message)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            self.close_connection = True

    def _error(self, code: int, message: str) -> None:
        body = (message + "\n").encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _serve(self, run: Any, query: Dict[str, str]) -> None:
        follow = query.get("follow", "").lower() in ("1", "t", "true")
        limit = _number(query.get("limitBytes"))
        reading = LogReading(run, follow, _number(query.get("tailLines")), self.stopping,
                             _since(query))
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        left = limit if limit is not None else -1
        for data in reading.chunks():
            if left >= 0:
                data = data[:left]
                left -= len(data)
            if data:
                self._chunk(data)
            if left == 0:
                break
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()


def _since(query: Dict[str, str]) -> Optional[float]:
    """The time ``sinceTime`` (RFC 3339) or ``sinceSeconds`` names (400 when malformed)."""
    import time

    from tests.kubelet.cri_log import line_time

    if query.get("sinceTime"):
        found = line_time(query["sinceTime"].encode())
        if found is None:
            raise LogRequestError(400, f"invalid sinceTime {query['sinceTime']!r}")
        return found
    seconds = _number(query.get("sinceSeconds"))
    return time.time() - seconds if seconds is not None else None


def _number(text: Optional[str]) -> Optional[int]:
    try:
        return None if text in (None, "") else max(0, int(str(text)))
    except ValueError:
        raise LogRequestError(400, f"invalid number {text!r}") from None


class LogServer:
    """The log endpoint of one test kubelet: start, :attr:`port`, stop."""

    def __init__(self, lookup: WorkerLookup, cert_dir: str) -> None:
        self.stopping = threading.Event()
        self.open_streams: Set[LogHandler] = set()
        handler = type("BoundLogHandler", (LogHandler,),
                       {"lookup": staticmethod(lookup), "stopping": self.stopping,
                        "open_streams": self.open_streams})
        self._server = ThreadingHTTPServer((LISTEN_HOST, 0), handler)
        self._server.daemon_threads = True
        self.scheme = "http"
        pair = self_signed_certificate(cert_dir)
        if pair is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*pair)
            self._server.socket = context.wrap_socket(self._server.socket, server_side=True,
                                                      do_handshake_on_connect=False)
            self.scheme = "https"
        else:
            log.warning("no openssl nor cryptography: the log endpoint speaks plain HTTP")
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.2},
                                        name="kubelet-logs", daemon=True)

    def start(self) -> "LogServer":
        """Serve from a thread."""
        self._thread.start()
        return self

    def drop_streams(self) -> int:
        """Break every open log stream; how many there were."""
        streams = list(self.open_streams)
        for handler in streams:
            handler.drop()
        return len(streams)

    def stop(self) -> None:
        """End open streams and stop serving."""
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
