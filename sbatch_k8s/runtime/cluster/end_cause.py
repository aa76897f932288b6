"""Why a pod of the job is being stopped: a cancel, or the cluster taking a node away.

Every way a job's pods end on Kubernetes reaches the runtime the same way: SIGTERM from the
kubelet. ``scancel`` (which writes CANCELLED into the job's record, then deletes the
workload), the owner deleting the workload with kubectl, ``scontrol requeue``, and a pod
deleted or evicted alone (a node drained, ``kubectl delete pod``) must still read as Slurm
would record them: CANCELLED for the first two, a node failure (requeued by the requeue
rules) for the last. And the kubelets of a job's nodes send their SIGTERMs at different
times (tens of ms apart, either order), so node 0 may hear that another node "left because
it was terminated" before its own SIGTERM of the same cancel arrives.

Node 0 therefore asks before it writes slurmstepd's line:

* with API access (the job ServiceAccount): the record (cancelled by scancel, or marked by
  a requeue) and the pod's own workload (gone or being deleted: its owner deleted it;
  suspended: a queue took it back, it runs again later: a preemption). A workload that lives
  on while this pod is stopped is a node failure (this node) or a preemption (another
  node's pod);
* without: the other nodes. When the whole workload is deleted every node is stopped, so
  node 0 waits up to :data:`PEERS_WAIT_S` for the others to say so (or, for another node's
  end, up to :data:`OWN_STOP_WAIT_S` for its own SIGTERM). A one-node job cannot tell: its
  SIGTERM reads as a cancel. These are guesses from timing; the API's answer is not.
"""

from __future__ import annotations

from parsers.vocabulary import RECORD_PREFIX
import json
from typing import Any, Dict, List, Mapping, Optional, Tuple

from sbatch_k8s.runtime.cluster.kube_api import KubeApi, get_or_none
from parsers.vocabulary import RECORD_KEY
from sbatch_k8s.runtime.cluster.release import STATE_LABEL, requeueing

#: How long node 0, stopped itself, waits for the other nodes to say they were stopped too
#: (a cancel) when it cannot ask the API server.
PEERS_WAIT_S = 3.0
#: How long node 0 waits for its own SIGTERM after another node said it was stopped, when it
#: cannot ask the API server: a cancel reaches every node within tens of ms, while a pod
#: evicted alone fails the workload only once its runtime has exited, and the workload's
#: controller stops node 0 after that.
OWN_STOP_WAIT_S = 0.5
#: How long the questions to the API server may take in all, tried again every ASK_RETRY_S
#: after an error: well inside the pods' termination grace (60 s). At 5 s, a loaded API server
#: on real nodes left a deleted pod's job recorded CANCELLED, not NODE_FAIL and requeued.
ASK_TIMEOUT_S = 20.0
ASK_RETRY_S = 1.0
CANCELLED, NODE_FAIL, PREEMPTED = "CANCELLED", "NODE_FAIL", "PREEMPTED"
CANCEL, REQUEUE, WORKLOAD_LIVES = "cancel", "requeue", "workload lives"
#: The workload was suspended (Kueue evicting it, a hold): it runs again later.
SUSPENDED = "suspended"
#: Owner kinds → their API collection path (namespaced), for walking a pod's owners.
OWNER_PATHS: Dict[Tuple[str, str], str] = {
    ("batch/v1", "Job"): "/apis/batch/v1/namespaces/{ns}/jobs/{name}",
    ("jobset.x-k8s.io/v1alpha2", "JobSet"):
        "/apis/jobset.x-k8s.io/v1alpha2/namespaces/{ns}/jobsets/{name}",
    ("kubeflow.org/v1", "PyTorchJob"): "/apis/kubeflow.org/v1/namespaces/{ns}/pytorchjobs/{name}",
    ("kubeflow.org/v2beta1", "MPIJob"): "/apis/kubeflow.org/v2beta1/namespaces/{ns}/mpijobs/{name}",
}


def _get(api: KubeApi, path: str) -> Optional[Dict[str, Any]]:
    """The object at ``path``; None when it is gone (404)."""
    found = get_or_none(api, path)
    return found if isinstance(found, dict) else None


def record_says(config_map: Optional[Mapping[str, Any]]) -> Optional[str]:
    """:data:`CANCEL` when the record was cancelled (scancel writes it before it deletes),
    :data:`REQUEUE` when a requeue marked it, else None."""
    if config_map is None:
        return None
    if requeueing(config_map):
        return REQUEUE
    labels = (config_map.get("metadata") or {}).get("labels") or {}
    if labels.get(STATE_LABEL) == CANCELLED:
        return CANCEL
    try:
        values = json.loads((config_map.get("data") or {}).get(RECORD_KEY) or "{}")
    except ValueError:
        return None
    return CANCEL if values.get("state") == CANCELLED else None


def workload_chain(api: KubeApi, namespace: str, pod: Mapping[str, Any]
                   ) -> List[Optional[Dict[str, Any]]]:
    """The pod's owners, nearest first, as far as they can be followed (None: an owner that
    is gone)."""
    chain: List[Optional[Dict[str, Any]]] = []
    current: Optional[Mapping[str, Any]] = pod
    while current is not None:
        refs = [r for r in (current.get("metadata") or {}).get("ownerReferences") or []
                if r.get("controller")]
        if not refs:
            break
        template = OWNER_PATHS.get((str(refs[0].get("apiVersion")), str(refs[0].get("kind"))))
        if template is None:
            break
        current = _get(api, template.format(ns=namespace, name=refs[0].get("name")))
        chain.append(current)
    return chain


def ask_cluster(api: KubeApi, namespace: str, job_id: int, pod_name: str) -> str:
    """What the API server says of this job's pods being stopped: :data:`CANCEL`,
    :data:`REQUEUE` or :data:`WORKLOAD_LIVES` (only pods are being taken away)."""
    said = record_says(_get(api, f"/api/v1/namespaces/{namespace}/configmaps/"
                                 f"{RECORD_PREFIX}{job_id}"))
    if said is not None:
        return said
    pod = _get(api, f"/api/v1/namespaces/{namespace}/pods/{pod_name}") if pod_name else None
    if pod is None:
        return WORKLOAD_LIVES
    chain = workload_chain(api, namespace, pod)
    top = chain[-1] if chain else None
    if chain and (top is None or (top.get("metadata") or {}).get("deletionTimestamp")):
        return CANCEL
    if any(_suspended(owner) for owner in chain if owner is not None):
        return SUSPENDED
    return WORKLOAD_LIVES


def _suspended(workload: Mapping[str, Any]) -> bool:
    """Whether a workload is suspended (``spec.suspend``; Kubeflow's ``runPolicy``)."""
    spec = workload.get("spec") or {}
    return bool(spec.get("suspend") or (spec.get("runPolicy") or {}).get("suspend"))
