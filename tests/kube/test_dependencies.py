"""Dependencies, begin times and holds on a cluster, end to end on an API server with the
test kubelet: dependent jobs are created suspended (no pods), shown ``PD (Dependency)``, and
released by node 0's runtime of the job they wait for (pods with the job ServiceAccount), by
any command that looks (squeue), or never (``DependencyNeverSatisfied``, or cancelled with
``--kill-on-invalid-dep=yes``)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from sbatch_k8s.backends.kubernetes.api import kinds
from sbatch_k8s.backends.kubernetes.api.client import KubeError
from tests.apiserver.support import wait_until
from tests.kube.harness import CONFIG, KubeSlurm, submit
from tests.local.harness import REPO, until_exists

pytestmark = pytest.mark.slow

#: The test partition with the job ServiceAccount: node 0 may write its record and release.
WITH_ACCOUNT = CONFIG + 'service_account = "sbatch-k8s-job"\n'
#: How far ahead ``--begin=now+N`` puts a job: after the slow commands that look at it
#: pending, on a loaded machine too.
BEGIN_S = 20



def apply_job_account(kube: KubeSlurm) -> None:
    """The namespaced objects of ``deploy/rbac.yaml`` (the job ServiceAccount, its Role and
    RoleBinding), as an administrator applies them; those already there are kept."""
    import yaml

    plurals = {"ServiceAccount": "serviceaccounts", "Role": "roles",
               "RoleBinding": "rolebindings"}
    client = kube.api()
    for doc in yaml.safe_load_all((REPO / "deploy" / "rbac.yaml").read_text()):
        if not doc or doc["kind"] not in plurals:
            continue
        version = doc["apiVersion"]
        prefix = f"/apis/{version}" if "/" in version else f"/api/{version}"
        try:
            client.request("POST", f"{prefix}/namespaces/{kube.namespace}/"
                                   f"{plurals[doc['kind']]}", body=doc)
        except KubeError as e:
            if e.status != 409:
                raise


@pytest.fixture
def account_kube(cluster: Any, tmp_path: Path) -> Iterator[KubeSlurm]:
    """The commands, with a partition whose pods run as the job ServiceAccount."""
    slurm = KubeSlurm(tmp_path, cluster.kubeconfig, config=WITH_ACCOUNT)
    apply_job_account(slurm)
    yield slurm
    slurm.cleanup()


def _record_state(kube: KubeSlurm, job_id: int) -> str:
    """The state label of the job's record, read straight from the API (no command runs,
    so nothing reconciles or releases)."""
    record = kube.api().get(kinds.CONFIG_MAP, f"sbatch-k8s-job-{job_id}", kube.namespace)
    return ((record or {}).get("metadata") or {}).get("labels", {}).get(
        "sbatch-k8s.io/state", "")


def _sacct(kube: KubeSlurm, job_id: int) -> str:
    return kube.run("sacct", "-X", "-n", "-P", "-j", str(job_id), "-o",
                    "JobID,State,ExitCode,Start,End").stdout.strip()


def _squeue(kube: KubeSlurm) -> Dict[int, str]:
    out = kube.run("squeue", "-h", "-o", "%i %T %r").stdout
    return {int(line.split()[0]): " ".join(line.split()[1:]) for line in out.splitlines()}


def _pods(kube: KubeSlurm, job_id: int) -> List[Dict[str, Any]]:
    return kube.objects(kinds.POD, f"sbatch-k8s.io/job-id={job_id}")


def _workload(kube: KubeSlurm, name: str, job_id: int) -> Dict[str, Any]:
    return kube.api().get(kinds.JOB, f"{name}-{job_id}", kube.namespace)


def _final(kube: KubeSlurm, job_id: int, timeout: float = 120) -> str:
    """The job's sacct line once final, found without any command that reconciles (sacct
    -j reads the records: a pass over the job itself only)."""
    def ended() -> str:
        line = _sacct(kube, job_id)
        return line if line and line.split("|")[1] not in ("PENDING", "RUNNING") else ""

    return wait_until(ended, timeout, f"job {job_id} ended")


def test_dependent_job_is_created_suspended_and_shown_pending_dependency(
        kube: KubeSlurm) -> None:
    kube.script("long.sh", "#!/bin/sh\n#SBATCH -J up\nsleep 60\n")
    kube.script("after.sh", "#!/bin/sh\n#SBATCH -J down\necho after\n")
    upstream = submit(kube, "long.sh")
    dependent = submit(kube, f"--dependency=afterok:{upstream}", "after.sh")
    workload = _workload(kube, "down", dependent)
    assert workload["spec"]["suspend"] is True
    assert workload["metadata"]["annotations"]["sbatch-k8s.io/dependency"] == \
        f"afterok:{upstream}"
    assert _pods(kube, dependent) == []
    assert _squeue(kube)[dependent] == "PENDING Dependency"
    shown = kube.run("squeue", "-h", "-j", str(dependent), "-o", "%E").stdout.strip()
    assert shown == f"afterok:{upstream}(unfulfilled)"  # as Slurm 22.05 prints it
    show = kube.run("scontrol", "show", "job", str(dependent)).stdout
    assert f" Dependency=afterok:{upstream}(unfulfilled)\n" in show


def test_k8s_print_gives_the_held_form(kube: KubeSlurm) -> None:
    import yaml

    kube.script("after.sh", "#!/bin/sh\n#SBATCH -J down\necho after\n")
    done = kube.run("sbatch", "--k8s-print=objects", "--dependency=afterok:17",
                    "--begin=2030-01-01T10:00", "after.sh")
    assert done.returncode == 0, done.stderr
    job = next(m for m in yaml.safe_load_all(done.stdout) if m and m["kind"] == "Job")
    assert job["spec"]["suspend"] is True
    annotations = job["metadata"]["annotations"]
    assert annotations["sbatch-k8s.io/dependency"] == "afterok:17"
    assert annotations["sbatch-k8s.io/begin"] == "2030-01-01T10:00:00"
    assert "sbatch-k8s.io/hold" not in annotations


def test_unknown_dependency_target_is_refused(kube: KubeSlurm) -> None:
    kube.script("after.sh", "#!/bin/sh\necho after\n")
    done = kube.run("sbatch", "--dependency=afterok:99999", "after.sh")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == \
        "sbatch: error: Batch job submission failed: Job dependency problem"
    assert "Job" not in kube.everything()


def test_chain_runs_in_order_released_by_node_0(account_kube: KubeSlurm,
                                                 kubelet: Any) -> None:
    """A → B (afterok) → C (afternotok): after the three sbatch, nobody types anything; each
    job's node 0 records its end and releases the next."""
    kube = account_kube
    kube.script("a.sh", "#!/bin/sh\n#SBATCH -J a\necho a > order.txt\n")
    kube.script("b.sh", "#!/bin/sh\n#SBATCH -J b\necho b >> order.txt\nexit 1\n")
    kube.script("c.sh", "#!/bin/sh\n#SBATCH -J c\necho c >> order.txt\n")
    a = submit(kube, "a.sh")
    b = submit(kube, f"--dependency=afterok:{a}", "b.sh")
    c = submit(kube, f"--dependency=afternotok:{b}", "c.sh")
    wait_until(lambda: _record_state(kube, c) == "COMPLETED", 180, "c completed")
    assert kube.read("order.txt") == "a\nb\nc\n"
    assert [_record_state(kube, j) for j in (a, b)] == ["COMPLETED", "FAILED"]
    for job_id, state, code in ((a, "COMPLETED", "0:0"), (b, "FAILED", "1:0"),
                                (c, "COMPLETED", "0:0")):
        assert _sacct(kube, job_id).split("|")[1:3] == [state, code]
    steps = kube.run("sacct", "-n", "-P", "-j", str(b), "-o", "JobID,State").stdout
    assert f"{b}.batch|FAILED" in steps.splitlines()


