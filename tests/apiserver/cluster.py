"""``EmulatedCluster``: the HTTP server, the store and the control loops, as one context."""

from __future__ import annotations

import base64
import json
import os
import tempfile
import threading
from typing import Any, Dict, Iterable, List, Optional

from tests.apiserver.auth import Access
from tests.apiserver.faults import Faults
from tests.apiserver.http_server import Backend, Request, serve
from tests.apiserver.rbac import Rbac
from tests.apiserver.registry import Api
from tests.apiserver.resources import Resources
from tests.apiserver.store import Store
from tests.apiserver.tls import Certificates, make_certificates, server_context

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


class EmulatedCluster:
    """An emulated control plane on ``127.0.0.1:<port>`` (see the package docstring).

    ``namespaces`` are created at start (with the system ones); ``crd_groups`` limits the
    bundled custom resources to those groups (None: all, ``()``: none); ``controllers``
    False runs a bare API server (no Job controller, scheduler or garbage collector);
    ``allow_anonymous`` serves requests without a token as the admin (for kubectl by hand);
    ``scheduler_names`` are the ``spec.schedulerName`` values the scheduler binds (add
    ``volcano`` to let it stand in for Volcano's scheduler, without gang semantics);
    ``rbac`` authorizes users other than the admin from the stored Roles and bindings
    (:mod:`tests.apiserver.rbac`; off: everything not :meth:`forbid`-den is allowed);
    ``tls`` serves HTTPS with a CA made at start (:mod:`tests.apiserver.tls`: the
    kubeconfig carries it as ``certificate-authority-data``, :attr:`ca_file` holds it, every
    namespace gets it as ``kube-root-ca.crt``, and pods with a ServiceAccount get the real
    API-access volume, token and ``ca.crt``).
    """

    def __init__(self, namespaces: Iterable[str] = ("default",), port: int = 0,
                 token: Optional[str] = None, crd_groups: Optional[Iterable[str]] = None,
                 controllers: bool = True, kubeconfig_path: Optional[str] = None,
                 allow_anonymous: bool = False,
                 scheduler_names: Iterable[str] = ("default-scheduler",),
                 rbac: bool = False, tls: bool = False) -> None:
        self.store = Store()
        self.resources = Resources.default(crd_groups)
        self.api = Api(self.store, self.resources)
        self.access = Access(token, allow_anonymous)
        self.faults = Faults()
        if rbac:
            self.enable_rbac()
        self._backend = Backend(self.api, self.access, self.faults)
        self._namespaces = tuple(dict.fromkeys(tuple(namespaces) + SYSTEM_NAMESPACES))
        self._port = port
        self._tls_context: Any = None
        self._want_controllers = controllers
        self._scheduler_names = tuple(scheduler_names)
        self._kubeconfig_path = kubeconfig_path
        self._tls = tls
        #: The CA and serving certificate (``tls`` only, made at :meth:`start`).
        self.certificates: Optional[Certificates] = None
        self._tmpdir: Optional[tempfile.TemporaryDirectory] = None  # type: ignore[type-arg]
        self._server: Any = None
        self._thread: Optional[threading.Thread] = None
        self.controllers: List[Any] = []
        self.url = ""
        self.kubeconfig = ""

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> "EmulatedCluster":
        """Create the namespaces, bind the port, start serving and the control loops."""
        self._tmpdir = tempfile.TemporaryDirectory(prefix="emulated-kube-")
        if self._tls:
            self.certificates = make_certificates(self._tmpdir.name)
            self.api.root_ca_pem = self.certificates.ca_pem
            self._tls_context = server_context(self.certificates)
        self._create_namespaces()
        self._serve(self._port)
        self.kubeconfig = self._write_kubeconfig()
        self._start_controllers()
        return self

    def _create_namespaces(self) -> None:
        ns = self.resources.lookup("", "v1", "namespaces")
        assert ns is not None
        for name in self._namespaces:
            self.api.create(ns, "", {"metadata": {"name": name}})

    def _serve(self, port: int) -> None:
        self._server = serve(self._backend, port, self._tls_context)
        host, bound = self._server.server_address[:2]
        self.url = f"{'https' if self._tls else 'http'}://{host}:{bound}"
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.1},
                                        name="emulated-apiserver", daemon=True)
        self._thread.start()

    def _start_controllers(self) -> None:
        if self._want_controllers:
            from tests.apiserver.controllers import start_controllers
            self.controllers = start_controllers(self.api, self._scheduler_names)

    def _stop_serving(self) -> None:
        """Stop the loops, the watches, the listener and every open connection."""
        for controller in self.controllers:
            controller.stop()
        self.store.close()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        self._backend.break_connections()
        if self._thread is not None:
            self._thread.join(timeout=5)
        for controller in self.controllers:
            controller.join(timeout=5)
        self.controllers = []

    def stop(self) -> None:
        """Stop the loops and the server; end open watches."""
        self._stop_serving()
        if self._tmpdir is not None:
            self._tmpdir.cleanup()

    def restart_empty(self, down_s: float = 0.5) -> None:
        """Restart as an API server whose etcd was lost: every connection broken (watches
        end without their terminator), ``down_s`` with nothing listening, then the same
        port, users and certificates over a fresh store — only the system namespaces and
        those of the constructor, and a revision counter that starts again (a new etcd's)."""
        import time

        from tests.apiserver import watch_stream

        port = int(self.url.rsplit(":", 1)[1])
        watch_stream.drop_watches(self.store)
        self._stop_serving()
        time.sleep(down_s)
        root_ca = self.api.root_ca_pem
        self.store = Store(first_rv=1)
        self.api = Api(self.store, self.resources)
        self.api.root_ca_pem = root_ca
        self._backend.api = self.api
        if self.access.rbac is not None:
            self.access.rbac = Rbac(self.store)
        self._create_namespaces()
        self._serve(port)
        self._start_controllers()

    def __enter__(self) -> "EmulatedCluster":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def _write_kubeconfig(self) -> str:
        path = self._kubeconfig_path
        if path is None:
            assert self._tmpdir is not None
            path = os.path.join(self._tmpdir.name, "kubeconfig")
        cluster: Dict[str, Any] = {"server": self.url}
        if self.certificates is not None:
            cluster["certificate-authority-data"] = base64.b64encode(
                self.certificates.ca_pem.encode()).decode("ascii")
        config = {
            "apiVersion": "v1", "kind": "Config", "current-context": "emulated",
            "clusters": [{"name": "emulated", "cluster": cluster}],
            "users": [{"name": "emulated-admin", "user": {"token": self.token}}],
            "contexts": [{"name": "emulated", "context": {
                "cluster": "emulated", "user": "emulated-admin", "namespace": "default"}}],
            "preferences": {},
        }
        with open(path, "w", encoding="utf-8") as out:
            json.dump(config, out, indent=2)
        os.chmod(path, 0o600)
        return path

    # -- test conveniences ---------------------------------------------------------------
    @property
    def token(self) -> str:
        """The bearer token of the admin user in the kubeconfig."""
        return self.access.token

    @property
    def ca_file(self) -> Optional[str]:
        """The cluster CA's PEM file (None without ``tls``)."""
        return self.certificates.ca_file if self.certificates is not None else None

    @property
    def requests(self) -> List[Request]:
        """Every request seen, as ``(method, path, query)`` (a live list: ``.clear()`` works)."""
        return self._backend.requests

    def api_client(self, token: Optional[str] = None) -> Any:
        """A ``kubernetes.client.ApiClient`` for this cluster (``token`` overrides the user)."""
        from kubernetes import client
        config = client.Configuration()
        config.host = self.url
        if self.certificates is not None:
            config.ssl_ca_cert = self.certificates.ca_file
        config.api_key = {"authorization": token or self.token}
        config.api_key_prefix = {"authorization": "Bearer"}
        return client.ApiClient(config)

    def objects(self, plural: str, namespace: Optional[str] = None,
                group: Optional[str] = None) -> List[Dict[str, Any]]:
        """Stored objects of a resource (``group`` optional when the plural is unique)."""
        for row in self.resources.all():
            if row.plural == plural and (group is None or row.group == group):
                return [self.api._dress(row, o)
                        for o in self.store.list(row.key, namespace or None)]
        return []

    def forbid(self, verb: Optional[str] = None, resource: Optional[str] = None,
               group: Optional[str] = None, namespace: Optional[str] = None,
               user: Optional[str] = None) -> Any:
        """Answer matching requests 403 Forbidden (see :meth:`Access.forbid`)."""
        return self.access.forbid(verb, resource, group, namespace, user)

    def enable_rbac(self) -> Rbac:
        """Authorize users other than the admin by RBAC from now on (idempotent)."""
        if self.access.rbac is None:
            self.access.rbac = Rbac(self.store)
        return self.access.rbac

    @property
    def rbac(self) -> Optional[Rbac]:
        """The RBAC authorizer (its recorded decisions), None when RBAC is off."""
        return self.access.rbac

    def add_user(self, user: str) -> str:
        """Register another bearer-token user; returns the token."""
        return self.access.add_user(user)
