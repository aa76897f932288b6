"""The command server's watch cache, end to end through real commands on the emulated API
server: once warm, squeue, scontrol and sacct make no API call and still see at once what
sbatch and scancel just did, and the state changes the cluster makes; a dropped watch, a
compacted history (410) and a killed server change nothing a user sees."""

from __future__ import annotations

import os
import signal
import subprocess
from typing import Any, List, Sequence, Tuple

import pytest

from tests.apiserver import watch_stream
from tests.apiserver.support import wait_until
from tests.kube.harness import KubeSlurm, submitted_id
from tests.local.harness import until_exists
from sbatch_k8s.backends.kubernetes.read.watch_cache import USER_AGENT as CACHE_AGENT
from sbatch_k8s.runtime.cluster.kube_api import USER_AGENT as RUNTIME_AGENT
from tests.kubelet.api import KUBELET_AGENT

pytestmark = pytest.mark.slow

RECORD_SELECTOR = "sbatch-k8s.io/kind=record"



@pytest.fixture
def emulated(cluster: Any) -> Any:
    """These tests count the API server's requests: the emulated one only."""
    if not hasattr(cluster, "requests"):
        pytest.skip("counts requests, which only the emulated API server records")
    return cluster


def command_requests(requests: Sequence[Any]) -> List[Any]:
    """``requests`` less the test kubelet's (its heartbeats, pod status, reads of what pods
    mount), the pods' runtimes' (steps they publish) and the watch cache's own (a watch
    renewed, a LIST after 410 Gone), which go on whatever a command does."""
    return [r for r in requests
            if r.agent not in (KUBELET_AGENT, CACHE_AGENT)
            and not r.agent.startswith(RUNTIME_AGENT)]


def counted(cluster: Any, kube: KubeSlurm, *argv: str
            ) -> Tuple["subprocess.CompletedProcess[str]", int]:
    """Run one command; its result and how many API requests were made meanwhile, but for
    the test kubelet's."""
    done, requests = requests_of(cluster, kube, *argv)
    return done, len(requests)


def requests_of(cluster: Any, kube: KubeSlurm, *argv: str
                ) -> Tuple["subprocess.CompletedProcess[str]", List[str]]:
    """Run one command; its result and the API requests made meanwhile, but for the test
    kubelet's and the pods' runtimes' (``METHOD path agent``: what a failure shows)."""
    before = len(cluster.requests)
    done = kube.run(*argv)
    assert done.returncode == 0, done.stderr
    return done, [f"{r.method} {r.path} {r.agent}"
                  for r in command_requests(cluster.requests[before:])]


def warm(cluster: Any, kube: KubeSlurm) -> None:
    """Run squeue until one is answered by the cache alone (server started, mirrors synced).
    The server may hold a reader back for up to 30 s while the cache catches up (not 1 s):
    on a loaded machine too, an answer from the cache never depends on timing."""
    kube.env["SBATCHK8S_CACHE_WAIT_S"] = "30"
    wait_until(lambda: counted(cluster, kube, "squeue")[1] == 0, 60, "a warm cache")


def test_warm_commands_see_sbatch_and_scancel_at_once_with_no_api_call(
        emulated: Any, kube: KubeSlurm) -> None:
    warm(emulated, kube)
    kube.script("sleepy.sh", "#!/bin/sh\n#SBATCH -J sleepy\nsleep 300\n")
    job_id = submitted_id(kube.run("sbatch", "sleepy.sh").stdout)
    listing, calls = counted(emulated, kube, "squeue", "-h", "-o", "%i %j %T")
    assert (listing.stdout, calls) == (f"{job_id} sleepy PENDING\n", 0)
    shown, calls = counted(emulated, kube, "scontrol", "show", "job", str(job_id))
    assert f"JobId={job_id} JobName=sleepy" in shown.stdout and "JobState=PENDING" in shown.stdout
    assert calls == 0
    assert kube.run("scancel", str(job_id)).returncode == 0
    listing, calls = counted(emulated, kube, "squeue", "-h", "-t", "all", "-o", "%i %T")
    assert (listing.stdout, calls) == (f"{job_id} CANCELLED\n", 0)
    accounting, calls = counted(emulated, kube, "sacct", "-X", "-n", "-P", "-o", "JobID,State")
    assert accounting.stdout.startswith(f"{job_id}|CANCELLED by ") and calls == 0
    listing, calls = counted(emulated, kube, "squeue", "-h")
    assert (listing.stdout, calls) == ("", 0)


