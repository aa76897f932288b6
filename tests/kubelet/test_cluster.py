"""The test kubelet end to end, against the emulated API server over HTTP (or, with
``--with-kube-apiserver``, the real one of ``$KUBECONFIG``, in a namespace of its own): nodes
registered Ready, an Indexed Job's pods run to completion and see their volume, hostname and
peers, pods reach each other by name over TCP, deletion delivers SIGTERM and removes the pod,
activeDeadlineSeconds fails the pod, exit codes and termination messages are reported."""

from __future__ import annotations

import contextlib
import os
import sys
import textwrap
import time
from typing import Any, Callable, Dict, Iterator, List

import pytest

kubernetes = pytest.importorskip("kubernetes")
pytest.importorskip("tests.apiserver")

from tests.apiserver import EmulatedCluster  # noqa: E402
from tests.kubelet import TestKubelet  # noqa: E402

pytestmark = pytest.mark.slow
PEER_SCRIPT = textwrap.dedent("""\
    import socket, sys, threading, time
    from sbatch_k8s.runtime.contract import pod_bind_host
    me, peer = socket.gethostname(), sys.argv[1]
    server = socket.socket()
    server.bind((pod_bind_host(me), 7001))      # the same port in both pods
    server.listen()
    def answer():
        conn, _ = server.accept()
        conn.sendall(me.encode())
        conn.close()
    threading.Thread(target=answer).start()
    for attempt in range(400):
        try:
            with socket.create_connection((peer + ".grp", 7001), timeout=2) as conn:
                print(me, "bound", server.getsockname()[0], "heard", conn.recv(100).decode())
                break
        except OSError:
            time.sleep(0.25)
    else:
        sys.exit("no answer from " + peer)
    """)


def wait_until(probe: Callable[[], Any], timeout_s: float = 60.0, what: str = "") -> Any:
    """Poll ``probe`` until it returns something truthy (bounded)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what or probe}")


@contextlib.contextmanager
def real_server(config: pytest.Config, directory: str) -> Iterator[Any]:
    """With ``--with-kube-apiserver``: a namespace of its own on the server of
    ``$KUBECONFIG`` (see ``tests/kube/real_cluster.py``); otherwise nothing (None)."""
    if not config.getoption("--with-kube-apiserver"):
        yield None
        return
    if not os.environ.get("KUBECONFIG"):
        pytest.skip("--with-kube-apiserver needs $KUBECONFIG")
    from tests.kube.real_cluster import RealCluster

    real = RealCluster(os.environ["KUBECONFIG"], directory).start()
    try:
        yield real
    finally:
        real.stop()


@pytest.fixture(scope="module")
def bare(request: pytest.FixtureRequest,
         tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dict[str, Any]]:
    """An API server without control loops (or the real one: the pods are bound by hand,
    so its scheduler and controllers change nothing) and a 2-node test kubelet."""
    with contextlib.ExitStack() as stack:
        cluster = stack.enter_context(real_server(
            request.config, str(tmp_path_factory.mktemp("bare")))) or \
            stack.enter_context(EmulatedCluster(controllers=False))
        kubelet = stack.enter_context(TestKubelet(cluster.kubeconfig, nodes=2))
        yield {"cluster": cluster, "kubelet": kubelet, "ns": namespace_of(cluster),
               "core": kubernetes.client.CoreV1Api(cluster.api_client())}
        if hasattr(cluster, "drain"):
            cluster.drain()


def namespace_of(cluster: Any) -> str:
    """Where a test's objects go: the real server's test namespace, else ``default``."""
    return getattr(cluster, "namespace", "default")


def pod(name: str, script: str, node: int = 0, **spec: Any) -> Dict[str, Any]:
    """A pod bound to ``kubelet-<node>`` running ``sh -c script``."""
    return {"metadata": {"name": name}, "spec": dict({
        "nodeName": f"kubelet-{node}", "restartPolicy": "Never",
        "containers": [{"name": "main", "image": "none", "command": ["sh", "-c", script]}]},
        **spec)}


def phase_of(core: Any, name: str, ns: str) -> Any:
    """The pod's phase, or None once it is gone."""
    try:
        return core.read_namespaced_pod(name, ns).status.phase
    except kubernetes.client.ApiException as e:
        if e.status == 404:
            return None
        raise


def finished(core: Any, name: str, ns: str) -> Any:
    """The pod once it is Succeeded or Failed."""
    current = core.read_namespaced_pod(name, ns)
    return current if current.status.phase in ("Succeeded", "Failed") else None


