"""``pods/log`` as the real API server serves it: the request checked (a bound pod, a
container of it), then proxied over HTTPS to the kubelet at the node's preferred address and
advertised port, the log options passed on, the answer streamed back and a kubelet's error
returned as a Status. The kubelet side is the test kubelet's log endpoint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Iterator, Optional, Tuple

import pytest

kubernetes = pytest.importorskip("kubernetes")

from tests.apiserver import EmulatedCluster  # noqa: E402
from tests.kubelet.cri_log import runtime_lines  # noqa: E402
from tests.kubelet.log_server import LogServer  # noqa: E402

NS = "default"


class Run:
    """A container run as the log endpoint reads it."""

    def __init__(self, name: str, log_path: str) -> None:
        self.spec = type("Spec", (), {"name": name, "log_path": log_path})()
        self.code: Optional[int] = None
        self.process = self
        self.state: Dict[str, Any] = {"running": {}}

    def poll(self) -> Optional[int]:
        return self.code


class Worker:
    def __init__(self, pod: Dict[str, Any], runs: Dict[str, Run]) -> None:
        self.pod = pod
        self.prepared = type("Prepared", (), {"all_runs": lambda _self: list(runs.values())})()


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[Tuple[Any, Dict[Tuple[str, str], Worker], LogServer]]:
    workers: Dict[Tuple[str, str], Worker] = {}
    server = LogServer(lambda ns, name: workers.get((ns, name)), str(tmp_path)).start()
    with EmulatedCluster(controllers=False) as cluster:
        core = kubernetes.client.CoreV1Api(cluster.api_client())
        core.create_node({"metadata": {"name": "n1"}, "status": {
            "addresses": [{"type": "InternalIP", "address": "10.99.0.1"},
                          {"type": "Hostname", "address": "localhost"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": server.port}}}})
        try:
            yield core, workers, server
        finally:
            server.stop()


def pod(name: str, containers: Tuple[str, ...] = ("main",), node: str = "n1"
        ) -> Dict[str, Any]:
    spec: Dict[str, Any] = {"containers": [{"name": c, "image": "x"} for c in containers]}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "namespace": NS}, "spec": spec}


def running(core: Any, workers: Dict[Tuple[str, str], Worker], tmp_path: Path, name: str,
            text: bytes, containers: Tuple[str, ...] = ("main",)) -> Dict[str, Run]:
    core.create_namespaced_pod(NS, pod(name, containers))
    runs = {}
    for container in containers:
        log = tmp_path / f"{name}-{container}.log"
        log.write_bytes(runtime_lines(text + container.encode() + b"\n"))
        runs[container] = Run(container, str(log))
    workers[(NS, name)] = Worker(pod(name, containers), runs)
    return runs


def test_the_log_comes_from_the_kubelet_with_its_options(setup, tmp_path):
    core, workers, _ = setup
    runs = running(core, workers, tmp_path, "p", b"a\nb\n")
    runs["main"].code = 0
    assert core.read_namespaced_pod_log("p", NS) == "a\nb\nmain\n"
    assert core.read_namespaced_pod_log("p", NS, container="main", tail_lines=2) == "b\nmain\n"
    assert core.read_namespaced_pod_log("p", NS, limit_bytes=3) == "a\nb"


def test_follow_streams_as_the_container_writes(setup, tmp_path):
    core, workers, _ = setup
    runs = running(core, workers, tmp_path, "f", b"")
    response = core.read_namespaced_pod_log("f", NS, follow=True, _preload_content=False)
    chunks = response.stream(1024)
    assert next(chunks) == b"main\n"
    with open(runs["main"].spec.log_path, "ab") as out:
        out.write(runtime_lines(b"later\n"))
    assert next(chunks) == b"later\n"               # the container has not exited yet
    runs["main"].code = 0
    assert list(chunks) == []


def test_requests_the_server_refuses(setup, tmp_path):
    core, workers, _ = setup
    core.create_namespaced_pod(NS, pod("unbound", node=""))
    running(core, workers, tmp_path, "two", b"", containers=("a", "b"))
    core.create_namespaced_pod(NS, pod("elsewhere"))       # bound, but the kubelet has none
    cases = [
        ("unbound", {}, 400, "pod unbound does not have a host assigned"),
        ("two", {}, 400, "a container name must be specified for pod two, choose one of: "
                         "[a b]"),
        ("two", {"container": "c"}, 400, "container c is not valid for pod two"),
        ("missing", {}, 404, 'pods "missing" not found'),
        ("elsewhere", {}, 404, 'pod "elsewhere" does not exist'),
    ]
    for name, options, code, message in cases:
        with pytest.raises(kubernetes.client.ApiException) as raised:
            core.read_namespaced_pod_log(name, NS, **options)
        error = raised.value
        assert error.status == code, error.body
        assert json.loads(error.body)["message"] == message
