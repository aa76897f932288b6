"""An emulated Kubernetes control plane for CI, over real HTTP, for the real client.

``EmulatedCluster`` stands in for a kube-apiserver + controller-manager + scheduler: the
official ``kubernetes`` Python client talks to it unchanged (kubectl too, for reading by
hand). Standard library only; loopback only. ::

    with EmulatedCluster(namespaces=("default",)) as cluster:
        core = kubernetes.client.CoreV1Api(cluster.api_client())
        cluster.url, cluster.kubeconfig, cluster.token   # EmulatedCluster(tls=True): HTTPS
        cluster.faults.add(method="POST", path=r"/jobs$", status=500, times=1)
        cluster.forbid(verb="create", resource="jobs", group="batch")
        cluster.requests            # [(method, path, query dict), ...]
        cluster.objects("pods", "default")

Standalone: ``python -m tests.apiserver --kubeconfig-out PATH [--port N]``.

Emulated (real-server semantics, checked with the real client in ``test_*.py``):

- URL space and discovery: ``/version`` (v1.29.0), ``/api``, ``/api/v1``, ``/apis``,
  ``/apis/{g}``, ``/apis/{g}/{v}``; namespaced and cluster-scoped paths, ``/watch/`` paths;
  unserved resources 404. Resources: see :mod:`tests.apiserver.resources` (core, batch,
  coordination, rbac, scheduling, apiextensions, and the JobSet, Kubeflow, Volcano, Kueue,
  Trainer custom resources); creating a CRD serves its resource, deleting it removes them.
- Create: 201, uid, a global ``resourceVersion`` counter, creationTimestamp, generation,
  generateName, namespace from the URL, 404 for a missing namespace, 403 in a terminating
  one, 409 AlreadyExists, 422 Invalid (names, labels, pod and Job required fields) with the
  apimachinery messages, defaults per kind (:mod:`defaults`), ``dryRun=All``.
- Get; list with label selectors (=, ==, !=, in, notin, exists, !exists) and field selectors
  (the fields the real server supports per kind, 400 otherwise), ``limit``/``continue``.
- Update with optimistic concurrency (409 on a stale resourceVersion); PATCH as merge,
  strategic merge (approximate: object lists merged by their patch key, see :mod:`patches`)
  and JSON patch; ``/status`` separate from the main resource; generation bumps.
- Watch: initial ADDED events, resume from a resourceVersion (410 Expired past the kept
  history), selector transitions (ADDED/DELETED when an object starts/stops matching),
  ``timeoutSeconds``, bookmarks; chunked HTTP.
- Delete: propagation policies (Background default; Orphan for batch/v1 Jobs, with the real
  warning), finalizers, preconditions, graceful deletion of bound running pods (the kubelet
  completes it), namespaces terminating then emptied, deletecollection; pods/binding and
  pods/eviction.
- ``pods/log``: proxied to the kubelet of the pod's node (its preferred address and
  ``daemonEndpoints`` port, HTTPS without verification) and streamed back, with ``follow``
  (:mod:`pod_logs`).
- HTTPS, opt-in (``tls=True``, :mod:`tls`): a CA made at start signs the serving
  certificate; the kubeconfig carries the CA, every namespace gets the ``kube-root-ca.crt``
  ConfigMap, and pods with a ServiceAccount get the real API-access volume (a TokenRequest
  token the server accepts, ``ca.crt``, the namespace: :mod:`service_accounts`).
- Bearer-token authentication (401) with users' groups and extra attributes (a
  ServiceAccount token bound to a pod names it, as a kubelet's does), ``SelfSubjectReview``,
  a deny list giving RBAC-shaped 403s, opt-in RBAC from the stored Roles and bindings
  (``rbac=True``, :mod:`.rbac`; decisions recorded), the stored ValidatingAdmissionPolicies
  and bindings evaluated on every client's write (:mod:`.admission_policy`, CEL by
  ``cel-python``), immutable ConfigMaps and Secrets, fault injection (status codes, delays,
  connection resets), a request log.

Control loops (threads; woken by store events, with a short poll as backstop):

- Job controller (:mod:`job_controller`): Indexed and NonIndexed batch/v1 Jobs — pods with the
  controller's names, hostname, labels, annotation, ``JOB_COMPLETION_INDEX``, owner reference
  and tracking finalizer; parallelism, completions, suspend, backoffLimit, podFailurePolicy
  (FailJob, Ignore, Count), successPolicy, activeDeadlineSeconds, ttlSecondsAfterFinished,
  status counters, completedIndexes and conditions.
- Scheduler (:mod:`scheduler`): binds by resources (cpu, memory, extended resources such as
  nvidia.com/gpu, pod count), nodeSelector, required node affinity, taints/tolerations,
  cordoned and not-Ready nodes, scheduling gates; otherwise ``PodScheduled=False`` with the
  real message. No pod (anti-)affinity, topology spread, preemption or gang scheduling.
- Garbage collector and namespace loops (:mod:`garbage_collector`).

Not emulated: client certificates (users authenticate by bearer token only), RBAC
evaluation unless ``rbac=True``, admission webhooks, a policy's ``authorizer`` and cost
limits, OpenAPI schemas and CRD schema validation/pruning, server-side apply
(apply patches merge), protobuf, managedFields, resourceVersion semantics on get/list (always
the latest), list snapshots for ``continue`` (served from the current state), Table output,
aggregated discovery, Events from the controllers, DNS, the node lifecycle controller (no
taints from missing heartbeats, no eviction), the operators behind the custom resources
(JobSets, PyTorchJobs... are stored, nothing acts on them), and any kubelet (pods stay Pending
on their node until a test kubelet runs them, and deleted bound pods stay Terminating until it
deletes them with ``gracePeriodSeconds=0``).
"""

from tests.apiserver.cluster import EmulatedCluster

__all__ = ["EmulatedCluster"]
