"""Adapters of the Kubeflow family: PyTorchJob (training-operator v1, and the platforms built
on it: AI Hub's PyTorchJob, PAI-DLC) and Trainer v2's TrainJob.

PyTorchJob (v1.7+, and ≤ v1.6 where noted):

- node index: ``PET_NODE_RANK``, else ``RANK`` (a node rank);
- node count: ``PET_NNODES``, else ``WORLD_SIZE`` (≤ v1.6, where it counts pods);
- GPUs per node: ``PET_NPROC_PER_NODE`` when a number, else ``WORLD_SIZE / PET_NNODES`` when
  above 1 (AI Hub's ``WORLD_SIZE`` counts the GPUs);
- master: ``MASTER_ADDR``/``PET_MASTER_ADDR`` and ``MASTER_PORT``/``PET_MASTER_PORT``;
- names ``<job>-master-0``, ``<job>-worker-<i>``, reached as such (one Service per pod).

TrainJob: ``PET_NODE_RANK``, ``PET_NNODES``, ``PET_NPROC_PER_NODE``, ``PET_MASTER_ADDR``
(``<tj>-node-0-0.<tj>``) and ``PET_MASTER_PORT``; names ``<tj>-node-0-<i>``, reached as
``<tj>-node-0-<i>.<tj>``.

``RANK`` is a *node* rank on all of them, never a process rank.
"""

from __future__ import annotations

from typing import Optional, Tuple

from parsers.platforms.contract_facts import MASTER_HOST, NODE_COUNT, NODE_INDEX, PORT, \
    PROCESS_COUNT, PROCS_PER_NODE
from sbatch_k8s.runtime.platform.facts import Container, Peers, PlatformFacts, name_prefix, \
    split_address
from sbatch_k8s.runtime.platform.variables import PlatformVariables, facts_from_environment

MASTER_SUFFIX = "-master-0"


def master_worker_names(job: str, count: int) -> Tuple[str, ...]:
    """``<job>-master-0``, ``<job>-worker-0`` … ``<job>-worker-<count-2>``."""
    return (f"{job}{MASTER_SUFFIX}",) + tuple(f"{job}-worker-{i}" for i in range(count - 1))


def _node_count(seen: PlatformVariables) -> Tuple[int, str]:
    """``PET_NNODES`` (``N:N`` too), else ``WORLD_SIZE`` (≤ v1.6: one process per pod)."""
    return seen.require(NODE_COUNT), str(seen.variable(NODE_COUNT))


def pytorchjob(container: Container, contract: str = "pytorchjob") -> PlatformFacts:
    """A Master/Worker PyTorchJob container (Kubeflow, AI Hub, PAI-DLC)."""
    seen = facts_from_environment("pytorchjob", container.environ)
    index = seen.require(NODE_INDEX, f"neither {' nor '.join(seen.carriers(NODE_INDEX))} is "
                                     "set (a PyTorchJob without a Master gives no node rank)")
    count, count_var = _node_count(seen)
    gpus: Optional[int] = seen.get(PROCS_PER_NODE)
    evidence = [str(seen.variable(NODE_INDEX)), count_var]
    if gpus is not None:
        evidence.append(str(seen.variable(PROCS_PER_NODE)))
    elif seen.variable(PROCESS_COUNT) not in (None, count_var):
        # the node count is PET_NNODES: WORLD_SIZE counts processes (AI Hub: the GPUs)
        world = seen.require(PROCESS_COUNT)
        if world > count and world % count == 0:
            gpus = world // count
            evidence.append(str(seen.variable(PROCESS_COUNT)))
    master = seen.get(MASTER_HOST)
    port = seen.get(PORT)
    if master and master.split(".")[0].endswith(MASTER_SUFFIX):
        job = master.split(".")[0][:-len(MASTER_SUFFIX)]
        evidence.append(str(seen.variable(MASTER_HOST)))
    else:
        job = name_prefix(container.hostname, 2, "<job>-master-0 / <job>-worker-<i>")

    def peers(n: int) -> Peers:
        names = master_worker_names(job, n)
        return names, names

    return PlatformFacts(contract, index, count, peers, gpus, master, port, f"{contract}/{job}",
                         tuple(evidence))


def trainjob(container: Container) -> PlatformFacts:
    """A Trainer v2 TrainJob node (a JobSet underneath, pods ``<tj>-node-0-<i>``)."""
    seen = facts_from_environment("trainjob", container.environ)
    index = seen.require(NODE_INDEX)
    count, count_var = _node_count(seen)
    host, port = split_address(seen.get(MASTER_HOST) or "")
    if seen.variable(PORT):
        port = seen.get(PORT)
    first, _, subdomain = host.partition(".")
    if first.endswith("-node-0-0") and subdomain:
        prefix, service = first[:-len("-0")], subdomain.split(".")[0]
    else:
        prefix = name_prefix(container.hostname, 1, "<trainjob>-node-0-<i>")
        service = name_prefix(prefix, 2, "<trainjob>-node-0-<i>")
    evidence = (seen.name_of(NODE_INDEX), count_var, seen.name_of(MASTER_HOST))

    def peers(n: int) -> Peers:
        names = tuple(f"{prefix}-{i}" for i in range(n))
        return names, tuple(f"{name}.{service}" for name in names)

    return PlatformFacts("trainjob", index, count, peers, seen.get(PROCS_PER_NODE), host or None,
                         port, f"trainjob/{service}", evidence)