def test_state_changes_reach_squeue_through_the_cache(emulated: Any, kube: KubeSlurm,
                                                      kubelet: Any) -> None:
    """RUNNING and then COMPLETED, which the cluster makes, are seen through the cache (the
    job runs until the test has seen it RUNNING)."""
    warm(emulated, kube)
    go = kube.work / "go"
    kube.script("short.sh", f"#!/bin/sh\n#SBATCH -J short\n{until_exists(go)}\n")
    job_id = submitted_id(kube.run("sbatch", "short.sh").stdout)

    def state() -> List[Any]:
        done, calls = counted(emulated, kube, "squeue", "-h", "-t", "all", "-o", "%i %T")
        return [done.stdout.split()[1:], calls] if done.stdout else []

    try:
        wait_until(lambda: state() == [["RUNNING"], 0], 120,
                   f"job {job_id} RUNNING from the cache")
    finally:
        go.touch()
    wait_until(lambda: state()[0] == ["COMPLETED"], 120, f"job {job_id} COMPLETED")
    assert state() == [["COMPLETED"], 0]  # written back once, then read from the cache
    accounting, calls = counted(emulated, kube, "sacct", "-j", str(job_id), "-X", "-n", "-P",
                                "-o", "State,ExitCode")
    assert (accounting.stdout, calls) == ("COMPLETED|0:0\n", 0)


def test_a_dropped_watch_and_a_compacted_history_change_nothing_visible(
        emulated: Any, kube: KubeSlurm) -> None:
    warm(emulated, kube)
    kube.script("held.sh", "#!/bin/sh\n#SBATCH -J held\ntrue\n")
    assert watch_stream.drop_watches(emulated.store) == 3  # records, pods and Jobs
    first = submitted_id(kube.run("sbatch", "--hold", "held.sh").stdout)
    listing, _ = counted(emulated, kube, "squeue", "-h", "-o", "%i %T %r")
    assert listing.stdout == f"{first} PENDING JobHeldUser\n"
    warm(emulated, kube)

    # The records' watch cannot come back until the history it would resume from is gone.
    emulated.faults.add(method="GET", path="/configmaps$", status=503, times=None)
    watch_stream.drop_watches(emulated.store)
    second = submitted_id(kube.run("sbatch", "--hold", "held.sh").stdout)
    emulated.store._history.clear()
    emulated.faults.clear()
    mark = len(emulated.requests)
    listing, _ = counted(emulated, kube, "squeue", "-h", "-o", "%i %T")
    assert sorted(listing.stdout.splitlines()) == [f"{first} PENDING", f"{second} PENDING"]
    warm(emulated, kube)
    relists = [r for r in emulated.requests[mark:] if r.path.endswith("/configmaps")
               and r.query.get("labelSelector") == RECORD_SELECTOR and "watch" not in r.query]
    assert relists, "the records' mirror listed again after 410 Gone"
    listing, calls = counted(emulated, kube, "squeue", "-h", "-o", "%i %T")
    assert sorted(listing.stdout.splitlines()) == [f"{first} PENDING", f"{second} PENDING"]
    assert calls == 0


def _server_pids(kube: KubeSlurm) -> List[int]:
    marker = str(kube.state / "server.sock").encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if marker in argv and any(b"sbatch_k8s.server" in a for a in argv):
            found.append(int(entry))
    return found


def test_commands_work_cold_when_the_server_is_killed(emulated: Any, kube: KubeSlurm) -> None:
    warm(emulated, kube)
    kube.script("held.sh", "#!/bin/sh\n#SBATCH -J held\ntrue\n")
    job_id = submitted_id(kube.run("sbatch", "--hold", "held.sh").stdout)
    pids = _server_pids(kube)
    assert pids, "the command server runs"
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not _server_pids(kube), 60, "the server gone")
    listing, calls = counted(emulated, kube, "squeue", "-h", "-o", "%i %T")
    assert listing.stdout == f"{job_id} PENDING\n" and calls > 0  # cold: LISTs
    assert kube.run("scancel", str(job_id)).returncode == 0
    listing, _ = counted(emulated, kube, "squeue", "-h", "-t", "all", "-o", "%i %T")
    assert listing.stdout == f"{job_id} CANCELLED\n"


def test_jobs_of_an_api_server_restarted_empty_leave_the_cache(emulated: Any,
                                                               kube: KubeSlurm) -> None:
    """Issue 15, item 12: the server's new history never issued the mirrors' resourceVersion,
    and a watch resumed from it is silent: the mirrors must list afresh, not serve the jobs
    the server no longer has."""
    warm(emulated, kube)
    kube.script("held.sh", "#!/bin/sh\n#SBATCH -J held\ntrue\n")
    job_id = submitted_id(kube.run("sbatch", "--hold", "held.sh").stdout)
    listing, calls = counted(emulated, kube, "squeue", "-h", "-o", "%i %T")
    assert (listing.stdout, calls) == (f"{job_id} PENDING\n", 0)
    emulated.restart_empty()
    warm(emulated, kube)       # the mirrors answer again, from the new server's history
    listing, calls = counted(emulated, kube, "squeue", "-h", "-t", "all", "-o", "%i %T")
    assert (listing.stdout, calls) == ("", 0)
    shown = kube.run("scontrol", "show", "job", str(job_id))
    assert (shown.returncode, shown.stderr) == (1, "slurm_load_jobs error: Invalid job id "
                                                   "specified\n")
    accounting, calls = counted(emulated, kube, "sacct", "-X", "-n", "-P", "-o", "JobID,State")
    assert (accounting.stdout, calls) == ("", 0)
