"""The objects around a workload: its ConfigMap, Secret, headless Service, Volcano PodGroup,
and the workload's own metadata.

All of a unit's objects share its name. None has a namespace (the backend sets it) or
ownerReferences: the backend adds references to the workload once the workload exists (its
uid is only known then), so that deleting the workload removes everything.
"""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any, Dict

from translators import metadata
from translators.job_description import describe_job
from translators.pod import RUNTIME_PORT_NAME
from translators.storage import DESCRIPTION_KEY, SCRIPT_KEY, TOKEN_KEY

if TYPE_CHECKING:
    from translators.plan import JobPlan, Unit


def _meta(plan: "JobPlan", unit: "Unit") -> Dict[str, Any]:
    return {"name": unit.name, "labels": plan.labels(unit)}


def job_description_text(plan: "JobPlan", unit: "Unit") -> str:
    """``job.json`` of ``unit``: what the runtime reads to become this Slurm job."""
    inputs = plan.inputs
    description = describe_job(
        plan.job, inputs.allocation, inputs.context, unit.job_id, inputs.cluster_name,
        plan.workdir, dict(plan.environment), unit.array_job_id, unit.array_task_id)
    return json.dumps(description, sort_keys=True, indent=1)


def job_config_map(plan: "JobPlan", unit: "Unit") -> Dict[str, Any]:
    """ConfigMap ``<name>``: the batch script and ``job.json``."""
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(plan, unit),
            "data": {SCRIPT_KEY: plan.job.script.text,
                     DESCRIPTION_KEY: job_description_text(plan, unit)}}


def token_secret(plan: "JobPlan", unit: "Unit") -> Dict[str, Any]:
    """Secret ``<name>``: the token node agents require of step launches."""
    token = base64.b64encode(plan.inputs.token.encode()).decode("ascii")
    return {"apiVersion": "v1", "kind": "Secret", "metadata": _meta(plan, unit),
            "type": "Opaque", "data": {TOKEN_KEY: token}}


def headless_service(plan: "JobPlan", unit: "Unit") -> Dict[str, Any]:
    """Service ``<name>``: DNS names ``<name>-<i>.<name>`` for the pods, ready or not."""
    port = plan.partition.runtime_port
    return {"apiVersion": "v1", "kind": "Service", "metadata": _meta(plan, unit),
            "spec": {"clusterIP": "None", "publishNotReadyAddresses": True,
                     "selector": {metadata.JOB_ID: str(unit.job_id)},
                     "ports": [{"name": RUNTIME_PORT_NAME, "port": port,
                                "targetPort": port}]}}


def pod_group(plan: "JobPlan", unit: "Unit") -> Dict[str, Any]:
    """Volcano PodGroup ``<name>``: the pods of a gang start together or not at all (each
    task of an array run as one Indexed Job is its own gang of one)."""
    spec: Dict[str, Any] = {"minMember": 1 if unit.indexed_array else unit.completions}
    if plan.partition.volcano_queue:
        spec["queue"] = plan.partition.volcano_queue
    priority = plan.scheduling.get("priorityClassName")
    if priority:
        spec["priorityClassName"] = priority
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": _meta(plan, unit), "spec": spec}


def uses_pod_group(plan: "JobPlan") -> bool:
    """True when the partition gangs pods with Volcano and the target needs our PodGroup."""
    return plan.partition.gang == "volcano"


def workload_metadata(plan: "JobPlan", unit: "Unit") -> Dict[str, Any]:
    """``metadata`` of the workload: labels (with Kueue's), and the Slurm annotations."""
    labels = plan.labels(unit)
    if plan.partition.queue:
        labels[metadata.KUEUE_QUEUE] = plan.partition.queue
    if plan.kueue_priority:
        labels[metadata.KUEUE_PRIORITY] = plan.kueue_priority
    job = plan.job
    annotations = metadata.workload_annotations(
        job.job_name, plan.inputs.submit_time, job.given, job.comment)
    return {"name": unit.name, "labels": labels, "annotations": annotations}
