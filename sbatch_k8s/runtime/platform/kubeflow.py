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

from sbatch_k8s.runtime.contract import ContractError
from sbatch_k8s.runtime.platform.facts import Container, Peers, PlatformFacts, first_number, \
    name_prefix, number, parse_number, split_address

MASTER_SUFFIX = "-master-0"


def master_worker_names(job: str, count: int) -> Tuple[str, ...]:
    """``<job>-master-0``, ``<job>-worker-0`` … ``<job>-worker-<count-2>``."""
    return (f"{job}{MASTER_SUFFIX}",) + tuple(f"{job}-worker-{i}" for i in range(count - 1))


def _nprocs(container: Container) -> Optional[int]:
    """``PET_NPROC_PER_NODE`` when it is a number (``auto``/``gpu``/``cpu`` say nothing)."""
    value = container.environ.get("PET_NPROC_PER_NODE", "").strip()
    return int(value) if value.isascii() and value.isdigit() and int(value) > 0 else None


def _node_count(container: Container) -> Tuple[int, str]:
    text = container.environ.get("PET_NNODES")
    if text is not None and ":" in text:
        low, _, high = text.partition(":")
        if low.strip() != high.strip():
            raise ContractError(f"PET_NNODES={text!r} is an elastic range; platform mode "
                                "runs a fixed number of nodes (set min = max)")
        return parse_number("PET_NNODES", low, "a node count", 1), "PET_NNODES"
    count, source = first_number(container, ("PET_NNODES", "WORLD_SIZE"), "a node count", 1)
    if count is None or source is None:
        raise ContractError("neither PET_NNODES nor WORLD_SIZE is set")
    return count, source


def pytorchjob(container: Container, contract: str = "pytorchjob") -> PlatformFacts:
    """A Master/Worker PyTorchJob container (Kubeflow, AI Hub, PAI-DLC)."""
    index, index_var = first_number(container, ("PET_NODE_RANK", "RANK"), "a node rank")
    if index is None or index_var is None:
        raise ContractError("neither PET_NODE_RANK nor RANK is set (a PyTorchJob without a "
                            "Master gives no node rank)")
    count, count_var = _node_count(container)
    gpus = _nprocs(container)
    evidence = [index_var, count_var]
    if gpus is not None:
        evidence.append("PET_NPROC_PER_NODE")
    elif count_var == "PET_NNODES" and "WORLD_SIZE" in container.environ:
        world = number(container, "WORLD_SIZE", "a process count", 1)
        if world > count and world % count == 0:
            gpus = world // count
            evidence.append("WORLD_SIZE")
    address_var = "MASTER_ADDR" if "MASTER_ADDR" in container.environ else "PET_MASTER_ADDR"
    master = container.environ.get(address_var)
    port_var = "MASTER_PORT" if "MASTER_PORT" in container.environ else "PET_MASTER_PORT"
    port = number(container, port_var, "a port") if port_var in container.environ else None
    if master and master.split(".")[0].endswith(MASTER_SUFFIX):
        job = master.split(".")[0][:-len(MASTER_SUFFIX)]
        evidence.append(address_var)
    else:
        job = name_prefix(container.hostname, 2, "<job>-master-0 / <job>-worker-<i>")

    def peers(n: int) -> Peers:
        names = master_worker_names(job, n)
        return names, names

    return PlatformFacts(contract, index, count, peers, gpus, master, port, f"{contract}/{job}",
                         tuple(evidence))


def trainjob(container: Container) -> PlatformFacts:
    """A Trainer v2 TrainJob node (a JobSet underneath, pods ``<tj>-node-0-<i>``)."""
    index = number(container, "PET_NODE_RANK", "a node rank")
    count, count_var = _node_count(container)
    master = container.environ.get("PET_MASTER_ADDR") or ""
    host, port = split_address(master)
    if "PET_MASTER_PORT" in container.environ:
        port = number(container, "PET_MASTER_PORT", "a port")
    first, _, subdomain = host.partition(".")
    if first.endswith("-node-0-0") and subdomain:
        prefix, service = first[:-len("-0")], subdomain.split(".")[0]
    else:
        prefix = name_prefix(container.hostname, 1, "<trainjob>-node-0-<i>")
        service = name_prefix(prefix, 2, "<trainjob>-node-0-<i>")
    evidence = ("PET_NODE_RANK", count_var, "PET_MASTER_ADDR")

    def peers(n: int) -> Peers:
        names = tuple(f"{prefix}-{i}" for i in range(n))
        return names, tuple(f"{name}.{service}" for name in names)

    return PlatformFacts("trainjob", index, count, peers, _nprocs(container), host or None,
                         port, f"trainjob/{service}", evidence)