def test_nodes_are_registered_ready_with_capacity(bare):
    nodes = {n.metadata.name: n for n in bare["core"].list_node().items}
    assert sorted(nodes) == ["kubelet-0", "kubelet-1"]
    node = nodes["kubelet-1"]
    assert node.metadata.labels["kubernetes.io/hostname"] == "kubelet-1"
    assert {c.type: c.status for c in node.status.conditions}["Ready"] == "True"
    assert node.status.allocatable["cpu"] == "4" and node.status.capacity["memory"] == "16Gi"


def test_pods_reach_each_other_by_name_over_tcp_on_one_port(bare):
    ns = bare["ns"]
    core = bare["core"]
    core.create_namespaced_config_map(ns, {"metadata": {"name": "peer-script"},
                                           "data": {"peer.py": PEER_SCRIPT}})
    for me, peer, node in (("a", "b", 0), ("b", "a", 1)):
        spec = pod(f"tcp-{me}", "", node, hostname=me, subdomain="grp")
        spec["spec"]["containers"][0].update(
            command=[sys.executable, "/etc/sbatch-k8s/job/peer.py", peer],
            volumeMounts=[{"name": "script", "mountPath": "/etc/sbatch-k8s/job"}])
        spec["spec"]["volumes"] = [{"name": "script", "configMap": {"name": "peer-script"}}]
        core.create_namespaced_pod(ns, spec)
    for me, peer in (("a", "b"), ("b", "a")):
        done = wait_until(lambda: finished(core, f"tcp-{me}", ns), 60, f"pod tcp-{me}")
        output = bare["kubelet"].logs(ns, f"tcp-{me}")
        assert done.status.phase == "Succeeded", output
        words = output.split()
        assert words[0] == me and words[2].startswith("127.10.") and words[-1] == peer
        assert done.status.pod_ip.startswith("10.10.")        # reported, not loopback


def test_exit_code_and_termination_message_are_reported(bare):
    ns = bare["ns"]
    core = bare["core"]
    core.create_namespaced_pod(ns, pod("exit3", "echo 'bad input' > /dev/termination-log; "
                                                "exit 3"))
    done = wait_until(lambda: finished(core, "exit3", ns), what="pod exit3")
    state = done.status.container_statuses[0].state.terminated
    assert (done.status.phase, state.exit_code, state.reason, state.message) == \
        ("Failed", 3, "Error", "bad input\n")
    assert state.started_at is not None and state.finished_at is not None


def test_deletion_delivers_sigterm_then_the_pod_is_gone(bare):
    ns = bare["ns"]
    core = bare["core"]
    core.create_namespaced_pod(ns, pod("graceful", "trap 'echo TERM; exit 0' TERM; "
                                                   "echo up; sleep 300 & wait",
                                       terminationGracePeriodSeconds=30))
    core.create_namespaced_pod(ns, pod("stubborn", "trap '' TERM; echo up; sleep 300",
                                       node=1, terminationGracePeriodSeconds=1))
    kubelet = bare["kubelet"]
    for name in ("graceful", "stubborn"):
        wait_until(lambda: "up" in kubelet.logs(ns, name), what=f"{name} running")
    started = time.monotonic()
    for name in ("graceful", "stubborn"):
        core.delete_namespaced_pod(name, ns)
    wait_until(lambda: phase_of(core, "graceful", ns) is None, 60, "graceful gone")
    assert time.monotonic() - started < 29            # it exited on SIGTERM, no 30 s wait
    assert kubelet.logs(ns, "graceful").split() == ["up", "TERM"]
    wait_until(lambda: phase_of(core, "stubborn", ns) is None, 60, "stubborn gone")
    assert time.monotonic() - started >= 1            # the grace period, then SIGKILL


def test_active_deadline_fails_the_pod(bare):
    ns = bare["ns"]
    core = bare["core"]
    core.create_namespaced_pod(ns, pod("late", "sleep 60", activeDeadlineSeconds=1,
                                       terminationGracePeriodSeconds=1))
    done = wait_until(lambda: finished(core, "late", ns), what="pod late")
    assert (done.status.phase, done.status.reason) == ("Failed", "DeadlineExceeded")


@pytest.fixture
def cluster(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Any]:
    """The emulated control plane with its Job controller and scheduler (or the real one)."""
    with real_server(request.config, str(tmp_path)) as real:
        if real is not None:
            yield real
            return
    try:
        running = EmulatedCluster().start()
    except ImportError as e:
        pytest.skip(f"the emulated control loops are not available yet: {e}")
    if not running.controllers:
        running.stop()
        pytest.skip("the emulated cluster runs no Job controller yet")
    try:
        yield running
    finally:
        running.stop()