def _controller(kube: KubeSlurm) -> "subprocess.Popen[str]":
    return subprocess.Popen([sys.executable, "-m", "sbatch_k8s.tool", "controller",
                             "--interval", "0.5", "-v"], cwd=kube.work,
                            env=dict(kube.env, PYTHONPATH=str(REPO)),  # this checkout
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_controller_releases_and_records_with_nobody_typing(kube: KubeSlurm,
                                                            kubelet: Any) -> None:
    """No ServiceAccount (node 0 cannot act) and no command after sbatch: two controllers,
    one leading through the Lease, release B and record both ends."""
    kube.script("a.sh", "#!/bin/sh\n#SBATCH -J a\necho a > order.txt\n")
    kube.script("b.sh", "#!/bin/sh\n#SBATCH -J b\necho b >> order.txt\n")
    kube.script("later.sh", "#!/bin/sh\n#SBATCH -J later\ntrue\n")
    controllers = [_controller(kube), _controller(kube)]
    try:
        a = submit(kube, "a.sh")
        b = submit(kube, f"--dependency=afterok:{a}", "b.sh")
        begins = submit(kube, "--begin=now+3", "later.sh")
        wait_until(lambda: _record_state(kube, b) == "COMPLETED", 180, "b recorded")
        assert _record_state(kube, a) == "COMPLETED"
        assert kube.read("order.txt") == "a\nb\n"
        wait_until(lambda: _record_state(kube, begins) == "COMPLETED", 180, "begin recorded")
        lease = kube.api().request("GET", "/apis/coordination.k8s.io/v1/namespaces/"
                                          f"{kube.namespace}/leases/sbatch-k8s-controller")
        holder = lease["spec"]["holderIdentity"]
        assert holder.endswith(tuple(f"-{p.pid}" for p in controllers))
    finally:
        for proc in controllers:
            proc.terminate()
        logs = [proc.communicate(timeout=60)[1] for proc in controllers]
    assert sum("holding the lease" in log for log in logs) >= 1, logs
    assert all("Traceback" not in log for log in logs), logs


def test_chain_released_by_commands_that_look(kube: KubeSlurm, kubelet: Any) -> None:
    """Node 0 has no API access here: squeue, run in a loop, releases each link."""
    kube.script("a.sh", "#!/bin/sh\n#SBATCH -J a\necho a > a.txt\n")
    kube.script("b.sh", "#!/bin/sh\n#SBATCH -J b\ncat a.txt > b.txt; echo b >> b.txt\n")
    kube.script("c.sh", "#!/bin/sh\n#SBATCH -J c\necho c > c.txt\n")
    a = submit(kube, "a.sh")
    b = submit(kube, f"--dependency=afterok:{a}", "b.sh")
    c = submit(kube, f"--dependency=afternotok:{b}", "c.sh")

    def chain_settled() -> Dict[int, str]:
        shown = _squeue(kube)
        return shown if c in shown and shown[c] == "PENDING DependencyNeverSatisfied" and \
            b not in shown else {}

    shown = wait_until(chain_settled, 180, "b ran and c can never run")
    assert a not in shown
    assert kube.read("b.txt") == "a\nb\n"
    assert _sacct(kube, b).split("|")[1] == "COMPLETED"
    assert _pods(kube, c) == []
    assert _workload(kube, "c", c)["spec"]["suspend"] is True


def test_singleton_waits_for_the_earlier_job_of_its_name(account_kube: KubeSlurm,
                                                        kubelet: Any) -> None:
    """The second job of the name waits while the first runs (until the test has seen it
    pending), then runs after it."""
    kube = account_kube
    go = kube.work / "go"
    kube.script("one.sh", f"#!/bin/sh\n#SBATCH -J solo\n{until_exists(go)}\n"
                "echo first > solo.txt\n")
    kube.script("two.sh", "#!/bin/sh\n#SBATCH -J solo\necho second >> solo.txt\n")
    first = submit(kube, "one.sh")
    try:
        second = submit(kube, "--dependency=singleton", "two.sh")
        assert _squeue(kube)[second] == "PENDING Dependency"
    finally:
        go.touch()
    wait_until(lambda: _record_state(kube, second) == "COMPLETED", 120, "second completed")
    assert kube.read("solo.txt") == "first\nsecond\n"
    assert _record_state(kube, first) == "COMPLETED"


def test_kill_on_invalid_dep_cancels_the_dependent(kube: KubeSlurm, kubelet: Any) -> None:
    kube.script("fail.sh", "#!/bin/sh\n#SBATCH -J fail\nexit 3\n")
    kube.script("after.sh", "#!/bin/sh\n#SBATCH -J after\necho never\n")
    upstream = submit(kube, "fail.sh")
    dependent = submit(kube, f"--dependency=afterok:{upstream}",
                        "--kill-on-invalid-dep=yes", "after.sh")

    def cancelled() -> str:
        _squeue(kube)
        line = _sacct(kube, dependent)
        return line if "CANCELLED" in line else ""

    line = wait_until(cancelled, 120, f"job {dependent} cancelled")
    job_id, state, code, start, end = line.split("|")
    assert (state, code, start) == ("CANCELLED", "0:0", end)  # as slurmctld: start = end
    assert dependent not in _squeue(kube)
    # As Slurm 22.05 shows such a job: squeue/scontrol say why, sacct's Reason is None.
    shown = kube.run("squeue", "-h", "-t", "all", "-j", str(dependent), "-o",
                     "%E|%r|%T").stdout.strip()
    assert shown == f"afterok:{upstream}(failed)|DependencyNeverSatisfied|CANCELLED"
    reason = kube.run("sacct", "-X", "-n", "-P", "-j", str(dependent), "-o",
                      "State,Reason").stdout.strip()
    assert reason == "CANCELLED|None"
    assert _pods(kube, dependent) == []
    assert kube.api().get(kinds.JOB, f"after-{dependent}", kube.namespace) is None or \
        _workload(kube, "after", dependent)["metadata"].get("deletionTimestamp")


def test_begin_time_holds_the_job_until_then(kube: KubeSlurm, kubelet: Any) -> None:
    kube.script("later.sh", "#!/bin/sh\n#SBATCH -J later\ndate +%s > started.txt\n")
    submitted = time.time()
    job_id = submit(kube, f"--begin=now+{BEGIN_S}", "later.sh")
    assert _squeue(kube)[job_id] == "PENDING BeginTime"
    assert _workload(kube, "later", job_id)["spec"]["suspend"] is True

    def started() -> str:
        _squeue(kube)
        return kube.read("started.txt") if (kube.work / "started.txt").exists() else ""

    began = int(wait_until(started, 120, "the job started").strip())
    assert began >= int(submitted) + BEGIN_S


def test_hold_and_dependency_combine(kube: KubeSlurm, kubelet: Any) -> None:
    """Released, a held dependent waits for its upstream; held again, it stays held after
    the upstream ends (which it does once the test has looked at both reasons)."""
    go = kube.work / "go"
    kube.script("long.sh", f"#!/bin/sh\n#SBATCH -J up\n{until_exists(go)}\n")
    kube.script("after.sh", "#!/bin/sh\n#SBATCH -J held\necho ran > held.txt\n")
    upstream = submit(kube, "long.sh")
    try:
        dependent = submit(kube, "--hold", f"--dependency=afterok:{upstream}", "after.sh")
        assert _squeue(kube)[dependent] == "PENDING JobHeldUser"
        assert kube.run("scontrol", "release", str(dependent)).returncode == 0
        assert _squeue(kube)[dependent] == "PENDING Dependency"
        assert kube.run("scontrol", "hold", str(dependent)).returncode == 0
        held = _squeue(kube)[dependent]  # JobHeldAdmin when root holds it, as in Slurm
        assert held in ("PENDING JobHeldUser", "PENDING JobHeldAdmin")
    finally:
        go.touch()

    def upstream_done() -> str:
        shown = _squeue(kube)
        return shown.get(dependent, "") if upstream not in shown else ""

    assert wait_until(upstream_done, 120, "upstream ended") == held
    assert _pods(kube, dependent) == []
    assert kube.run("scontrol", "release", str(dependent)).returncode == 0
    wait_until(lambda: (kube.work / "held.txt").exists(), 120, "the dependent ran")
