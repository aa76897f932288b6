"""ServiceAccounts: the TokenRequest API and the admission that gives pods API access.

A real API server's ServiceAccount admission plugin adds a projected volume
``kube-api-access-<suffix>`` to every pod (a bound token, the cluster CA from the
``kube-root-ca.crt`` ConfigMap, the namespace) mounted at :data:`ACCESS_DIR` in every
container, unless ``automountServiceAccountToken`` is false (on the pod, else on its
ServiceAccount). Here:

* only pods with a ServiceAccount of their own get it — the emulated ``default`` account
  behaves as one with ``automountServiceAccountToken: false`` (a cluster may configure it
  so), which keeps the many pods of the test suite free of token requests;
* over TLS (``EmulatedCluster(tls=True)``) the volume is the real one: token, ``ca.crt``
  from the ``kube-root-ca.crt`` ConfigMap every namespace gets (:func:`root_ca_config_map`),
  namespace — what the kubernetes client's in-cluster configuration reads;
* over plain HTTP there is no CA, so the volume holds the token and the namespace only,
  and every container gets ``SBATCHK8S_TEST_API_SCHEME=http`` — **a test-only switch**
  telling the pod-side client (:mod:`sbatch_k8s.runtime.cluster.kube_api`) to use HTTP; a real
  server never sets it.

``POST .../serviceaccounts/<name>/token`` (TokenRequest) registers a fresh bearer token for
the user ``system:serviceaccount:<namespace>:<name>``, so a test can deny that user things
with :meth:`tests.apiserver.auth.Access.forbid`. A token bound to a pod (``boundObjectRef``
of kind Pod, which the kubelet asks for) says which pod in its ``extra``
(:data:`POD_NAME_EXTRA`, :data:`POD_UID_EXTRA`), as the real authenticator does; a pod that
does not exist (or has another uid) is 404.
"""

from __future__ import annotations

import datetime
import uuid
from typing import Any, Dict, List

from tests.apiserver import metadata
from tests.apiserver.auth import Access
from tests.apiserver.verbs import Reply

Obj = Dict[str, Any]

ACCESS_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
#: What the ServiceAccount authenticator says of a token bound to a pod (``user.extra``).
POD_NAME_EXTRA = "authentication.kubernetes.io/pod-name"
POD_UID_EXTRA = "authentication.kubernetes.io/pod-uid"
#: The ConfigMap holding the cluster CA in every namespace (key ``ca.crt``).
ROOT_CA = "kube-root-ca.crt"
TOKEN_SECONDS = 3607
#: The test-only variable of the module docstring.
TEST_SCHEME_VARIABLE = "SBATCHK8S_TEST_API_SCHEME"


def service_account_user(namespace: str, name: str) -> str:
    """The user a ServiceAccount's tokens authenticate as."""
    return f"system:serviceaccount:{namespace}:{name}"


def token_request(api: Any, access: Access, route: Any, body: Any) -> Reply:
    """TokenRequest: a new token of an existing ServiceAccount (404 when it does not
    exist)."""
    namespace, name = route.namespace or "", route.name or ""
    api.get(route.resource, namespace, name)
    spec = dict((body or {}).get("spec") or {})
    seconds = int(spec.get("expirationSeconds") or 3600)
    bound = spec.get("boundObjectRef") or {}
    extra = None
    if bound.get("kind") == "Pod":     # what the kubelet asks for: the pod's own token
        pod = api.find(api.resources.lookup("", "v1", "pods"), namespace, bound.get("name", ""))
        if pod is None or (bound.get("uid") and pod["metadata"]["uid"] != bound["uid"]):
            from tests.apiserver import errors

            raise errors.not_found("pods", bound.get("name", ""))
        extra = {POD_NAME_EXTRA: [pod["metadata"]["name"]],
                 POD_UID_EXTRA: [pod["metadata"]["uid"]]}
    token = access.add_user(service_account_user(namespace, name), extra=extra)
    expires = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=seconds)
    spec["expirationSeconds"] = seconds
    return Reply(201, {
        "kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": name, "namespace": namespace}, "spec": spec,
        "status": {"token": token,
                   "expirationTimestamp": expires.strftime("%Y-%m-%dT%H:%M:%SZ")}})


def root_ca_config_map(namespace: str, ca_pem: str) -> Obj:
    """The ``kube-root-ca.crt`` ConfigMap of ``namespace`` (the root-ca-cert-publisher's)."""
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": ROOT_CA, "namespace": namespace,
                         "uid": str(uuid.uuid4()),
                         "creationTimestamp": metadata.rfc3339(),
                         "annotations": {"kubernetes.io/description": (
                             "Contains a CA bundle that can be used to verify the "
                             "kube-apiserver when using internal endpoints such as the "
                             "internal service IP or kubernetes.default.svc. No other usage "
                             "is guaranteed across distributions of Kubernetes clusters.")}},
            "data": {"ca.crt": ca_pem}}


def admit_pod(pod: Obj, tls: bool = False) -> None:
    """Mount the pod's ServiceAccount token (module docstring), with the cluster CA when the
    server speaks ``tls``; pods of the ``default`` account, with
    ``automountServiceAccountToken: false``, or mounting something at :data:`ACCESS_DIR`
    themselves are left alone."""
    meta, spec = pod.setdefault("metadata", {}), pod.setdefault("spec", {})
    account = spec.get("serviceAccountName") or "default"
    if account == "default" or spec.get("automountServiceAccountToken") is False:
        return
    containers = (spec.get("containers") or []) + (spec.get("initContainers") or [])
    if any(m.get("mountPath") == ACCESS_DIR for c in containers
           for m in c.get("volumeMounts") or []):
        return
    name = "kube-api-access-" + str(meta.get("uid", "00000")).replace("-", "")[:5]
    sources: List[Obj] = [
        {"serviceAccountToken": {"expirationSeconds": TOKEN_SECONDS, "path": "token"}}]
    if tls:
        sources.append({"configMap": {"name": ROOT_CA,
                                      "items": [{"key": "ca.crt", "path": "ca.crt"}]}})
    sources.append({"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
        "apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}})
    spec.setdefault("volumes", []).append({"name": name, "projected": {
        "defaultMode": 0o644, "sources": sources}})
    for container in containers:
        container.setdefault("volumeMounts", []).append(
            {"name": name, "mountPath": ACCESS_DIR, "readOnly": True})
        if not tls:
            container.setdefault("env", []).append(
                {"name": TEST_SCHEME_VARIABLE, "value": "http"})
