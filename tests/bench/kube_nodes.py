"""sinfo and ``scontrol show partition`` on a cluster of 1,000 nodes (the emulated API server,
``tests.apiserver``), side by side with ``kubectl get nodes`` on the same server, and the API
calls one sinfo makes at 10 and at 1,000 nodes.

The nodes are Node objects as the test kubelet registers them (Ready, 8 CPUs, 32 GiB; a
quarter with 4 GPUs, a few cordoned), nobody runs their pods: sinfo reads nodes and pods,
it does not need them to run. The emulator is Python, a real API server is Go: the ratio
against kubectl on the same server and the call counts are what carry over."""

from __future__ import annotations

import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterable, List

from tests.bench.context import Context, command_argv
from tests.bench.core import Figure, process_times

NODES = 1000
CONFIG = """\
cluster_name = "kube"
[partitions.debug]
image = "python:3.12-slim"
[partitions.gpu]
image = "python:3.12-slim"
node_gpus = 4
"""


def _register(client: Any, first: int, count: int) -> None:
    """Nodes ``first`` .. ``first + count - 1`` (status patched after create, as a kubelet
    does: servers may drop it on create)."""
    from sbatch_k8s.backends.kubernetes.api.kinds import NODE
    from tests.kubelet.nodes import NodeShape, node_manifest

    now = time.time()

    def make(index: int) -> None:
        shape = NodeShape("8", "32Gi", 4 if index % 4 == 0 else 0)
        node = node_manifest(f"node{index}", index, shape, now)
        if index % 100 == 7:
            node["spec"]["unschedulable"] = True
        status = node.pop("status")
        client.create(node, None)
        client.request("PATCH", NODE.object_path(None, node["metadata"]["name"]) + "/status",
                       body={"status": status}, content_type="application/merge-patch+json")

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(make, range(first, first + count)))


def _calls(cluster: Any, kube: Any) -> int:
    before = len(cluster.requests)
    kube.run("sinfo")
    return len(cluster.requests) - before


def figures(ctx: Context) -> Iterable[Figure]:
    from tests.apiserver import EmulatedCluster
    from tests.kube.harness import KubeSlurm

    figures: List[Figure] = []
    with EmulatedCluster(allow_anonymous=True) as cluster:
        kube = KubeSlurm(ctx.root / "kube-nodes", cluster.kubeconfig, config=CONFIG,
                         commands=command_argv)
        try:
            client = kube.api()
            _register(client, 0, 10)
            kube.run("sinfo")            # starts the command server with the client loaded
            few = _calls(cluster, kube)
            _register(client, 10, NODES - 10)
            env, cwd = kube.env, str(kube.work)
            repeats = ctx.repeats(9)
            kubectl = shutil.which("kubectl")
            for name, argv in (("sinfo", command_argv("sinfo")),
                               ("sinfo -N -l", command_argv("sinfo") + ["-N", "-l"]),
                               ("scontrol show partition",
                                command_argv("scontrol") + ["show", "partition"])):
                figure = Figure(f"k8s: {name}, {NODES} nodes", "ms",
                                process_times(argv, repeats, env, cwd, warmup=1))
                if kubectl:
                    figure.comparison = "kubectl get nodes"
                    figure.comparison_samples = process_times(
                        [kubectl, "get", "nodes"], repeats, env, cwd, warmup=1)
                figure.goal = "≤ 1.0× kubectl get nodes"
                figure.goal_met = figure.ratio is not None and figure.ratio <= 1.0
                if name == "sinfo":
                    figure.scaling = (f"{_calls(cluster, kube)} API calls per sinfo at {NODES} "
                                      f"nodes, {few} at 10")
                figures.append(figure)
        finally:
            kube.cleanup()
    return figures
