"""``GET pods/{name}/log``: proxied to the kubelet of the pod's node, as the real server does.

The real kube-apiserver checks the request (a bound pod, a container of that pod: named, or
the only one), then connects over HTTPS to the node's kubelet — the first address of
``status.addresses`` in its preference order (Hostname, InternalDNS, InternalIP, ExternalDNS,
ExternalIP), port ``status.daemonEndpoints.kubeletEndpoint.Port`` — without verifying the
kubelet's certificate (no ``--kubelet-certificate-authority``), asks for
``/containerLogs/{namespace}/{pod}/{container}`` with the log options, and streams the answer
back as it comes. A kubelet error comes back with its code and message as a Status. A kubelet
that speaks plain HTTP is tried again over HTTP (the test kubelet without a certificate tool).
"""

from __future__ import annotations

import http.client
import ssl
import urllib.parse
from typing import Any, Callable, List, Mapping, NamedTuple

from tests.apiserver import errors
from tests.apiserver.registry import Api

PREFERRED_ADDRESS_TYPES = ("Hostname", "InternalDNS", "InternalIP", "ExternalDNS",
                           "ExternalIP")
#: Log options passed on to the kubelet.
LOG_OPTIONS = ("follow", "previous", "sinceSeconds", "sinceTime", "timestamps", "tailLines",
               "limitBytes")
CONNECT_TIMEOUT_S = 10.0
CHUNK_BYTES = 65536


class KubeletLocation(NamedTuple):
    """Where the log of one container is served."""

    host: str
    port: int
    path: str


def _names(pod: Mapping[str, Any], key: str) -> List[str]:
    return [str(c.get("name")) for c in (pod.get("spec") or {}).get(key) or []]


def log_location(api: Api, namespace: str, name: str, query: Mapping[str, str]
                 ) -> KubeletLocation:
    """The kubelet URL of the log a ``pods/log`` request asks for (ApiError as the real
    server refuses)."""
    pods = api.resources.lookup("", "v1", "pods")
    nodes = api.resources.lookup("", "v1", "nodes")
    assert pods is not None and nodes is not None
    pod = api.get(pods, namespace, name)
    containers = _names(pod, "containers")
    every = _names(pod, "initContainers") + containers + _names(pod, "ephemeralContainers")
    container = query.get("container") or ""
    if not container:
        if len(containers) != 1:
            raise errors.bad_request(f"a container name must be specified for pod {name}, "
                                     f"choose one of: [{' '.join(every)}]")
        container = containers[0]
    if container not in every:
        raise errors.bad_request(f"container {container} is not valid for pod {name}")
    node_name = (pod.get("spec") or {}).get("nodeName")
    if not node_name:
        raise errors.bad_request(f"pod {name} does not have a host assigned")
    status = api.get(nodes, "", node_name).get("status") or {}
    addresses = {a.get("type"): a.get("address") for a in status.get("addresses") or []}
    host = next((addresses[t] for t in PREFERRED_ADDRESS_TYPES if addresses.get(t)), None)
    port = ((status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port")
    if not host or not port:
        raise errors.ApiError(500, "InternalError",
                              f"no preferred addresses found; known addresses: "
                              f"{list(addresses.items())}")
    options = {k: query[k] for k in LOG_OPTIONS if k in query}
    path = "/containerLogs/" + "/".join(urllib.parse.quote(p, safe="")
                                        for p in (namespace, name, container))
    if options:
        path += "?" + urllib.parse.urlencode(options)
    return KubeletLocation(host, int(port), path)


def _get(location: KubeletLocation, secure: bool) -> http.client.HTTPResponse:
    if secure:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        connection: http.client.HTTPConnection = http.client.HTTPSConnection(
            location.host, location.port, timeout=CONNECT_TIMEOUT_S, context=context)
    else:
        connection = http.client.HTTPConnection(location.host, location.port,
                                                timeout=CONNECT_TIMEOUT_S)
    connection.request("GET", location.path)
    response = connection.getresponse()
    if connection.sock is not None:
        connection.sock.settimeout(None)      # a followed log may stay quiet for long
    return response


def open_log(location: KubeletLocation) -> http.client.HTTPResponse:
    """The kubelet's 200 answer, ready to stream (ApiError for anything else)."""
    try:
        try:
            response = _get(location, secure=True)
        except ssl.SSLError:
            response = _get(location, secure=False)
    except OSError as e:
        raise errors.ApiError(500, "InternalError",
                              f'Get "https://{location.host}:{location.port}{location.path}": '
                              f"{e}") from None
    if response.status != 200:
        text = response.read(4096).decode(errors="replace").strip()
        response.close()
        raise errors.ApiError(response.status, errors.reason_for_code(response.status),
                              text or f"the kubelet answered {response.status}")
    return response


def relay(response: http.client.HTTPResponse, write: Callable[[bytes], None]) -> None:
    """Copy the kubelet's answer to ``write`` as it arrives; close it at the end."""
    try:
        while True:
            data = response.read1(CHUNK_BYTES)
            if not data:
                return
            write(data)
    finally:
        response.close()
