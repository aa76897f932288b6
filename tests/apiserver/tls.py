"""TLS for the emulated API server: a throwaway cluster CA and a serving certificate.

A real cluster has a root CA (``ca.crt``, the kubeconfig's ``certificate-authority-data``,
and the ``kube-root-ca.crt`` ConfigMap every namespace gets) that signed the API server's
serving certificate. :func:`make_certificates` makes the same pair with the ``openssl``
command (the venv has no ``cryptography``): an EC P-256 CA valid two days, and a server
certificate for ``127.0.0.1``, ``localhost`` and the in-cluster names of the ``kubernetes``
Service, with the extensions strict verifiers require (key identifiers, key usages).
"""

from __future__ import annotations

import os
import shutil
import ssl
import subprocess
from typing import List, NamedTuple

#: Names the serving certificate is valid for (the emulator listens on 127.0.0.1).
SERVER_NAMES = ("IP:127.0.0.1", "DNS:localhost", "DNS:kubernetes",
                "DNS:kubernetes.default", "DNS:kubernetes.default.svc",
                "DNS:kubernetes.default.svc.cluster.local")
_EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


class Certificates(NamedTuple):
    """PEM files in one directory: the CA (``ca_file``, its text ``ca_pem``) and the
    server's certificate and key."""

    ca_file: str
    ca_pem: str
    cert_file: str
    key_file: str


def _openssl(args: List[str]) -> None:
    done = subprocess.run(["openssl"] + args, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, timeout=60)
    if done.returncode != 0:
        raise RuntimeError("openssl " + " ".join(args[:2]) + ": "
                           + done.stderr.decode(errors="replace").strip())


def make_certificates(directory: str) -> Certificates:
    """The CA and the serving certificate, written into ``directory``."""
    if shutil.which("openssl") is None:
        raise RuntimeError("EmulatedCluster(tls=True) needs the openssl command")
    ca_key, ca_crt = os.path.join(directory, "ca.key"), os.path.join(directory, "ca.crt")
    key, csr = os.path.join(directory, "apiserver.key"), os.path.join(directory, "apiserver.csr")
    crt, ext = os.path.join(directory, "apiserver.crt"), os.path.join(directory, "apiserver.ext")
    _openssl(["req", "-x509"] + _EC + [
        "-keyout", ca_key, "-out", ca_crt, "-days", "2", "-subj", "/CN=emulated-cluster-ca",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        "-addext", "subjectKeyIdentifier=hash"])
    _openssl(["req"] + _EC + ["-keyout", key, "-out", csr, "-subj", "/CN=kube-apiserver"])
    with open(ext, "w", encoding="ascii") as out:
        out.write("basicConstraints=critical,CA:FALSE\n"
                  "keyUsage=critical,digitalSignature,keyEncipherment\n"
                  "extendedKeyUsage=serverAuth\n"
                  "subjectKeyIdentifier=hash\n"
                  "authorityKeyIdentifier=keyid:always\n"
                  f"subjectAltName={','.join(SERVER_NAMES)}\n")
    _openssl(["x509", "-req", "-in", csr, "-CA", ca_crt, "-CAkey", ca_key,
              "-CAcreateserial", "-out", crt, "-days", "2", "-sha256", "-extfile", ext])
    os.chmod(ca_key, 0o600)
    os.chmod(key, 0o600)
    with open(ca_crt, encoding="ascii") as f:
        ca_pem = f.read()
    return Certificates(ca_crt, ca_pem, crt, key)


def server_context(certificates: Certificates) -> ssl.SSLContext:
    """The server side's TLS context (TLS 1.2 and newer; no client certificates asked)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(certificates.cert_file, certificates.key_file)
    return context
