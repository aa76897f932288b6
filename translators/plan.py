"""The rendering plan: every decision about a job made once, before any manifest is built.

A job becomes one or more *units*: a unit is one workload (Job, JobSet, PyTorchJob or MPIJob)
with its ConfigMap, Secret and, where needed, Service and PodGroup, all of one name.

* A plain job is one unit named ``<slug>-<jobid>``.
* A single-node array on a target that runs Indexed Jobs is one unit too: completion index
  *i* runs the *i*-th array task (``completions`` = task count, ``parallelism`` = the ``%``
  limit); the runtime reads the index list from ``job.json``.
* Any other array is one unit per task, ``<slug>-<arrayjobid>-<taskid>``, whose job id is
  the array job id plus the task's position (Slurm's element ids).

Everything that can warn or refuse (image, resources, placement, mounts, time limit) is
decided here, so each unit's manifests are plain assembly.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple

from parsers.input_errors import submission_failed
from parsers.jobspec import JobSpec
from translators import metadata
from translators.config import PartitionConfig
from translators.features import BACKOFF_LIMIT_PER_INDEX, supports
from translators.image import choose_image
from parsers.job_description import LOGIN_ONLY_VARIABLES, job_environment
from translators.naming import unit_names
from translators.ownership import pod_name_pattern
from translators.pod import TERMINATION_GRACE_S
from translators.placement import (
    exclusivity_warnings,
    kueue_priority_class,
    node_affinity,
    pod_scheduling_fields,
    priority_class,
    tolerations_to_manifest,
)
from translators.resources import PodResources, allocation_to_resources
from translators.security import check_run_as, run_as_warnings
from translators.storage import container_mounts, job_workdir, pod_working_dir
from translators.targets import MPIJOB, PYTORCHJOB, TargetTraits, target_traits

if TYPE_CHECKING:
    from translators import RenderInputs

#: The runtime's longest wait for the other nodes (its ``SBATCHK8S_NODE_WAIT`` in pods): a
#: pod may be active that long before the script (and its time limit) starts, and a worker
#: waits as long again for node 0.
NODE_WAIT_S = 600
#: Room for pulling a large image: the kubelet's clock starts before the pull.
IMAGE_PULL_ALLOWANCE_S = 480
#: Seconds added to the time limit for the pods' ``activeDeadlineSeconds`` (see
#: :mod:`translators.pod`). The runtime enforces the limit itself (SIGTERM, then SIGKILL after
#: KillWait) from the script's start; the deadline is only a backstop for a runtime that
#: cannot, so it must never fire first: it covers the image pull, node 0 waiting for the other
#: nodes and a worker waiting for node 0, and the termination grace period.
DEADLINE_MARGIN_S = 2 * NODE_WAIT_S + IMAGE_PULL_ALLOWANCE_S + TERMINATION_GRACE_S
_BAD_TIME = "Requested time limit is invalid (missing or exceeds some limit)"


@dataclass(frozen=True)
class Unit:
    """One workload and its companion objects (see the module docstring)."""

    name: str
    job_id: int
    array_job_id: Optional[int]
    array_task_id: Optional[int]
    completions: int
    parallelism: int
    indexed_array: bool


@dataclass(frozen=True)
class JobPlan:
    """What every unit of a job shares."""

    inputs: "RenderInputs"
    job: JobSpec
    traits: TargetTraits
    units: Tuple[Unit, ...]
    image: str
    resources: PodResources
    node_selector: Tuple[Tuple[str, str], ...]
    node_affinity: Optional[Mapping[str, Any]]
    tolerations: Tuple[Mapping[str, Any], ...]
    scheduling: Mapping[str, Any]
    kueue_priority: Optional[str]
    mounts: Tuple[Mapping[str, Any], ...]
    working_dir: Optional[str]
    workdir: str
    environment: Tuple[Tuple[str, str], ...]
    warnings: Tuple[str, ...]

    @property
    def partition(self) -> PartitionConfig:
        """The partition the job runs in."""
        return self.inputs.partition

    @property
    def active_deadline_s(self) -> Optional[int]:
        """``activeDeadlineSeconds`` of every pod (None: no time limit)."""
        limit = self.job.time_limit_min
        return limit * 60 + DEADLINE_MARGIN_S if limit else None

    def annotations(self, unit: Unit) -> Dict[str, str]:
        """The ownership annotations of every object and pod of ``unit``
        (:mod:`translators.ownership`)."""
        pods = pod_name_pattern(self.traits.name, unit.name)
        return self.inputs.ownership.annotations(pods)

    def labels(self, unit: Unit) -> Dict[str, str]:
        """The labels of every object and pod of ``unit``."""
        return metadata.common_labels(
            unit.job_id, self.inputs.context.user, self.partition.name, self.job.account,
            unit.array_job_id, unit.array_task_id)


def effective_time_limit_min(job: JobSpec, partition: PartitionConfig) -> Optional[int]:
    """The time limit the job runs with (0 or None: none): ``--time``, else the partition's
    DefaultTime, else its MaxTime (Slurm's rule); beyond MaxTime is refused."""
    limit = job.time_limit_min
    if limit is None:
        return partition.default_time_min or partition.max_time_min
    if partition.max_time_min and (limit == 0 or limit > partition.max_time_min):
        raise submission_failed(_BAD_TIME)
    return limit


def _units(inputs: "RenderInputs", job: JobSpec, traits: TargetTraits) -> Tuple[Unit, ...]:
    nodes = inputs.allocation.node_count
    if job.array is None:
        name, = unit_names(job.job_name, [str(inputs.job_id)], nodes, traits)
        return (Unit(name, inputs.job_id, None, None, nodes, nodes, False),)
    base = inputs.array_job_id if inputs.array_job_id is not None else inputs.job_id
    if job.array.max_index >= inputs.partition.max_array_size:
        raise submission_failed("Invalid job array specification")
    tasks = job.array.indices()
    if nodes == 1 and traits.indexed_arrays:
        count = len(tasks)
        running = min(job.array.max_running or count, count)
        name, = unit_names(job.job_name, [str(base)], count, traits)
        return (Unit(name, base, base, None, count, running, True),)
    names = unit_names(job.job_name, [f"{base}-{t}" for t in tasks], nodes, traits)
    return tuple(Unit(name, base + position, base, task, nodes, nodes, False)
                 for position, (name, task) in enumerate(zip(names, tasks)))


def _array_warnings(job: JobSpec, units: Tuple[Unit, ...], minor: int) -> List[str]:
    limit = job.array.max_running if job.array else None
    if limit and len(units) > 1 and limit < len(units):
        return [f"--array limit %{limit} is not enforced when each array task is its own "
                f"workload: all {len(units)} tasks are created at once and run as the "
                "cluster (or a Kueue queue) admits them"]
    if units[0].indexed_array and not supports(BACKOFF_LIMIT_PER_INDEX, minor):
        return [f"on Kubernetes 1.{minor} one failed array task fails the whole array "
                "(tasks fail on their own from Kubernetes 1.29)"]
    return []


def _requeue_warnings(job: JobSpec, traits: TargetTraits) -> List[str]:
    if job.requeue and traits.name in (PYTORCHJOB, MPIJOB):
        return [f"--requeue: the {traits.name} target does not requeue jobs whose pods are "
                "lost; such jobs fail"]
    return []


def plan_job(inputs: "RenderInputs") -> JobPlan:
    """Decide everything about ``inputs`` once; raises SlurmInputError for refused jobs."""
    partition = inputs.partition
    traits = target_traits(inputs.target)
    limit = effective_time_limit_min(inputs.job, partition)
    check_run_as(partition, inputs.context)
    job = dataclasses.replace(inputs.job, partition=partition.name, time_limit_min=limit)
    units = _units(inputs, job, traits)
    image, image_warnings = choose_image(job, partition)
    resources = allocation_to_resources(job, inputs.allocation, partition)
    affinity, affinity_warnings = node_affinity(job, partition)
    workdir = job_workdir(job, inputs.context)
    working_dir, workdir_warnings = pod_working_dir(job, workdir, partition)
    priority = priority_class(job, partition)
    environment = job_environment(job, dict(inputs.context.environment),
                                  drop=LOGIN_ONLY_VARIABLES)
    warnings = (list(inputs.allocation.warnings) + list(image_warnings)
                + list(resources.warnings) + list(affinity_warnings)
                + list(exclusivity_warnings(job)) + list(workdir_warnings)
                + _array_warnings(job, units, inputs.kubernetes_minor)
                + _requeue_warnings(job, traits)
                + run_as_warnings(partition, inputs.context, workdir, not workdir_warnings))
    return JobPlan(
        inputs=inputs,
        job=job,
        traits=traits,
        units=units,
        image=image,
        resources=resources,
        node_selector=tuple(dict(partition.node_selector + resources.node_selector).items()),
        node_affinity=affinity,
        tolerations=tuple(tolerations_to_manifest(partition)),
        scheduling=pod_scheduling_fields(partition, priority),
        kueue_priority=kueue_priority_class(job, partition),
        mounts=tuple(container_mounts(job, partition)),
        working_dir=working_dir,
        workdir=workdir,
        environment=tuple(environment.items()),
        warnings=tuple(warnings),
    )
