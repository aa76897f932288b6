"""``squeue -s`` on a cluster, end to end on the emulated API server with the test kubelet:
node 0 (pods with the job ServiceAccount) publishes its running steps in the job's record,
squeue lists them after ``batch`` and ``extern`` with Slurm's columns — from the warm
cache with no API call — and drops them as they end (they stay published, ended, for
sacct); a job whose pods have no API access lists ``batch`` and ``extern`` with one warning
saying why its srun steps are not shown."""

from __future__ import annotations

import json
from typing import Any, Dict, List

import pytest

from sbatch_k8s.backends.kubernetes.api import kinds
from tests.apiserver.support import wait_until
from tests.kube.harness import KubeSlurm, submitted_id
# Fixtures of other modules (taken by name through ``request``):
from tests.kube.test_dependencies import account_kube  # noqa: F401
from tests.kube.test_watch_cache import counted, emulated, warm  # noqa: F401

pytestmark = pytest.mark.slow

#: A job of two parallel steps that each run until ``go`` exists; then the job runs on,
#: step-less, until ``finish`` exists.
STEPPER = """\
#!/bin/sh
#SBATCH -J stepper
#SBATCH -n 2
printf '#!/bin/sh\\nwhile [ ! -f go ]; do sleep 0.1; done\\n' > waiter
chmod +x waiter
srun -n1 --exact ./waiter &
srun -n1 --exact ./waiter &
wait
touch steps-done
while [ ! -f finish ]; do sleep 0.1; done
"""
HEADER = "         STEPID     NAME PARTITION     USER      TIME NODELIST"


def _steps(kube: KubeSlurm, *args: str) -> List[List[str]]:
    done = kube.run("squeue", "-s", "-h", "-o", "%i %j %P %N", *args)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return [line.split() for line in done.stdout.splitlines()]


def _running(kube: KubeSlurm, job_id: int) -> str:
    """The job's node list once it runs ("" before)."""
    out = kube.run("squeue", "-h", "-j", str(job_id), "-o", "%T %N").stdout.split()
    return out[1] if out[:1] == ["RUNNING"] else ""


def _published(kube: KubeSlurm, job_id: int) -> Dict[str, Any]:
    record = kube.api().get(kinds.CONFIG_MAP, f"sbatch-k8s-job-{job_id}", kube.namespace)
    return (record or {}).get("data") or {}


def test_running_steps_are_listed_from_the_cache_and_go_when_they_end(
        request: pytest.FixtureRequest, kubelet: Any) -> None:
    server = request.getfixturevalue("emulated")
    kube: KubeSlurm = request.getfixturevalue("account_kube")
    warm(server, kube)
    kube.script("stepper.sh", STEPPER)
    job_id = submitted_id(kube.run("sbatch", "stepper.sh").stdout)
    node = wait_until(lambda: _running(kube, job_id), 120, f"job {job_id} running")
    expected = [[f"{job_id}.0", "waiter", "debug", node],
                [f"{job_id}.1", "waiter", "debug", node],
                [f"{job_id}.batch", "batch", "debug", node],
                [f"{job_id}.extern", "extern", "debug", node]]
    wait_until(lambda: sorted(_steps(kube)) == expected, 60, "both srun steps listed")
    listing, calls = counted(server, kube, "squeue", "-s")
    lines = listing.stdout.splitlines()
    assert (lines[0], len(lines), calls, listing.stderr) == (HEADER, 5, 0, "")
    assert lines[1].split()[0] == f"{job_id}.0" and lines[1].split()[-1] == node
    assert _steps(kube, "-j", str(job_id)) == _steps(kube)
    entries = json.loads(_published(kube, job_id)["running-steps.json"])
    assert [(e["id"], e["ntasks"], e["node_list"]) for e in entries] == [
        ("0", 1, node), ("1", 1, node)]

    (kube.work / "go").write_text("")
    wait_until(lambda: (kube.work / "steps-done").exists(), 60, "the steps' end")
    wait_until(lambda: sorted(_steps(kube)) == expected[2:], 60, "the steps gone from squeue")
    ended = json.loads(_published(kube, job_id)["running-steps.json"])
    assert [(e["id"], e["state"]) for e in ended] == [("0", "COMPLETED"), ("1", "COMPLETED")]
    (kube.work / "finish").write_text("")
    wait_until(lambda: _steps(kube, "-t", "all") == [], 60, "the job's end")
    accounted = kube.run("sacct", "-n", "-P", "-j", str(job_id), "-o", "JobID,State").stdout
    assert {f"{job_id}.0|COMPLETED", f"{job_id}.1|COMPLETED"} <= set(accounted.splitlines())


