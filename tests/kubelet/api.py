"""The few API calls a kubelet makes, through the official client, with plain dicts.

Objects travel as the JSON the server sent (``_preload_content=False``), so field names are
the API's own (``nodeName``, ``deletionTimestamp``) and unknown fields survive. Status writes
are JSON merge patches (lists replaced whole), which every server accepts. Every request has
a timeout; "not found" is a value (None/False), not an error.
"""

from __future__ import annotations

import json
import urllib.parse
from typing import Any, Dict, Iterator, List, Optional, Tuple

REQUEST_TIMEOUT_S = (5.0, 20.0)
MERGE_PATCH = "application/merge-patch+json"
#: The ``User-Agent`` of the test kubelet's requests.
KUBELET_AGENT = "sbatch-k8s-test-kubelet"


def _is_status(error: Exception, *codes: int) -> bool:
    return getattr(error, "status", None) in codes


class KubeApi:
    """The API server as the test kubelet sees it."""

    def __init__(self, kubeconfig: str) -> None:
        from kubernetes import client, config

        self.client = config.new_client_from_config(config_file=kubeconfig)
        # Told apart from the commands' requests where tests count those.
        self.client.user_agent = KUBELET_AGENT
        self.core = client.CoreV1Api(self.client)
        self.batch = client.BatchV1Api(self.client)
        self.coordination = client.CoordinationV1Api(self.client)

    @staticmethod
    def _json(response: Any) -> Dict[str, Any]:
        return json.loads(response.data or b"{}")

    def _call(self, method: Any, *args: Any, **kwargs: Any) -> Optional[Dict[str, Any]]:
        """``method(*args, **kwargs)`` as JSON; None when the object does not exist."""
        try:
            return self._json(method(*args, _preload_content=False,
                                     _request_timeout=REQUEST_TIMEOUT_S, **kwargs))
        except Exception as e:
            if _is_status(e, 404):
                return None
            raise

    def server_address(self) -> Tuple[str, int]:
        """Host and port of the API server (for ``KUBERNETES_SERVICE_HOST``/``_PORT``)."""
        url = urllib.parse.urlsplit(self.client.configuration.host)
        return url.hostname or "127.0.0.1", url.port or (443 if url.scheme == "https" else 80)

    def server_version(self) -> str:
        """The API server's ``gitVersion`` (``v1.28.0``), "" when it does not say."""
        from kubernetes import client

        try:
            info = self._call(client.VersionApi(self.client).get_code)
        except Exception:
            return ""
        return str((info or {}).get("gitVersion") or "")

    # pods
    def list_pods(self) -> Dict[str, Any]:
        """Every pod in every namespace (a PodList with its resourceVersion)."""
        return self._call(self.core.list_pod_for_all_namespaces) or {}

    def watch_pods(self, resource_version: Optional[str], timeout_s: int,
                   read_timeout_s: float) -> Iterator[Dict[str, Any]]:
        """Watch events (``{"type", "object"}``) on every pod from ``resource_version``; ends
        when the server closes the watch. A quiet stream raises a read timeout after
        ``read_timeout_s``, so the caller can check whether to stop."""
        response = self.core.list_pod_for_all_namespaces(
            watch=True, resource_version=resource_version, allow_watch_bookmarks=True,
            timeout_seconds=timeout_s, _preload_content=False,
            _request_timeout=(REQUEST_TIMEOUT_S[0], read_timeout_s))
        try:
            pending = b""
            for chunk in response.stream(65536, decode_content=True):
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    if line.strip():
                        yield json.loads(line)
        finally:
            response.release_conn()

    def patch_pod_status(self, namespace: str, name: str, status: Dict[str, Any]) -> bool:
        """Merge ``status`` into the pod's status; False when the pod is gone."""
        return self._call(self.core.patch_namespaced_pod_status, name, namespace,
                          {"status": status}, _content_type=MERGE_PATCH) is not None

    def delete_pod_now(self, namespace: str, name: str, uid: str) -> None:
        """Remove the pod for good (grace 0, this uid only), as a kubelet ends a deletion."""
        body = {"gracePeriodSeconds": 0, "preconditions": {"uid": uid}}
        try:
            self._call(self.core.delete_namespaced_pod, name, namespace, body=body)
        except Exception as e:
            if not _is_status(e, 409):
                raise

    def get_job(self, namespace: str, name: str) -> Optional[Dict[str, Any]]:
        """The Job ``name``, None when it does not exist."""
        return self._call(self.batch.read_namespaced_job, name, namespace)

    # objects pods use
    def config_map(self, namespace: str, name: str) -> Optional[Dict[str, Any]]:
        """The ConfigMap, None when it does not exist."""
        return self._call(self.core.read_namespaced_config_map, name, namespace)

    def secret(self, namespace: str, name: str) -> Optional[Dict[str, Any]]:
        """The Secret, None when it does not exist."""
        return self._call(self.core.read_namespaced_secret, name, namespace)

    def service_account_token(self, namespace: str, service_account: str,
                              audience: Optional[str], expiration_s: int,
                              pod: Optional[Dict[str, Any]] = None) -> Optional[str]:
        """A bound token from the TokenRequest API (bound to ``pod``, as a real kubelet
        binds it: the server then names the pod in the token's user ``extra``); None when
        the server has none."""
        spec: Dict[str, Any] = {"expirationSeconds": expiration_s}
        if audience:
            spec["audiences"] = [audience]
        if pod is not None:
            meta = pod.get("metadata") or {}
            spec["boundObjectRef"] = {"kind": "Pod", "apiVersion": "v1",
                                      "name": meta.get("name"), "uid": meta.get("uid")}
        try:
            answer = self._call(self.core.create_namespaced_service_account_token,
                                service_account, namespace, {"spec": spec})
        except Exception:
            return None
        return ((answer or {}).get("status") or {}).get("token")

    def create_event(self, event: Dict[str, Any]) -> None:
        """Record an event; events are best effort (a server may not keep them)."""
        try:
            self._call(self.core.create_namespaced_event,
                       event["metadata"]["namespace"], event)
        except Exception:
            pass

    # nodes and leases
    def create_node(self, node: Dict[str, Any]) -> None:
        """Register a node, replacing a stale one of the same name."""
        try:
            self._call(self.core.create_node, node)
        except Exception as e:
            if not _is_status(e, 409):
                raise
            self._call(self.core.delete_node, node["metadata"]["name"])
            self._call(self.core.create_node, node)

    def patch_node_status(self, name: str, status: Dict[str, Any]) -> None:
        """Merge ``status`` into the node's status."""
        self._call(self.core.patch_node_status, name, {"status": status},
                   _content_type=MERGE_PATCH)

    def delete_node(self, name: str) -> None:
        """Unregister a node (gone already is fine)."""
        self._call(self.core.delete_node, name)

    def renew_lease(self, lease: Dict[str, Any]) -> None:
        """Create or update the node's Lease in kube-node-lease."""
        namespace, name = lease["metadata"]["namespace"], lease["metadata"]["name"]
        if self._call(self.coordination.patch_namespaced_lease, name, namespace,
                      {"spec": lease["spec"]}, _content_type=MERGE_PATCH) is None:
            self._call(self.coordination.create_namespaced_lease, namespace, lease)

    def delete_lease(self, namespace: str, name: str) -> None:
        """Remove a node's Lease (gone already is fine)."""
        self._call(self.coordination.delete_namespaced_lease, name, namespace)

    def close(self) -> None:
        """Release the client's connections."""
        self.client.close()


def pod_key(pod: Dict[str, Any]) -> Tuple[str, str]:
    """``(namespace, name)`` of a pod."""
    meta = pod.get("metadata") or {}
    return meta.get("namespace", "default"), meta.get("name", "")


def owner_job(pod: Dict[str, Any]) -> Optional[str]:
    """The name of the Job that owns the pod, if one does."""
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("kind") == "Job" and ref.get("controller", True):
            return ref.get("name")
    return None


def items(listing: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The objects of a list response."""
    return list(listing.get("items") or [])
