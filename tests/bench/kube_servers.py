"""The API servers the Kubernetes figures are taken on: the emulated one (default) or a real
kube-apiserver named by ``--kubeconfig`` — and how each counts the API calls of a command.

On a real server the benchmark works in a namespace of its own (``sbk-<n>-<random>``, made
and deleted as the opt-in real-server test tier does: :class:`tests.kube.real_cluster.RealCluster`),
with the target CRDs installed as that tier installs them; the namespace and everything in it
is deleted at the end (not waited for). The test kubelet's nodes are named after the
namespace, so that a test run on the same server at the same time keeps its own.

Counting: the emulator logs every request; for a real server the counted commands talk to
it through :class:`tests.bench.counting_proxy.CountingProxy`, with a command server of their
own (a twin of the timed one's state, pointed at the proxy), so the timed commands never go
through it. When the proxy cannot stand in (a kubeconfig whose user authenticates by a
plugin), the figures say the calls were not counted.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterator, Optional

from tests.bench.context import Context, command_argv
from tests.kube.harness import KubeSlurm


@dataclass
class CallCounter:
    """Commands whose API calls are counted, and the running count of those calls."""

    kube: KubeSlurm
    count: Callable[[], int]


@dataclass
class BenchServer:
    """One API server with the benchmark's commands pointed at it."""

    kube: KubeSlurm
    label: str               # "emulated API server", "real API server v1.28.0"
    real: bool
    node_prefix: str
    #: Commands whose calls are counted (a context: a real server's proxy lives in it), or
    #: why they cannot be.
    counter: Callable[[], ContextManager[Optional[CallCounter]]]
    uncounted_reason: str = ""


@contextlib.contextmanager
def emulated(ctx: Context) -> Iterator[BenchServer]:
    """A fresh emulated API server (``tests.apiserver``); its request log counts."""
    from tests.apiserver import EmulatedCluster

    with EmulatedCluster(allow_anonymous=True) as cluster:
        kube = KubeSlurm(ctx.root / "kube", cluster.kubeconfig, commands=command_argv)

        @contextlib.contextmanager
        def counter() -> Iterator[Optional[CallCounter]]:
            yield CallCounter(kube, lambda: len(cluster.requests))

        try:
            yield BenchServer(kube, "emulated API server", False, "kubelet-", counter)
        finally:
            kube.cleanup()


@contextlib.contextmanager
def real(ctx: Context, kubeconfig: str) -> Iterator[BenchServer]:
    """A namespace of its own on the real API server of ``kubeconfig``."""
    from tests.kube.real_cluster import RealCluster, install_target_crds

    install_target_crds(kubeconfig)
    cluster = RealCluster(kubeconfig, str(ctx.root)).start()
    kube: Optional[KubeSlurm] = None
    try:
        version = _server_version(cluster)
        kube = KubeSlurm(ctx.root / "kube", cluster.kubeconfig, commands=command_argv)
        reason = _proxy_refusal(kubeconfig)

        @contextlib.contextmanager
        def counter() -> Iterator[Optional[CallCounter]]:
            if reason:
                yield None
                return
            with _counted_twin(ctx.root / "kube-counted", kubeconfig,
                               cluster.namespace) as twin:
                yield twin

        yield BenchServer(kube, f"real API server {version}", True, f"{cluster.namespace}-n",
                          counter, uncounted_reason=reason)
    finally:
        if kube is not None:
            kube.cleanup()
        cluster.stop()


def _server_version(cluster: Any) -> str:
    from kubernetes import client

    api_client = cluster.api_client()
    try:
        return str(client.VersionApi(api_client).get_code().git_version)
    finally:
        api_client.close()


def _proxy_refusal(kubeconfig: str) -> str:
    """Why the counting proxy cannot stand in for this kubeconfig's server ("" if it can)."""
    from tests.bench.counting_proxy import CountingProxy

    try:
        CountingProxy(kubeconfig).stop()
    except Exception as e:
        return f"not counted on a real server ({e})"
    return ""


@contextlib.contextmanager
def _counted_twin(root: Path, kubeconfig: str, namespace: str) -> Iterator[CallCounter]:
    """Commands with a command server of their own, talking to the server through a
    counting proxy; stopped (server and proxy) on leaving."""
    from tests.bench.counting_proxy import CountingProxy

    proxy = CountingProxy(kubeconfig).start()
    twin: Optional[KubeSlurm] = None
    try:
        root.mkdir(parents=True, exist_ok=True)
        path = proxy.kubeconfig(str(root / "counted.kubeconfig"), namespace)
        twin = KubeSlurm(root / "commands", path, commands=command_argv)
        yield CallCounter(twin, lambda: proxy.count)
    finally:
        if twin is not None:
            twin.cleanup()
        proxy.stop()
