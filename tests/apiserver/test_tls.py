"""HTTPS (``EmulatedCluster(tls=True)``): the kubeconfig's CA verifies the server, a client
that does not trust it is refused, namespaces carry the CA, and a pod of a ServiceAccount gets
the real API-access volume whose token the server accepts."""

from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.request
from typing import Any, Iterator

import pytest
from kubernetes import client, config

from tests.apiserver import EmulatedCluster
from tests.apiserver.service_accounts import ACCESS_DIR, ROOT_CA, TEST_SCHEME_VARIABLE


@pytest.fixture
def tls_cluster() -> Iterator[EmulatedCluster]:
    """An emulated control plane over HTTPS."""
    with EmulatedCluster(namespaces=("default", "other"), tls=True) as running:
        yield running


def test_kubeconfig_carries_the_ca_and_verifies(tls_cluster: EmulatedCluster) -> None:
    assert tls_cluster.url.startswith("https://127.0.0.1:")
    with open(tls_cluster.kubeconfig) as f:
        entry = json.load(f)["clusters"][0]["cluster"]
    assert base64.b64decode(entry["certificate-authority-data"]).decode() == \
        open(tls_cluster.ca_file or "").read()
    api = config.new_client_from_config(config_file=tls_cluster.kubeconfig)
    assert api.configuration.verify_ssl
    assert client.CoreV1Api(api).read_namespace("default").metadata.name == "default"


def test_a_client_without_the_ca_is_refused(tls_cluster: EmulatedCluster) -> None:
    request = urllib.request.Request(tls_cluster.url + "/api/v1/namespaces",
                                     headers={"Authorization": f"Bearer {tls_cluster.token}"})
    with pytest.raises(urllib.error.URLError) as caught:
        urllib.request.urlopen(request, timeout=10, context=ssl.create_default_context())
    assert isinstance(caught.value.reason, ssl.SSLCertVerificationError)
    trusting = ssl.create_default_context(cafile=tls_cluster.ca_file)
    with urllib.request.urlopen(request, timeout=10, context=trusting) as answer:
        assert answer.status == 200
    # the server survived the refused handshake
    assert client.CoreV1Api(tls_cluster.api_client()).list_namespace().items


def test_every_namespace_gets_the_root_ca(tls_cluster: EmulatedCluster) -> None:
    core = client.CoreV1Api(tls_cluster.api_client())
    core.create_namespace({"metadata": {"name": "later"}})
    ca = open(tls_cluster.ca_file or "").read()
    for namespace in ("default", "other", "later", "kube-system"):
        assert core.read_namespaced_config_map(ROOT_CA, namespace).data == {"ca.crt": ca}


def _access_volume(pod: Any) -> Any:
    mounts = pod.spec.containers[0].volume_mounts or []
    name = next(m.name for m in mounts if m.mount_path == ACCESS_DIR)
    return next(v for v in pod.spec.volumes if v.name == name)


def test_a_service_account_pod_gets_token_ca_and_namespace(
        tls_cluster: EmulatedCluster) -> None:
    core = client.CoreV1Api(tls_cluster.api_client())
    core.create_namespaced_service_account("default", {"metadata": {"name": "runner"}})
    pod = core.create_namespaced_pod("default", {
        "metadata": {"name": "p"},
        "spec": {"serviceAccountName": "runner",
                 "containers": [{"name": "c", "image": "busybox"}]}})
    sources = _access_volume(pod).projected.sources
    assert sources[0].service_account_token.path == "token"
    assert sources[1].config_map.name == ROOT_CA
    assert [(i.key, i.path) for i in sources[1].config_map.items] == [("ca.crt", "ca.crt")]
    assert sources[2].downward_api.items[0].path == "namespace"
    assert all(e.name != TEST_SCHEME_VARIABLE for e in pod.spec.containers[0].env or [])
    token = core.create_namespaced_service_account_token(
        "runner", "default", {"spec": {"expirationSeconds": 3600}}).status.token
    as_account = client.CoreV1Api(tls_cluster.api_client(token=token))
    assert as_account.read_namespaced_pod("p", "default").metadata.name == "p"
