"""Users of a real API server, as client certificates its CA signs (``openssl``).

A real kube-apiserver authenticates an X.509 client certificate signed by its client CA as
the user of the subject's CN, in the groups of its O entries. The test tier that runs
against a real server (``--with-kube-apiserver``, ``../shared/tools/real-k8s``) makes users
``A`` and ``B`` (and an operator) this way: :func:`user_kubeconfig` writes a kubeconfig for
one, with the cluster of an existing kubeconfig.
"""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path
from typing import Any, Dict, Sequence

import yaml


def _openssl(*args: str) -> None:
    done = subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"openssl {args[0]}: {done.stderr.strip()}")


def sign_client_certificate(ca_cert: str, ca_key: str, user: str, groups: Sequence[str],
                            directory: Path) -> Dict[str, str]:
    """A key and a certificate for ``user`` in ``groups`` signed by the CA: their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    stem = directory / user.replace(":", "_").replace("@", "_")
    key, csr, cert = (f"{stem}.key", f"{stem}.csr", f"{stem}.crt")
    subject = "".join(f"/O={g}" for g in groups) + f"/CN={user}"
    _openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-keyout", key, "-out", csr, "-subj", subject)
    _openssl("x509", "-req", "-in", csr, "-CA", ca_cert, "-CAkey", ca_key,
             "-CAcreateserial", "-out", cert, "-days", "1", "-sha256")
    return {"key": key, "cert": cert}


def user_kubeconfig(admin_kubeconfig: str, ca_cert: str, ca_key: str, user: str,
                    groups: Sequence[str], namespace: str, directory: Path) -> str:
    """A kubeconfig for ``user`` (a certificate signed by the CA) on the cluster of
    ``admin_kubeconfig``, namespace ``namespace``; its path."""
    with open(admin_kubeconfig, encoding="utf-8") as f:
        admin: Dict[str, Any] = yaml.safe_load(f)
    context = next(c for c in admin["contexts"] if c["name"] == admin["current-context"])
    cluster = next(c for c in admin["clusters"]
                   if c["name"] == context["context"]["cluster"])
    paths = sign_client_certificate(ca_cert, ca_key, user, groups, directory)

    def data(path: str) -> str:
        return base64.b64encode(Path(path).read_bytes()).decode("ascii")
    config = {"apiVersion": "v1", "kind": "Config", "current-context": user,
              "clusters": [cluster],
              "users": [{"name": user, "user": {
                  "client-certificate-data": data(paths["cert"]),
                  "client-key-data": data(paths["key"])}}],
              "contexts": [{"name": user, "context": {
                  "cluster": cluster["name"], "user": user, "namespace": namespace}}]}
    path = directory / f"{user.replace(':', '_')}.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return str(path)
