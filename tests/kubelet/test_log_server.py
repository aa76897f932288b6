"""The kubelet's log endpoint: over HTTPS as a kubelet serves it (whole log, tail, limit,
follow until the container run exits, a kubelet's errors), then end to end through the API
server's ``pods/log`` with the official client, the log streamed while the container runs."""

from __future__ import annotations

import http.client
import ssl
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

from tests.kubelet.cri_log import runtime_lines
from tests.kubelet.log_reading import tail_offset
from tests.kubelet.log_server import LogServer


class FakeProcess:
    """A container process whose exit the test decides."""

    def __init__(self) -> None:
        self.code: Optional[int] = None

    def poll(self) -> Optional[int]:
        return self.code


class FakeRun:
    """What the log server reads of a container run: name, log path, process, state."""

    def __init__(self, name: str, log_path: str, started: bool = True) -> None:
        self.spec = type("Spec", (), {"name": name, "log_path": log_path})()
        self.process: Optional[FakeProcess] = FakeProcess() if started else None
        self.state: Dict[str, Any] = {"running": {}} if started else \
            {"waiting": {"reason": "ContainerCreating"}}


class FakeWorker:
    """A pod on the kubelet: its manifest and prepared runs."""

    def __init__(self, name: str, runs: List[FakeRun]) -> None:
        self.pod = {"metadata": {"name": name},
                    "spec": {"containers": [{"name": r.spec.name} for r in runs]}}
        self.prepared = type("Prepared", (), {"all_runs": lambda _self: runs})()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Tuple[LogServer, Dict[Tuple[str, str], FakeWorker]]]:
    workers: Dict[Tuple[str, str], FakeWorker] = {}
    server = LogServer(lambda ns, name: workers.get((ns, name)), str(tmp_path)).start()
    try:
        yield server, workers
    finally:
        server.stop()


