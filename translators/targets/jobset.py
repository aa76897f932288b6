"""Target ``jobset``: a JobSet (``jobset.x-k8s.io/v1alpha2``) with one replicated Job ``node``.

The child Job is the Indexed Job of the ``indexed-job`` target; JobSet adds the headless
Service (``network``), so pods resolve as ``<name>-node-0-<i>.<name>``. The runtime reads the
node index from ``SBATCHK8S_NODE_INDEX`` (the completion-index annotation).

* Success: ``operator: Any`` over ``node``. With a single replicated Job, Any and All agree;
  Any states the intent — the JobSet is done when the node Job is done, and that Job is done
  when node 0 (the batch host) is (``successPolicy``, or the runtime ending every pod).
* Failure: ``maxRestarts: 0`` — a failed child fails the JobSet. With ``--requeue`` given
  explicitly, a disrupted pod fails the child Job by count (``BackoffLimitExceeded``) and the
  JobSet recreates the whole gang, up to :data:`REQUEUE_RESTARTS` times — Slurm's requeue of the
  whole job. A script that fails or times out never restarts (rule ``NoRequeue``).
* ``suspend`` (``--hold``) and ``ttlSecondsAfterFinished`` live on the JobSet, not the child.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List

from translators.batch_job import job_spec
from translators.gates import starts_suspended
from translators.objects import (
    job_config_map,
    pod_group,
    token_secret,
    uses_pod_group,
    workload_metadata,
)
from translators.pod import pod_template

if TYPE_CHECKING:
    from translators.plan import JobPlan, Unit

REPLICATED_JOB = "node"
REQUEUE_RESTARTS = 3
#: Child Job failure reasons that are the script's own doing, never requeued.
NO_REQUEUE_REASONS = ("PodFailurePolicy", "DeadlineExceeded", "FailedIndexes",
                      "MaxFailedIndexesExceeded")


def failure_policy(gang_restart: bool) -> Dict[str, Any]:
    """The JobSet's ``failurePolicy``."""
    if not gang_restart:
        return {"maxRestarts": 0}
    return {"maxRestarts": REQUEUE_RESTARTS,
            "rules": [{"name": "NoRequeue", "action": "FailJobSet",
                       "onJobFailureReasons": list(NO_REQUEUE_REASONS)}]}


def render_unit(plan: "JobPlan", unit: "Unit") -> List[Dict[str, Any]]:
    """The manifests of one unit."""
    container = plan.traits.container
    volcano = uses_pod_group(plan)
    gang_restart = plan.job.requeue is True and not unit.indexed_array
    template = pod_template(plan, unit, container, pod_group=unit.name if volcano else None,
                            node_index_env=True, jobset=True)
    child = {"metadata": {"labels": plan.labels(unit)},
             "spec": job_spec(plan, unit, template, container, standalone=False,
                              gang_restart=gang_restart)}
    spec: Dict[str, Any] = {}
    if starts_suspended(plan.job, plan.inputs.submit_time):
        spec["suspend"] = True
    if plan.partition.ttl_seconds_after_finished is not None:
        spec["ttlSecondsAfterFinished"] = plan.partition.ttl_seconds_after_finished
    spec["network"] = {"enableDNSHostnames": True, "subdomain": unit.name,
                       "publishNotReadyAddresses": True}
    spec["successPolicy"] = {"operator": "Any", "targetReplicatedJobs": [REPLICATED_JOB]}
    spec["failurePolicy"] = failure_policy(gang_restart)
    spec["replicatedJobs"] = [{"name": REPLICATED_JOB, "replicas": 1, "template": child}]
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
              "metadata": workload_metadata(plan, unit), "spec": spec}
    docs = [job_config_map(plan, unit), token_secret(plan, unit)]
    if volcano:
        docs.append(pod_group(plan, unit))
    docs.append(jobset)
    return docs
