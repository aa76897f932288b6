"""Platform mode: start-up from the container's command to the script's first line, for 2
and 8 containers per contract (the containers of :mod:`tests.platform.harness`, each in its
own namespaces, with the contracts' oracles), and AIStation's rank rendezvous alone at 2 and
32 nodes (the master and the workers as threads, on their own loopback addresses)."""

from __future__ import annotations

import os
import shutil
import threading
import time
from typing import Callable, Dict, Iterable, List, Optional

from tests.bench.context import Context
from tests.bench.core import Figure

FIRST_LINE = """#!/bin/bash
#SBATCH --nodes={nodes}
python3 -c 'import time; print(time.time())' > {stamp}
"""


def _oracles() -> Dict[str, Callable[[int], object]]:
    from tests.platform import oracles

    return {
        "pytorchjob": lambda n: oracles.pytorchjob("b-pt", n, 1),
        "trainjob": lambda n: oracles.trainjob("b-tj", n, 1),
        "indexed-job": lambda n: oracles.indexed_job("b-ix", n, "b-ix"),
        "jobset": lambda n: oracles.jobset("b-js", "node", n),
        "volcano": lambda n: oracles.volcano("b-vc", [("master", 1), ("worker", n - 1)]),
        "task-training (PyTorch)": lambda n: oracles.task_training_pytorch("b-tt", n, 1),
        "task-training (DeepSpeed)": lambda n: oracles.task_training_deepspeed("b-td", n, 1),
        "tf-config": lambda n: oracles.tf_config("b-tf", n),
        "aistation": lambda n: oracles.aistation("b-ai", n, 1, "bench"),
        "modelarts (2 cards, one run per card)": lambda n: oracles.modelarts("b-ma", n, 2),
        "task-training (Horovod, 2 slots, one run per slot)":
            lambda n: oracles.task_training_horovod("b-hv", n, 2),
        "mpijob (launcher + workers, rsh stand-in)": lambda n: oracles.aihub_mpijob("b-mj", n, 1),
    }


def _start_up_ms(cluster, made, nodes: int) -> Optional[float]:
    stamp = f"first-{time.monotonic_ns()}.txt"
    cluster.write("first.sh", FIRST_LINE.format(nodes=nodes, stamp=stamp))
    begun = time.time()
    if any(node.command for node in made.nodes):  # an MpiJob: only the launcher runs ours
        from tests.platform.test_mpijob import run_mpijob

        outcome = run_mpijob(cluster, made.nodes, ["first.sh"])
        ok = outcome.codes[0] == 0
    else:
        outcome = cluster.finish(cluster.start(made.nodes, ["first.sh"]), 120.0)
        ok = outcome.codes == [0] * len(made.nodes)
    text = cluster.read(stamp).strip()
    if not ok or not text:
        return None
    return (float(text) - begun) * 1000


def _rendezvous_ms(nodes: int, pool) -> Optional[float]:
    """One AIStation rendezvous of ``nodes`` containers (threads), in ms."""
    from sbatch_k8s.runtime.platform.aistation import aistation, is_master
    from sbatch_k8s.runtime.platform.facts import Container
    from sbatch_k8s.runtime.platform.rendezvous import agree_on_ranks

    names = [f"r-{i}" for i in range(nodes)]
    addresses = {name: pool.allocate() for name in names}
    addresses["r-master"] = addresses["r-0"]
    env = {"MASTER_ADDR": "r-master", "MASTER_PORT": "29500", "NNODES": str(nodes),
           "RDZV_ID": f"bench-{time.monotonic_ns()}"}
    results: List[object] = []

    def member(name: str) -> None:
        container = Container(env, name, name, addresses.__getitem__, lambda p: None)
        try:
            facts = agree_on_ranks(aistation(container), container, 7100, 60.0,
                                   is_master(container, "r-master"))
            results.append(facts.index)
        except Exception as e:  # reported as a failed sample
            results.append(e)

    threads = [threading.Thread(target=member, args=(name,)) for name in names]
    begun = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(90)
    elapsed = (time.perf_counter() - begun) * 1000
    for name in names:
        pool.release(addresses[name])
    return elapsed if sorted(map(str, results)) == sorted(map(str, range(nodes))) else None


def figures(ctx: Context) -> Iterable[Figure]:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        yield Figure("platform-mode start-up", "ms", skipped="needs root and unshare")
        return
    from tests.kubelet.addresses import AddressPool
    from tests.platform.harness import PlatformCluster

    runs = ctx.repeats(3)
    cluster = PlatformCluster()
    try:
        for contract, make in _oracles().items():
            per_size = {}
            for nodes in (2, 8):
                samples = [s for s in (_start_up_ms(cluster, make(nodes), nodes)
                                       for _ in range(runs)) if s is not None]
                figure = Figure(f"platform-mode start-up, {contract}, {nodes} containers",
                                "ms", samples)
                if not samples:
                    figure.skipped = "the platform run failed"
                per_size[nodes] = figure
            small, big = per_size[2].median, per_size[8].median
            if small and big:
                per_size[8].scaling = f"×{big / small:.2f} from 2 to 8 containers"
            yield from per_size.values()
    finally:
        cluster.close()
    pool = AddressPool()
    try:
        rendezvous = {}
        for nodes in (2, 32):
            samples = [s for s in (_rendezvous_ms(nodes, pool)
                                   for _ in range(ctx.repeats(10))) if s is not None]
            rendezvous[nodes] = Figure(f"AIStation rank rendezvous, {nodes} nodes", "ms",
                                       samples)
            if not samples:
                rendezvous[nodes].skipped = "the rendezvous failed"
        if rendezvous[2].median and rendezvous[32].median:
            rendezvous[32].scaling = (f"×{rendezvous[32].median / rendezvous[2].median:.1f} "
                                      "from 2 to 32 nodes")
        yield from rendezvous.values()
    finally:
        pool.close()
