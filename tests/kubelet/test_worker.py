"""One pod's life on the test kubelet (tests.kubelet.worker), against an in-memory API:
statuses in a kubelet's order, exit codes and termination messages, init containers,
restarts, deletion (SIGTERM, grace, delete with grace 0) and activeDeadlineSeconds."""

from __future__ import annotations

import copy
import os
import time

import pytest

from tests.kubelet.addresses import AddressPool, HostsRegistry
from tests.kubelet.cri_log import read_log
from tests.kubelet.fakes import FakeApi
from tests.kubelet.lifecycle import PodServices
from tests.kubelet.worker import PodWorker


@pytest.fixture
def services(tmp_path):
    pool = AddressPool()
    hosts = HostsRegistry(pool)
    done = []
    yield PodServices(api=FakeApi(config_maps={"cfg": {"data": {"x": "42"}}}), hosts=hosts,
                      root_dir=str(tmp_path / "root"), memory_dir=str(tmp_path / "shm"),
                      volume_dir=None, server=("127.0.0.1", 6443),
                      host_ip=lambda node: "10.11.0.1", allocatable={"cpu": "4"},
                      on_worker_done=done.append)
    pool.close()


def make_pod(script, uid="u1", restart="Never", **spec):
    return {"metadata": {"name": "p", "namespace": "ns", "uid": uid},
            "spec": dict({"nodeName": "kubelet-0", "restartPolicy": restart,
                          "terminationGracePeriodSeconds": 5,
                          "containers": [{"name": "main", "command": ["sh", "-c", script]}]},
                         **spec)}


def run(services, pod):
    address = services.hosts.add_pod("ns", "", pod["metadata"]["uid"], "p")
    worker = PodWorker(services, pod, address)
    worker.start()
    return worker


def terminal(api):
    return next((s for s in api.statuses if s["phase"] in ("Succeeded", "Failed")), None)


def stop(worker):
    worker.vanish()
    assert worker.join(15)


def test_pending_running_succeeded_with_everything_a_kubelet_reports(services):
    worker = run(services, make_pod("echo out; echo err >&2; echo bye > /dev/termination-log",
                                    volumes=[{"name": "c", "configMap": {"name": "cfg"}}]))
    api = services.api
    final = api.wait_for(terminal)
    phases = [s["phase"] for s in api.statuses]
    assert phases[0] == "Pending" and phases[-1] == "Succeeded"
    assert final["podIP"].startswith("10.10.") and final["hostIP"] == "10.11.0.1"
    assert final["startTime"].endswith("Z")
    state = final["containerStatuses"][0]["state"]["terminated"]
    assert (state["exitCode"], state["reason"], state["message"]) == (0, "Completed", "bye\n")
    assert {c["type"]: c["status"] for c in final["conditions"]} == {
        "PodReadyToStartContainers": "True", "Initialized": "True",
        "ContainersReady": "False", "Ready": "False", "PodScheduled": "True"}
    log = os.path.join(services.root_dir, "logs", "ns_p_u1", "main.log")
    assert sorted(read_log(log).splitlines()) == [b"err", b"out"]     # two pipes, any order
    assert open(log, "rb").read().split(b" ")[1:3] in ([b"stdout", b"F"], [b"stderr", b"F"])
    stop(worker)
    assert not os.path.exists(services.pod_dir("u1"))


def test_a_failing_container_fails_the_pod_with_its_exit_code(services):
    worker = run(services, make_pod("echo oops; exit 3", containers=[{
        "name": "main", "command": ["sh", "-c", "echo oops; exit 3"],
        "terminationMessagePolicy": "FallbackToLogsOnError"}]))
    final = services.api.wait_for(terminal)
    state = final["containerStatuses"][0]["state"]["terminated"]
    assert (final["phase"], state["exitCode"], state["reason"], state["message"]) == \
        ("Failed", 3, "Error", "oops\n")
    stop(worker)


