"""The ``batch/v1`` Job spec of a gang of Slurm nodes (Indexed Job target and JobSet children).

* ``completionMode: Indexed``, ``completions = parallelism = nodes``: index *i* is node *i*.
* Failure (Slurm's rules): ``backoffLimit: 0`` and a pod failure policy. A non-zero exit of the
  main container fails the job. A pod disrupted by preemption, eviction or node loss
  (``DisruptionTarget``) fails the job too: with ``--no-requeue`` it stays so (NODE_FAIL or
  PREEMPTED), and when requeueing is allowed (``--requeue``, or Slurm's default JobRequeue=1)
  sbatch-k8s's reconcile pass requeues the whole job as slurmctld does (earlier run kept,
  restart count raised: :mod:`sbatch_k8s.backends.kubernetes.requeue.next_run`). Only an array
  run as one Indexed Job lets the Job controller replace a disrupted element's pod (the
  replacement counts it as a restart: :func:`translators.pod.restarts_field`). The
  disruption rule comes first: a disrupted pod's container also exits non-zero, and the
  first matching rule wins.
* Success: with ``successPolicy`` (Kubernetes >= 1.31) the job succeeds when index 0 — the
  batch host — succeeds, as in Slurm; before that, the runtime ends every pod with the script.
* No ``activeDeadlineSeconds`` here: the Job's counts time spent Pending (queued,
  unschedulable) and would kill a job that only waited; the time-limit backstop is the pods'
  own deadline (see :mod:`translators.pod`).
* An array run as one Indexed Job fails per index (``backoffLimitPerIndex: 0``, ``FailIndex``)
  so one failed task does not stop the others; it has no success policy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List

from translators.features import (
    BACKOFF_LIMIT_PER_INDEX,
    ON_POD_CONDITIONS_OPTIONAL,
    POD_FAILURE_POLICY,
    SUCCESS_POLICY,
    supports,
)
from translators.gates import starts_suspended

if TYPE_CHECKING:
    from translators.plan import JobPlan, Unit

IGNORE = "Ignore"
FAIL_JOB = "FailJob"
FAIL_INDEX = "FailIndex"
COUNT = "Count"


def per_index_failures(plan: "JobPlan", unit: "Unit") -> bool:
    """True when each index fails on its own (an array run as one Indexed Job)."""
    return unit.indexed_array and supports(BACKOFF_LIMIT_PER_INDEX, plan.inputs.kubernetes_minor)


def disruption_action(plan: "JobPlan", unit: "Unit", gang_restart: bool = False) -> str:
    """What a disrupted pod does to the job (module docstring). ``gang_restart`` (JobSet
    with ``--requeue``): count it, so the child Job fails and the JobSet restarts the whole
    gang."""
    if plan.job.requeue is False:
        return FAIL_INDEX if per_index_failures(plan, unit) else FAIL_JOB
    if unit.indexed_array:
        return IGNORE
    return COUNT if gang_restart else FAIL_JOB


def pod_failure_policy(plan: "JobPlan", unit: "Unit", container: str,
                       disruption: str) -> Dict[str, Any]:
    """The rules: disruption first, then any non-zero exit of ``container``."""
    exit_rule: Dict[str, Any] = {
        "action": FAIL_INDEX if per_index_failures(plan, unit) else FAIL_JOB,
        "onExitCodes": {"containerName": container, "operator": "NotIn", "values": [0]},
    }
    if not supports(ON_POD_CONDITIONS_OPTIONAL, plan.inputs.kubernetes_minor):
        exit_rule["onPodConditions"] = []
    disruption_rule = {"action": disruption,
                       "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}
    rules: List[Dict[str, Any]] = [disruption_rule, exit_rule]
    return {"rules": rules}


def job_spec(plan: "JobPlan", unit: "Unit", template: Dict[str, Any], container: str,
             standalone: bool = True, gang_restart: bool = False) -> Dict[str, Any]:
    """The Job spec of ``unit``. ``standalone`` False (a JobSet child) leaves suspension and
    clean-up to the parent."""
    minor = plan.inputs.kubernetes_minor
    spec: Dict[str, Any] = {"completionMode": "Indexed", "completions": unit.completions,
                            "parallelism": unit.parallelism}
    if per_index_failures(plan, unit):
        spec["backoffLimitPerIndex"] = 0
    else:
        spec["backoffLimit"] = 0
    if standalone and plan.partition.ttl_seconds_after_finished is not None:
        spec["ttlSecondsAfterFinished"] = plan.partition.ttl_seconds_after_finished
    if standalone and starts_suspended(plan.job, plan.inputs.submit_time):
        spec["suspend"] = True
    if supports(POD_FAILURE_POLICY, minor):
        spec["podFailurePolicy"] = pod_failure_policy(
            plan, unit, container, disruption_action(plan, unit, gang_restart))
    if supports(SUCCESS_POLICY, minor) and not unit.indexed_array:
        spec["successPolicy"] = {"rules": [{"succeededIndexes": "0"}]}
    spec["template"] = template
    return spec
