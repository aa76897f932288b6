"""The task-training platform ("任务式训练", seed 001) and ``TF_CONFIG`` jobs.

- PyTorch mode: ``MASTER_ADDR``, ``MASTER_PORT``, ``WORLD_SIZE`` (the node count, as the
  platform's own wrapper passes it to ``--nnodes``), ``RANK`` (the node rank), ``SLOTS`` (GPUs
  per node). No variable names the peers: they meet at the master (:mod:`.rendezvous`), each
  with its rank.
- DeepSpeed mode: the same plus ``/job/hostfile`` (``server1 slots=4`` lines), which names
  every node in order.
- TensorFlow mode (also Kubeflow's TFJob): ``TF_CONFIG`` = ``{"cluster": {type: [host:port…]},
  "task": {"type", "index"}}``; every listed container is a node, ordered chief, master,
  worker, ps, evaluator.
"""

from __future__ import annotations

import json
from typing import List, Optional, Tuple

from parsers.platforms.contract_facts import MASTER_HOST, NODE_COUNT, NODE_INDEX, PORT, \
    PROCS_PER_NODE, TF_CONFIG
from parsers.platforms.contract_profiles import DEEPSPEED_HOSTFILE, TF_TYPES
from sbatch_k8s.runtime.contract import ContractError
from sbatch_k8s.runtime.platform.facts import Container, Peers, PlatformFacts, split_address
from sbatch_k8s.runtime.platform.variables import facts_from_environment

#: The fixed path and TF_CONFIG's replica types come from the contract profiles' table
#: (:mod:`parsers.platforms.contract_profiles`), which writes what this module reads; the variables'
#: names and plain values from :mod:`parsers.platforms.contract_facts`.
__all__ = ["read_hostfile", "task_training", "tf_config"]


def read_hostfile(text: str, path: str) -> List[Tuple[str, Optional[int]]]:
    """``(host, slots)`` per line of an OpenMPI (``host slots=4``) or MPICH (``host:4``)
    hostfile; comments and blank lines skipped."""
    hosts: List[Tuple[str, Optional[int]]] = []
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        host, slots = words[0], None
        if ":" in host:
            host, _, count = host.partition(":")
            slots = int(count) if count.isdigit() else None
        for word in words[1:]:
            if word.startswith("slots=") and word[6:].isdigit():
                slots = int(word[6:])
        hosts.append((host, slots))
    if not hosts:
        raise ContractError(f"the hostfile {path} names no host")
    return hosts


def task_training(container: Container) -> PlatformFacts:
    """A container of the task-training platform in PyTorch or DeepSpeed mode."""
    seen = facts_from_environment("task-training", container.environ)
    rank = seen.require(NODE_INDEX)
    master = seen.get(MASTER_HOST) or None
    port = seen.get(PORT)
    text = container.read_file(DEEPSPEED_HOSTFILE)
    if text is None:
        count = seen.require(NODE_COUNT)
        if master is None:
            raise ContractError(f"{seen.name_of(MASTER_HOST)} is not set (the PyTorch mode's "
                                "peers meet there)")

        def unknown(n: int) -> Peers:
            raise ContractError("the peers are known only after the rendezvous")

        return PlatformFacts("task-training", rank, count, unknown, seen.get(PROCS_PER_NODE),
                             master, port, f"task-training/{master}:{port}",
                             (seen.name_of(NODE_INDEX), seen.name_of(NODE_COUNT),
                              seen.name_of(PROCS_PER_NODE), seen.name_of(MASTER_HOST)),
                             rendezvous=True)
    hosts = read_hostfile(text, DEEPSPEED_HOSTFILE)
    names = tuple(h.split(".")[0] for h, _ in hosts)
    addresses = tuple(h for h, _ in hosts)
    world = seen.get(NODE_COUNT)
    if world is not None and world != len(hosts):
        raise ContractError(f"{seen.name_of(NODE_COUNT)}={world} but {DEEPSPEED_HOSTFILE} "
                            f"names {len(hosts)} hosts")
    gpus = seen.get(PROCS_PER_NODE) or hosts[min(rank, len(hosts) - 1)][1]

    def listed(n: int) -> Peers:
        return names, addresses

    return PlatformFacts("task-training", rank, len(hosts), listed, gpus, master, port,
                         f"task-training/{addresses[0]}",
                         (seen.name_of(NODE_INDEX), DEEPSPEED_HOSTFILE,
                          seen.name_of(PROCS_PER_NODE)))


def tf_config(container: Container) -> PlatformFacts:
    """A container given ``TF_CONFIG`` (task-training's TensorFlow mode, Kubeflow TFJob)."""
    try:
        config = json.loads(container.environ.get(TF_CONFIG, ""))
        cluster, task = config["cluster"], config["task"]
        own_type, own_index = str(task["type"]).lower(), int(task["index"])
    except (ValueError, KeyError, TypeError) as e:
        raise ContractError(f"{TF_CONFIG} is not a cluster and task description ({e})") from e
    endpoints: List[str] = []
    index = None
    for kind in TF_TYPES + tuple(sorted(k for k in cluster if k.lower() not in TF_TYPES)):
        listed = cluster.get(kind) or []
        if isinstance(listed, dict):
            raise ContractError(f"{TF_CONFIG} lists a sparse cluster (enableDynamicWorker): the "
                                "other workers are not named")
        if kind.lower() == own_type:
            if not 0 <= own_index < len(listed):
                raise ContractError(f"{TF_CONFIG}'s task {own_type} {own_index} is outside its "
                                    f"{len(listed)} {own_type} replicas")
            index = len(endpoints) + own_index
        endpoints += [str(e) for e in listed]
    if index is None:
        raise ContractError(f"{TF_CONFIG}'s task type {own_type!r} is not in its cluster")
    hosts = tuple(split_address(e)[0] for e in endpoints)
    names = tuple(h.split(".")[0] for h in hosts)

    def peers(n: int) -> Peers:
        return names, hosts

    return PlatformFacts("tf-config", index, len(hosts), peers, None, hosts[0], None,
                         f"tf-config/{hosts[0]}", (TF_CONFIG,))
