"""Target ``mpijob``: a Kubeflow MPI-operator MPIJob (``kubeflow.org/v2beta1``).

The ``Launcher`` (1 replica, a Job ``<name>-launcher``) is node 0, the batch host, and runs as
a worker too (``runLauncherAsWorker``: it is in the hostfile and keeps its GPUs); ``Worker``
(nodes - 1 replicas, left out for one node) are the other nodes, pods ``<name>-worker-<i>``.
Every pod runs the runtime (so the operator's ``sshd`` default command is never used);
``slotsPerWorker`` is the tasks per node, which ``mpirun`` reads from the hostfile. The job
succeeds when the launcher does. The launcher is created at once (``AtStartup``): the runtime
itself waits for every node before running the script.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List

from translators.objects import job_config_map, token_secret, workload_metadata
from translators.targets.kubeflow_replicas import replica_specs, run_policy

if TYPE_CHECKING:
    from translators.plan import JobPlan, Unit


def render_unit(plan: "JobPlan", unit: "Unit") -> List[Dict[str, Any]]:
    """The manifests of one unit."""
    replicas = replica_specs(plan, unit, "Launcher")
    spec = {"slotsPerWorker": plan.inputs.allocation.max_tasks_per_node,
            "runLauncherAsWorker": True, "mpiImplementation": "OpenMPI",
            "launcherCreationPolicy": "AtStartup", "runPolicy": run_policy(plan, unit),
            "mpiReplicaSpecs": replicas}
    job = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
           "metadata": workload_metadata(plan, unit), "spec": spec}
    return [job_config_map(plan, unit), token_secret(plan, unit), job]