def test_init_containers_run_first_and_restarts_are_counted(services, tmp_path):
    marker = tmp_path / "count"
    pod = make_pod(f"n=$(cat {marker} 2>/dev/null || echo 0); echo $((n+1)) > {marker}; "
                   "[ $n -ge 1 ]", restart="OnFailure",
                   initContainers=[{"name": "init", "command": ["sh", "-c", f"echo 0 > {marker}"]}])
    worker = run(services, pod)
    final = services.api.wait_for(terminal)
    assert final["phase"] == "Succeeded"
    assert final["initContainerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"
    main = final["containerStatuses"][0]
    assert main["restartCount"] == 1
    assert main["lastState"]["terminated"]["exitCode"] == 1
    stop(worker)


def test_deletion_sends_sigterm_waits_and_deletes_with_grace_0(services, tmp_path):
    pod = make_pod("trap 'echo got TERM > /dev/termination-log; exit 143' TERM; "
                   "echo ready; sleep 60 & wait")
    worker = run(services, pod)
    api = services.api
    api.wait_for(lambda a: any(s["phase"] == "Running" for s in a.statuses))
    log = services.log_path("ns", "p", "u1", "main")
    deadline = time.monotonic() + 10
    while b"ready" not in read_log(log) and time.monotonic() < deadline:   # trap is set
        time.sleep(0.05)
    deleting = copy.deepcopy(pod)
    deleting["metadata"].update(deletionTimestamp="2026-01-01T00:00:00Z",
                                deletionGracePeriodSeconds=10)
    worker.update(deleting)
    api.wait_for(lambda a: a.deleted)
    final = terminal(api)
    state = final["containerStatuses"][0]["state"]["terminated"]
    assert (final["phase"], state["exitCode"], state["message"]) == \
        ("Failed", 143, "got TERM\n")
    assert api.deleted == [("ns", "p", "u1")]
    assert any(e["reason"] == "Killing" for e in api.events)
    stop(worker)


def test_active_deadline_fails_the_pod_with_deadline_exceeded(services):
    worker = run(services, make_pod("sleep 60", activeDeadlineSeconds=1,
                                    terminationGracePeriodSeconds=1))
    final = services.api.wait_for(terminal)
    assert (final["phase"], final["reason"]) == ("Failed", "DeadlineExceeded")
    state = final["containerStatuses"][0]["state"]["terminated"]
    assert (state["reason"], state["exitCode"]) == ("DeadlineExceeded", 143)
    stop(worker)


def test_a_missing_config_map_keeps_the_pod_pending_until_it_appears(services):
    pod = make_pod("echo $X", containers=[{"name": "main", "command": ["sh", "-c", "echo $X"],
                                           "env": [{"name": "X", "valueFrom": {
                                               "configMapKeyRef": {"name": "late",
                                                                   "key": "x"}}}]}])
    worker = run(services, pod)
    api = services.api
    waiting = api.wait_for(lambda a: next((s for s in a.statuses if "waiting" in s[
        "containerStatuses"][0]["state"] and s["containerStatuses"][0]["state"]["waiting"][
        "reason"] == "CreateContainerConfigError"), None))
    assert waiting["phase"] == "Pending"
    api.config_maps["late"] = {"data": {"x": "now"}}
    assert api.wait_for(terminal)["phase"] == "Succeeded"
    stop(worker)


def test_an_unsupported_volume_fails_the_pod_at_once(services):
    worker = run(services, make_pod("true", volumes=[{"name": "home", "nfs": {
        "server": "nfs.example", "path": "/export/home"}}]))
    final = services.api.wait_for(terminal)
    assert (final["phase"], final["reason"]) == ("Failed", "FailedMount")
    assert "--volume-dir" in final["message"]
    stop(worker)


def test_a_start_error_is_reported_as_such(services):
    worker = run(services, make_pod("", containers=[{"name": "main",
                                                     "command": ["no-such-binary-xyz"]}]))
    final = services.api.wait_for(terminal)
    state = final["containerStatuses"][0]["state"]["terminated"]
    assert (final["phase"], state["reason"], state["exitCode"]) == ("Failed", "StartError", 128)
    assert "executable file not found" in state["message"]
    stop(worker)


RESTRICTED_CONTAINER = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


def test_the_pods_user_groups_and_privileges_are_the_processs(services):
    script = ("id -u; id -g; id -G; cat /etc/cfg/x; echo; stat -c '%a %g' /etc/cfg/x; "
              "grep -E '^(NoNewPrivs|CapEff)' /proc/self/status")
    container = {"name": "main", "command": ["sh", "-c", script],
                 "securityContext": RESTRICTED_CONTAINER,
                 "volumeMounts": [{"name": "c", "mountPath": "/etc/cfg"}]}
    worker = run(services, make_pod("", containers=[container], securityContext={
        "runAsNonRoot": True, "runAsUser": 4242, "runAsGroup": 4343, "fsGroup": 4444,
        "supplementalGroups": [4545]},
        volumes=[{"name": "c", "configMap": {"name": "cfg", "defaultMode": 0o400}}]))
    final = services.api.wait_for(terminal)
    assert final["phase"] == "Succeeded"
    log = os.path.join(services.root_dir, "logs", "ns_p_u1", "main.log")
    assert read_log(log).decode().split("\n") == [
        "4242", "4343", "4343 4444 4545", "42", "440 4444",
        "CapEff:\t0000000000000000", "NoNewPrivs:\t1", ""]
    stop(worker)


def test_run_as_non_root_without_a_user_is_refused_as_for_a_root_image(services):
    worker = run(services, make_pod("true", securityContext={"runAsNonRoot": True}))
    final = services.api.wait_for(terminal)
    assert (final["phase"], final["reason"]) == ("Failed", "CreateContainerConfigError")
    assert "runAsNonRoot and image will run as root" in final["message"]
    stop(worker)