def get(server: LogServer, path: str) -> http.client.HTTPResponse:
    """GET from the log server as the API server does (HTTPS, certificate not verified)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    connection = http.client.HTTPSConnection("127.0.0.1", server.port, timeout=30,
                                             context=context)
    connection.request("GET", path)
    return connection.getresponse()


def test_serves_over_https_the_whole_log_its_tail_and_a_limit(served, tmp_path):
    server, workers = served
    assert server.scheme == "https"
    log = tmp_path / "main.log"
    log.write_bytes(runtime_lines(b"one\ntwo\nthree\n"))
    run = FakeRun("main", str(log))
    run.process.code = 0
    workers[("ns", "p")] = FakeWorker("p", [run])
    assert get(server, "/containerLogs/ns/p/main").read() == b"one\ntwo\nthree\n"
    assert get(server, "/containerLogs/ns/p/main?tailLines=2").read() == b"two\nthree\n"
    assert get(server, "/containerLogs/ns/p/main?limitBytes=5").read() == b"one\nt"
    assert get(server, "/containerLogs/ns/p/main?follow=true").read() == \
        b"one\ntwo\nthree\n"          # an exited container: the stream ends at once


@pytest.mark.parametrize("text,lines,rest", [
    (b"a\nb\nc\n", 1, b"c\n"), (b"a\nb\nc", 1, b"c"), (b"a\nb\n", 5, b"a\nb\n"),
    (b"a\nb\n", 0, b""),
])
def test_tail_lines(tmp_path, text, lines, rest):
    log = tmp_path / "x.log"
    log.write_bytes(text)
    assert text[tail_offset(str(log), lines):] == rest


def test_follow_streams_until_the_run_exits(served, tmp_path):
    server, workers = served
    log = tmp_path / "main.log"
    log.write_bytes(b"")
    run = FakeRun("main", str(log))
    workers[("ns", "p")] = FakeWorker("p", [run])
    response = get(server, "/containerLogs/ns/p/main?follow=true")
    with open(log, "ab") as out:
        out.write(runtime_lines(b"first\n"))
        out.flush()
        assert response.read1(100) == b"first\n"       # while the container still runs
        out.write(runtime_lines(b"second\n"))
    run.process.code = 3
    assert response.read() == b"second\n"


def test_a_kubelets_errors(served, tmp_path):
    server, workers = served
    workers[("ns", "p")] = FakeWorker("p", [FakeRun("main", str(tmp_path / "none"),
                                                    started=False)])
    cases = [("/containerLogs/ns/q/main", 404, 'pod "q" does not exist'),
             ("/containerLogs/ns/p/side", 404, 'container "side" not found in pod "p"'),
             ("/containerLogs/ns/p/main", 400,
              'container "main" in pod "p" is waiting to start: ContainerCreating'),
             ("/stats/summary", 404, "404 page not found")]
    for path, code, message in cases:
        response = get(server, path)
        assert (response.status, response.read().decode().strip()) == (code, message)


kubernetes = pytest.importorskip("kubernetes")


@pytest.mark.slow
def test_pod_log_through_the_api_server_streams_while_the_container_runs(tmp_path):
    from tests.apiserver import EmulatedCluster
    from tests.apiserver.support import wait_until
    from tests.kubelet import TestKubelet

    go = tmp_path / "go"
    script = (f"echo first; echo oops >&2; while [ ! -e {go} ]; do sleep 0.05; done; "
              "echo second")
    with EmulatedCluster(controllers=False) as cluster, \
            TestKubelet(cluster.kubeconfig, nodes=1) as kubelet:
        core = kubernetes.client.CoreV1Api(cluster.api_client())
        node = core.read_node("kubelet-0").status
        assert node.daemon_endpoints.kubelet_endpoint.port == kubelet.log_server.port
        assert {a.type: a.address for a in node.addresses}["Hostname"] == "localhost"
        core.create_namespaced_pod("default", {"metadata": {"name": "talker"}, "spec": {
            "nodeName": "kubelet-0", "restartPolicy": "Never", "containers": [{
                "name": "main", "image": "none", "command": ["sh", "-c", script]}]}})

        def opened() -> Any:
            try:
                return core.read_namespaced_pod_log("talker", "default", follow=True,
                                                    _preload_content=False)
            except kubernetes.client.ApiException as e:
                assert e.status == 400 and "is waiting to start" in e.body, e.body
                return None

        response = wait_until(opened, 60, "the container started")
        seen = b""
        for chunk in response.stream(1024):
            seen += chunk
            if seen.count(b"\n") == 2 and not go.exists():
                assert core.read_namespaced_pod("talker", "default").status.phase == "Running"
                go.touch()
        # stdout and stderr are two pipes, copied apart: their lines may come in either order
        assert seen in (b"first\noops\nsecond\n", b"oops\nfirst\nsecond\n")
        assert core.read_namespaced_pod_log("talker", "default", tail_lines=1) == "second\n"
        assert kubelet.logs("default", "talker") == seen.decode()


@pytest.mark.slow
def test_a_non_root_container_can_open_its_stdout_again():
    """As runc hands the container's stdio to its user, uid 1000 can open /dev/stdout (with
    ``>>``: here it is the log file itself, which ``>`` would truncate; a node's is a pipe)."""
    from tests.apiserver import EmulatedCluster
    from tests.apiserver.support import wait_until
    from tests.kubelet import TestKubelet

    with EmulatedCluster(controllers=False) as cluster, \
            TestKubelet(cluster.kubeconfig, nodes=1) as kubelet:
        core = kubernetes.client.CoreV1Api(cluster.api_client())
        core.create_namespaced_pod("default", {"metadata": {"name": "user"}, "spec": {
            "nodeName": "kubelet-0", "restartPolicy": "Never",
            "securityContext": {"runAsUser": 1000, "runAsGroup": 1000},
            "containers": [{"name": "main", "image": "none", "command": [
                "sh", "-c", "id -u; echo out >> /dev/stdout; echo err >> /dev/stderr"]}]}})

        def phase() -> Any:
            found = core.read_namespaced_pod("user", "default").status.phase
            return found if found in ("Succeeded", "Failed") else None

        assert wait_until(phase, 60, "the pod ended") == "Succeeded", \
            kubelet.logs("default", "user")
        shown = core.read_namespaced_pod_log("user", "default").splitlines()
        assert [line for line in shown if line != "err"] == ["1000", "out"]
        assert shown.count("err") == 1          # stderr is another pipe: any place