INDEXED_JOB = {
    "metadata": {"name": "hello"},
    "spec": {"completionMode": "Indexed", "completions": 2, "parallelism": 2,
             "backoffLimit": 0, "template": {"spec": {
                 "restartPolicy": "Never", "subdomain": "hello",
                 "containers": [{"name": "main", "image": "none", "command": ["sh", "-c", (
                     # The peer's name resolves once the DNS has it (a short delay, as
                     # on a real cluster): ask until it does.
                     "hostname; cat /etc/sbatch-k8s/job/x; echo; "
                     "peer=hello-$((1 - JOB_COMPLETION_INDEX)).hello; "
                     "for i in $(seq 1200); do getent hosts $peer && exit 0; sleep 0.1; done; "
                     "exit 1")],
                     "volumeMounts": [{"name": "job", "mountPath": "/etc/sbatch-k8s/job"}]}],
                 "volumes": [{"name": "job", "configMap": {"name": "hello"}}]}}}}


def test_an_indexed_job_runs_to_completion(cluster):
    ns = namespace_of(cluster)
    client = cluster.api_client()
    core, batch = kubernetes.client.CoreV1Api(client), kubernetes.client.BatchV1Api(client)
    core.create_namespaced_service(ns, {"metadata": {"name": "hello"}, "spec": {
        "clusterIP": "None", "publishNotReadyAddresses": True,
        "selector": {"batch.kubernetes.io/job-name": "hello"}}})
    core.create_namespaced_config_map(ns, {"metadata": {"name": "hello"},
                                           "data": {"x": "from the ConfigMap"}})
    with TestKubelet(cluster.kubeconfig, nodes=2) as kubelet:
        batch.create_namespaced_job(ns, INDEXED_JOB)

        def complete() -> Any:
            job = batch.read_namespaced_job("hello", ns)
            kinds = {c.type: c.status for c in job.status.conditions or []}
            assert kinds.get("Failed") != "True", job.status
            return job if kinds.get("Complete") == "True" else None

        job = wait_until(complete, 60, "Job hello Complete")
        assert job.status.succeeded == 2
        pods: List[Any] = core.list_namespaced_pod(
            ns, label_selector="batch.kubernetes.io/job-name=hello").items
        assert sorted(p.status.phase for p in pods) == ["Succeeded", "Succeeded"]
        assert {p.spec.node_name for p in pods} <= {"kubelet-0", "kubelet-1"}
        for p in pods:
            index = int(p.metadata.annotations["batch.kubernetes.io/job-completion-index"])
            lines = kubelet.logs(ns, p.metadata.name).splitlines()
            assert lines[0] == f"hello-{index}"
            assert lines[1] == "from the ConfigMap"
            peer = lines[2].split()
            assert peer[0].startswith("127.10.") and f"hello-{1 - index}.hello" in peer


def test_the_command_line_registers_nodes_runs_pods_and_unregisters_on_sigterm(bare):
    ns = bare["ns"]
    import os
    import signal
    import subprocess

    core = bare["core"]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.kubelet", "--kubeconfig", bare["cluster"].kubeconfig,
         "--nodes", "1", "--name-prefix", "cli-", "--gpus", "8"],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        node = wait_until(lambda: next((n for n in core.list_node().items
                                        if n.metadata.name == "cli-0"), None), 60, "cli-0")
        assert node.status.capacity["nvidia.com/gpu"] == "8"
        core.create_namespaced_pod(ns, pod("on-cli", "echo from the cli kubelet",
                                           nodeName="cli-0"))
        done = wait_until(lambda: finished(core, "on-cli", ns), what="pod on-cli")
        assert done.status.phase == "Succeeded"
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
    assert process.returncode == 0, output
    assert "cli-0" not in [n.metadata.name for n in core.list_node().items]


def test_stopping_the_kubelet_kills_its_pods_and_removes_its_files(bare):
    ns = bare["ns"]
    import os

    core = bare["core"]
    kubelet = TestKubelet(bare["cluster"].kubeconfig, nodes=1, name_prefix="short-").start()
    try:
        # Kubernetes expands $$ to a literal $: the shell sees "echo $$".
        core.create_namespaced_pod(ns, pod("left-running", "echo $$$$; exec sleep 300",
                                           nodeName="short-0"))
        pid = int(wait_until(lambda: kubelet.logs(ns, "left-running").strip(), 60,
                             "left-running started"))
        files = [kubelet.root_dir, kubelet.memory_dir]
    finally:
        kubelet.stop()
    assert not os.path.exists(f"/proc/{pid}")
    assert not any(os.path.exists(path) for path in files)
    assert "short-0" not in [n.metadata.name for n in core.list_node().items]
