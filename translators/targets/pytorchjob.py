"""Target ``pytorchjob``: a Kubeflow training-operator PyTorchJob (``kubeflow.org/v1``).

``Master`` (1 replica) is node 0, the batch host; ``Worker`` (nodes - 1 replicas, left out for
one node) are the others. The operator wants a container named ``pytorch`` and makes one
headless Service per pod (``<name>-master-0``, ``<name>-worker-<i>``); the runtime's
``pytorchjob`` contract reads ``RANK`` and the Service names. The job succeeds when Master does.

``nprocPerNode`` (a string) is the operator's idea of processes per node, which it multiplies
into ``WORLD_SIZE`` and exports as ``PET_NPROC_PER_NODE`` for torchrun: the tasks per node
when a node runs several tasks, else the GPUs per node (one torchrun per node starts one
process per GPU), else 1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List

from translators.objects import job_config_map, token_secret, workload_metadata
from translators.targets.kubeflow_replicas import replica_specs, run_policy

if TYPE_CHECKING:
    from translators.plan import JobPlan, Unit


def nproc_per_node(plan: "JobPlan") -> str:
    """``spec.nprocPerNode`` (see the module docstring)."""
    allocation = plan.inputs.allocation
    if allocation.max_tasks_per_node > 1:
        return str(allocation.max_tasks_per_node)
    return str(allocation.gpus_per_node or 1)


def render_unit(plan: "JobPlan", unit: "Unit") -> List[Dict[str, Any]]:
    """The manifests of one unit."""
    replicas = replica_specs(plan, unit, "Master")
    job = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
           "metadata": workload_metadata(plan, unit),
           "spec": {"nprocPerNode": nproc_per_node(plan), "runPolicy": run_policy(plan, unit),
                    "pytorchReplicaSpecs": replicas}}
    return [job_config_map(plan, unit), token_secret(plan, unit), job]
