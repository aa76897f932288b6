"""translators: a :class:`parsers.jobspec.JobSpec` becomes Kubernetes manifests.

Pure and deterministic: everything that varies between submissions (job id, token, runtime
hash, submit time, the server's minor version) is an input, so the same input renders the
same bytes. Nothing here reads a clock, draws random numbers, knows the namespace or does I/O.

What the backend does with the result:

* Documents come in creation order, unit by unit: ConfigMap, Secret, [Service], [PodGroup],
  then the workload (Job, JobSet, PyTorchJob or MPIJob). A unit's objects share one name.
* They carry no ``metadata.namespace`` (the backend sets the partition's) and no
  ``ownerReferences``: the backend adds references to the unit's workload once it exists,
  so deleting the workload deletes its companions.
* The shared runtime ConfigMap ``sbatch-k8s-runtime-<runtime_hash>`` is referenced, not
  part of the result: :func:`translators.objects.runtime_config_map` renders it, and the
  backend creates it when missing (``sbatch --k8s-print`` prints it first).
* Nothing exported reaches a ConfigMap, label or annotation: the job's environment rides in
  its Secret (see :mod:`parsers.job_description`).

Usage::

    result = render(RenderInputs(job, allocation, context, partition, cluster_name="k8s",
                                 job_id=1234, token=token, runtime_hash=digest,
                                 submit_time="2026-11-22T09:04:34"))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from parsers.allocation import Allocation
from parsers.jobspec import JobSpec, SubmitContext
from translators.config import PartitionConfig
from translators.ownership import Ownership


@dataclass(frozen=True)
class RenderInputs:
    """Everything a rendering depends on.

    ``target`` is one of :data:`translators.targets.TARGETS`; ``kubernetes_minor`` the
    server's minor version (optional Job fields follow it). For an array job ``job_id`` is the
    array job id unless ``array_job_id`` says otherwise; task *k* (in index order) has job
    id ``array_job_id + k``.
    """

    job: JobSpec
    allocation: Allocation
    context: SubmitContext
    partition: PartitionConfig
    cluster_name: str
    job_id: int
    token: str
    runtime_hash: str
    submit_time: str
    target: str = "indexed-job"
    kubernetes_minor: int = 29
    array_job_id: Optional[int] = None
    #: Whose the job is (annotations the cluster's admission policy checks); the default
    #: writes none (:mod:`translators.ownership`).
    ownership: Ownership = Ownership()
    #: The runtime zipapp's full SHA-256: every pod checks the runtime it mounts against it
    #: before running it ("": no check; :func:`translators.pod.runtime_command`).
    runtime_digest: str = ""


@dataclass(frozen=True)
class RenderResult:
    """The manifests in creation order, warnings for the user (``sbatch: warning: …``, in
    addition to the job's and the allocation's own), and the name of the job's objects (for
    an array with one workload per task, the ``<slug>-<arrayjobid>`` their names start with)."""

    manifests: Tuple[Dict[str, Any], ...]
    warnings: Tuple[str, ...]
    object_name: str


def render(inputs: RenderInputs) -> RenderResult:
    """The Kubernetes manifests of ``inputs``; raises :class:`parsers.input_errors.SlurmInputError`
    (Slurm-worded) when the job cannot run as asked on this partition."""
    from translators.plan import plan_job
    from translators.targets import unit_renderer

    plan = plan_job(inputs)
    render_unit = unit_renderer(inputs.target)
    manifests: List[Dict[str, Any]] = []
    for unit in plan.units:
        manifests.extend(render_unit(plan, unit))
    first = plan.units[0]
    object_name = first.name
    if first.array_task_id is not None:
        object_name = first.name[: -len(f"-{first.array_task_id}")]
    return RenderResult(tuple(manifests), plan.warnings, object_name)
