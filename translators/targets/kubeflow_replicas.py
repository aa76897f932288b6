"""What the Kubeflow operators' workloads share: ``runPolicy`` and replica specs.

Both the training operator (PyTorchJob) and the MPI operator (MPIJob) make node 0 a replica
type of its own (Master, Launcher) and the other nodes ``Worker`` replicas; both read
``runPolicy`` for failure, clean-up and gang scheduling. With ``gang = volcano`` the
operators create the PodGroup themselves (named after the job), so no PodGroup is rendered;
``schedulingPolicy`` tells them its size, queue and priority.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Dict

from translators.gates import starts_suspended
from translators.pod import pod_template

if TYPE_CHECKING:
    from translators.plan import JobPlan, Unit


def run_policy(plan: "JobPlan", unit: "Unit") -> Dict[str, Any]:
    """``runPolicy``: keep pods for their logs, no retries, ``--hold`` as suspend, gang size
    when Volcano gangs the pods. No ``activeDeadlineSeconds``: the operators count it from the
    job's start, Pending time included; the pods carry the time-limit backstop instead."""
    policy: Dict[str, Any] = {"cleanPodPolicy": "None"}
    if plan.partition.ttl_seconds_after_finished is not None:
        policy["ttlSecondsAfterFinished"] = plan.partition.ttl_seconds_after_finished
    policy["backoffLimit"] = 0
    if plan.partition.gang == "volcano":
        scheduling: Dict[str, Any] = {"minAvailable": unit.completions}
        if plan.partition.volcano_queue:
            scheduling["queue"] = plan.partition.volcano_queue
        if plan.scheduling.get("priorityClassName"):
            scheduling["priorityClass"] = plan.scheduling["priorityClassName"]
        policy["schedulingPolicy"] = scheduling
    if starts_suspended(plan.job, plan.inputs.submit_time):
        policy["suspend"] = True
    return policy


def replica_specs(plan: "JobPlan", unit: "Unit", head: str) -> Dict[str, Any]:
    """``head`` (node 0: ``Master`` or ``Launcher``, 1 replica) and ``Worker`` (the other
    nodes; left out for one node), all alike, ``restartPolicy: Never`` (a lost node fails the
    job, as in Slurm; the operators copy it into the pods)."""
    template = pod_template(plan, unit, plan.traits.container, restart_policy=None)
    specs = {head: {"replicas": 1, "restartPolicy": "Never", "template": template}}
    if unit.completions > 1:
        specs["Worker"] = {"replicas": unit.completions - 1, "restartPolicy": "Never",
                           "template": copy.deepcopy(template)}
    return specs
