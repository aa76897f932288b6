"""The objects around a workload: its ConfigMap, Secret, headless Service, Volcano PodGroup,
the workload's own metadata, and the shared runtime ConfigMap.

All of a unit's objects share its name. None has a namespace (the backend sets it) or
ownerReferences: the backend adds references to the workload once the workload exists (its
uid is only known then), so that deleting the workload removes everything.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any, Dict, Tuple

from translators import metadata
from translators.gates import gate_annotations, queue_metadata, starts_suspended
from parsers.platforms.contract_profiles import profile_entry
from parsers.job_description import describe_job, description_to_json, split_description
from translators.pod import RUNTIME_PORT_NAME
from parsers.vocabulary import DESCRIPTION_KEY, ENVIRONMENT_KEY, RUNTIME_KEY, SCRIPT_KEY, TOKEN_KEY
from translators.storage import runtime_config_map_name, workdir_shared

if TYPE_CHECKING:
    from translators.plan import JobPlan, Unit


#: ``sbatch-k8s.io/kind`` of a job's ConfigMap and Secret: the admission policy finds the
#: job Secrets by it (no pod of another user may mount one), and both are immutable.
JOB_FILES_KIND = "job-files"
JOB_SECRET_KIND = "job-secret"


def _meta(plan: "JobPlan", unit: "Unit", kind: str = "") -> Dict[str, Any]:
    labels = plan.labels(unit)
    if kind:
        labels[metadata.KIND] = kind
    meta: Dict[str, Any] = {"name": unit.name, "labels": labels}
    annotations = plan.annotations(unit)
    if annotations:
        meta["annotations"] = annotations
    return meta


def description_parts(plan: "JobPlan", unit: "Unit") -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The description of ``unit`` (what the runtime reads to become this Slurm job) as its
    public part (``job.json``) and its private part (``environment.json``)."""
    inputs = plan.inputs
    description = describe_job(
        plan.job, inputs.allocation, inputs.context, unit.job_id, inputs.cluster_name,
        plan.workdir, dict(plan.environment), unit.array_job_id, unit.array_task_id)
    description.update(profile_entry(plan.job.k8s_contract or plan.partition.contract))
    if not workdir_shared(plan.workdir, inputs.partition):
        description["stream_output"] = True      # node 0 copies its output to the pod log
    return split_description(description)


def script_bytes(text: str) -> bytes:
    """The script as the file held it: sbatch reads scripts as bytes and keeps any byte that
    is not UTF-8 as a lone surrogate (``surrogateescape``)."""
    return text.encode("utf-8", "surrogateescape")


def job_config_map(plan: "JobPlan", unit: "Unit") -> Dict[str, Any]:
    """ConfigMap ``<name>``: the batch script and ``job.json`` (nothing exported: see
    :mod:`parsers.job_description`). Immutable: what must change later (a requeue's
    restart count) rides in the workload's copy instead.

    A ConfigMap's ``data`` holds UTF-8 text only, so a script with other bytes (a Latin-1
    comment, a payload after ``exit``) goes into ``binaryData``, base64-encoded; the mounted
    file holds the same bytes either way."""
    public, _ = description_parts(plan, unit)
    raw = script_bytes(plan.job.script.text)
    data: Dict[str, str] = {}
    binary: Dict[str, str] = {}
    try:
        data[SCRIPT_KEY] = raw.decode("utf-8")
    except UnicodeDecodeError:
        binary[SCRIPT_KEY] = base64.b64encode(raw).decode("ascii")
    data[DESCRIPTION_KEY] = description_to_json(public)
    manifest: Dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap",
                                "metadata": _meta(plan, unit, JOB_FILES_KIND),
                                "immutable": True, "data": data}
    if binary:
        manifest["binaryData"] = binary
    return manifest


def _base64(text: str) -> str:
    return base64.b64encode(text.encode()).decode("ascii")


def token_secret(plan: "JobPlan", unit: "Unit") -> Dict[str, Any]:
    """Secret ``<name>``: the token node agents require of step launches, and the job's
    exported environment (``environment.json``), both mounted at ``/etc/sbatch-k8s/token``.
    Immutable; only the job's own pods read it (through their volume)."""
    _, private = description_parts(plan, unit)
    data = {TOKEN_KEY: _base64(plan.inputs.token),
            ENVIRONMENT_KEY: _base64(description_to_json(private))}
    return {"apiVersion": "v1", "kind": "Secret",
            "metadata": _meta(plan, unit, JOB_SECRET_KIND), "immutable": True,
            "type": "Opaque", "data": data}


def runtime_config_map(runtime_hash: str, bundle: bytes) -> Dict[str, Any]:
    """ConfigMap ``sbatch-k8s-runtime-<hash>``: the runtime zipapp every pod runs, shared by
    every job of a namespace. ``immutable``: its name is its content's hash, so it never
    changes (and kubelets need not watch it)."""
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": runtime_config_map_name(runtime_hash),
                         "labels": {metadata.MANAGED_BY: metadata.MANAGER}},
            "immutable": True,
            "binaryData": {RUNTIME_KEY: base64.b64encode(bundle).decode("ascii")}}


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
    """``metadata`` of the workload: labels (with Kueue's, or Kueue's kept aside while the
    job is held or gated: :mod:`translators.gates`), and the Slurm annotations."""
    job = plan.job
    queue: Dict[str, str] = {}
    if plan.partition.queue:
        queue[metadata.KUEUE_QUEUE] = plan.partition.queue
        if plan.kueue_priority:
            queue[metadata.KUEUE_PRIORITY] = plan.kueue_priority
    kueue_labels, kueue_annotations = queue_metadata(
        queue, starts_suspended(job, plan.inputs.submit_time))
    labels = dict(plan.labels(unit), **kueue_labels)
    annotations = metadata.workload_annotations(
        job.job_name, plan.inputs.submit_time, job.given, job.comment, held=bool(job.hold),
        gates=gate_annotations(job, plan.inputs.submit_time))
    annotations.update(kueue_annotations)
    annotations.update(plan.annotations(unit))
    return {"name": unit.name, "labels": labels, "annotations": annotations}