def test_without_the_job_account_squeue_says_the_srun_steps_are_not_visible(
        kube: KubeSlurm, kubelet: Any) -> None:
    kube.script("stepper.sh", STEPPER)
    job_id = submitted_id(kube.run("sbatch", "stepper.sh").stdout)
    node = wait_until(lambda: _running(kube, job_id), 120, f"job {job_id} running")
    done = kube.run("squeue", "-s", "-h", "-o", "%i %j %N")
    assert done.returncode == 0
    assert sorted(done.stdout.splitlines()) == [f"{job_id}.batch batch {node}",
                                                f"{job_id}.extern extern {node}"]
    assert done.stderr == ("squeue: warning: the srun steps of jobs in partition debug are "
                           "not visible (only batch and extern): its pods need the "
                           "partition's service_account to publish them\n")
    (kube.work / "go").write_text("")
    (kube.work / "finish").write_text("")
    wait_until(lambda: kube.run("squeue", "-h", "-j", str(job_id), "-t", "all", "-o", "%T")
               .stdout.strip() not in ("RUNNING", "COMPLETING"), 60, "the job's end")


def _record_api(cluster: Any, tmp_path: Any) -> Any:
    """The pod side's API client, as a pod whose token is the cluster's admin token."""
    from sbatch_k8s.runtime.cluster.kube_api import KubeApi

    token = tmp_path / "token"
    token.write_text(cluster.token)
    return KubeApi(cluster.url, str(token), None, "default")


def test_a_burst_of_step_starts_and_ends_becomes_few_patches(
        request: pytest.FixtureRequest, tmp_path: Any) -> None:
    """A hundred starts and ninety-eight ends in a burst: at most two patches, the last one
    what runs at the end; a record that is gone costs one line in the node's log."""
    from sbatch_k8s.runtime.cluster.step_publisher import StepPublisher, key_value

    api = _record_api(request.getfixturevalue("emulated"), tmp_path)
    api.request("POST", "/api/v1/namespaces/default/configmaps", body={
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "sbatch-k8s-job-7"},
        "data": {"record.json": "{}"}})
    logged: List[str] = []
    publisher = StepPublisher(api, "default", 7, logged.append)
    running: Dict[int, Dict[str, Any]] = {}
    for step_id in range(100):
        running[step_id] = {"step_id": step_id, "name": "sleep", "ntasks": 1,
                            "nodes": ["pod-0"], "time": 1700000000 + step_id}
        publisher.changed(running)
    for step_id in range(98):
        del running[step_id]
        publisher.changed(running)
    publisher.close()
    record = api.request("GET", "/api/v1/namespaces/default/configmaps/sbatch-k8s-job-7")
    assert 1 <= publisher.patches <= 2 and logged == []
    assert record["data"]["running-steps.json"] == key_value(running)
    assert [e["id"] for e in json.loads(record["data"]["running-steps.json"])] == ["98", "99"]

    gone = StepPublisher(api, "default", 8, logged.append)
    gone.changed(running)
    gone.close()
    assert gone.patches == 0 and len(logged) == 1
    assert logged[0].startswith("error: job 8: could not publish its running steps (squeue -s):")


def test_usage_alone_is_published_at_most_once_an_interval(
        request: pytest.FixtureRequest, tmp_path: Any) -> None:
    """Twenty steps each reporting usage (sstat's figures) every 0.1 s for 2 s, with a 30 s
    sampling interval: no patch for usage alone within the interval (patches are otherwise
    a second apart at least), the last figures written when the job ends."""
    import time

    from sbatch_k8s.runtime.cluster.step_publisher import StepPublisher

    api = _record_api(request.getfixturevalue("emulated"), tmp_path)
    api.request("POST", "/api/v1/namespaces/default/configmaps", body={
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "sbatch-k8s-job-9"},
        "data": {"record.json": "{}"}})
    publisher = StepPublisher(api, "default", 9, [].append, usage_interval_s=30.0)
    running = {i: {"step_id": i, "name": "work", "ntasks": 1, "nodes": ["pod-0"],
                   "time": 1700000000} for i in range(20)}
    publisher.changed(running)
    deadline = time.monotonic() + 20
    while publisher.patches == 0 and time.monotonic() < deadline:
        time.sleep(0.05)                              # the starts: one patch
    started = publisher.patches
    for tick in range(20):
        for step_id in running:
            running[step_id] = dict(running[step_id], usage={"n": 1, "u": tick, "s": 0})
            publisher.usage_changed(running)
        time.sleep(0.1)
    publisher.close()
    record = api.request("GET", "/api/v1/namespaces/default/configmaps/sbatch-k8s-job-9")
    usage_patches = publisher.patches - started
    assert started == 1 and usage_patches == 1       # at close only
    entries = json.loads(record["data"]["running-steps.json"])
    assert {e["usage"]["u"] for e in entries} == {19}   # the last figures went out at close
