"""A container as a local process in its own mount and UTS namespace (tests.kubelet.runner):
it sees its hostname, its bind-mounted files and hosts entries, runs as the pod's user, and
stops as a kubelet stops it (SIGTERM to the group, grace period, SIGKILL)."""

from __future__ import annotations

import os
import socket
import time

import pytest

from tests.kubelet.runner import ContainerProcess, ContainerSpec, Mount


@pytest.fixture
def spec(tmp_path):
    volume = tmp_path / "volume"
    volume.mkdir()
    (volume / "x").write_text("from the volume\n")
    hosts = tmp_path / "hosts"
    hosts.write_text("127.10.250.9\tpeer-1.grp peer-1\n")
    message = tmp_path / "message"
    message.write_text("")
    os.chmod(message, 0o666)
    return ContainerSpec(
        name="main", argv=["true"], env={"PATH": os.environ["PATH"]}, hostname="pod-a",
        working_dir="/etc/sbatch-k8s/test-kubelet",
        mounts=[Mount(str(volume), "/etc/sbatch-k8s/test-kubelet", True),
                Mount(str(hosts), "/etc/hosts", False),
                Mount(str(message), "/dev/termination-log", False)],
        uid=None, gid=None, groups=[], log_path=str(tmp_path / "log"),
        spec_path=str(tmp_path / "spec.json"))


def log_of(spec):
    with open(spec.log_path) as f:
        return f.read()


def test_the_container_sees_its_hostname_volumes_hosts_and_user(spec, tmp_path):
    script = ("hostname; cat x; getent hosts peer-1.grp; id -u; id -G; pwd; "
              "echo done > /dev/termination-log; touch x 2>/dev/null || echo read-only; exit 3")
    process = ContainerProcess(spec._replace(argv=["sh", "-c", script], uid=1234, gid=2345,
                                             groups=[3456]))
    assert process.start_error is None
    assert process.wait(60) == 3
    lines = log_of(spec).splitlines()
    assert lines[0] == "pod-a"
    assert lines[1] == "from the volume"
    assert lines[2].split() == ["127.10.250.9", "peer-1.grp", "peer-1"]
    assert lines[3:7] == ["1234", "2345 3456", "/etc/sbatch-k8s/test-kubelet", "read-only"]
    assert (tmp_path / "message").read_text() == "done\n"
    assert socket.gethostname() != "pod-a"          # the machine's own name is untouched
    with open("/etc/hosts") as f:
        assert "peer-1" not in f.read()             # and so is its /etc/hosts


def _status(log: str) -> dict:
    return dict(line.split(":\t", 1) for line in log.splitlines() if ":\t" in line)


@pytest.mark.parametrize("uid", [None, 4242])
def test_dropped_capabilities_and_no_new_privileges_hold_after_the_exec(spec, uid):
    process = ContainerProcess(spec._replace(argv=["cat", "/proc/self/status"], uid=uid,
                                             gid=uid, no_new_privileges=True,
                                             drop_capabilities=("ALL",)))
    assert process.start_error is None and process.wait(60) == 0
    status = _status(log_of(spec))
    assert status["NoNewPrivs"].strip() == "1"
    assert int(status["CapBnd"], 16) == 0 and int(status["CapEff"], 16) == 0   # even root


def test_some_capabilities_dropped_the_rest_kept_for_root(spec):
    process = ContainerProcess(spec._replace(argv=["cat", "/proc/self/status"],
                                             drop_capabilities=("NET_RAW", "CAP_SYS_ADMIN")))
    assert process.start_error is None and process.wait(60) == 0
    status = _status(log_of(spec))
    bounding = int(status["CapBnd"], 16)
    assert not bounding & (1 << 13) and not bounding & (1 << 21) and bounding & 1
    assert status["NoNewPrivs"].strip() == "0"
    bad = ContainerProcess(spec._replace(drop_capabilities=("FLY",)))
    assert bad.start_error == "unknown capability 'FLY'" and bad.wait(60) == 128


@pytest.mark.parametrize("change, error", [
    ({"argv": ["no-such-command-xyz"]},
     'exec: "no-such-command-xyz": executable file not found in $PATH'),
    ({"working_dir": "/no/such/dir"}, "workingDir /no/such/dir does not exist"),
])
def test_start_errors_are_told_apart_from_exits(spec, change, error):
    process = ContainerProcess(spec._replace(**change))
    assert process.start_error is not None and process.start_error.startswith(error)
    assert process.wait(60) == 128


def test_a_working_dir_inside_a_volume_is_created(spec, tmp_path):
    process = ContainerProcess(spec._replace(argv=["pwd"], mounts=[
        Mount(str(tmp_path / "volume"), "/etc/sbatch-k8s/test-kubelet", False)],
        working_dir="/etc/sbatch-k8s/test-kubelet/sub/dir"))
    assert process.wait(60) == 0
    assert (tmp_path / "volume" / "sub" / "dir").is_dir()


def test_stop_delivers_sigterm_to_the_group_and_waits_for_a_clean_exit(spec):
    script = "trap 'echo TERM received; exit 7' TERM; echo ready; sleep 300 & wait"
    process = ContainerProcess(spec._replace(argv=["sh", "-c", script]))
    deadline = time.monotonic() + 60
    while "ready" not in log_of(spec) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.stop(grace_s=10) == 7
    assert "TERM received" in log_of(spec)


def test_stop_kills_after_the_grace_period_including_escaped_children(spec, tmp_path):
    pid_file = tmp_path / "child.pid"
    script = (f"setsid sh -c 'echo $$ > {pid_file}; trap \"\" TERM; sleep 300' & "
              "trap '' TERM; echo ready; sleep 300")
    process = ContainerProcess(spec._replace(argv=["sh", "-c", script]))
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text().strip()
               and "ready" in log_of(spec)) and time.monotonic() < deadline:
        time.sleep(0.05)
    child = int(pid_file.read_text())
    started = time.monotonic()
    assert process.stop(grace_s=1) == 137
    assert 0.9 < time.monotonic() - started < 120     # killed, not waited for (300 s)
    deadline = time.monotonic() + 60
    while os.path.exists(f"/proc/{child}") and time.monotonic() < deadline:
        with open(f"/proc/{child}/stat") as f:
            if f.read().split(")")[-1].split()[0] == "Z":
                break
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{child}") or \
        open(f"/proc/{child}/stat").read().split(")")[-1].split()[0] == "Z"
