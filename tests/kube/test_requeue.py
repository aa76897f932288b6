"""``scontrol requeue`` on an API server with the test kubelet: the job runs again under the
same id, with new pods, its restart count one higher (``Restarts=`` in scontrol,
``SLURM_RESTART_COUNT`` in the job), pending with reason ``BeginTime`` first as slurmctld
shows it; and Slurm's refusals for jobs that cannot be requeued."""

from __future__ import annotations

import re
import time
from typing import Any, List, Set

import pytest

from sbatch_k8s.backends.kubernetes.api import kinds
from tests.apiserver.support import wait_until
from tests.kube.harness import KubeSlurm, submitted_id
from tests.kube.test_dependencies import account_kube  # noqa: F401

pytestmark = pytest.mark.slow

#: Each run appends its restart count to a file of its own (``%r``: not the output file,
#: which a new run truncates) and to the output, then waits for the test's go.
RUNS = r"""#!/bin/sh
#SBATCH -J again -o again-%j-%r.out --requeue
echo "run ${SLURM_RESTART_COUNT:-unset} of $SLURM_JOB_ID" >> runs.txt
echo "restart ${SLURM_RESTART_COUNT:-unset}"
while [ ! -e go-${SLURM_RESTART_COUNT:-0} ]; do sleep 0.2; done
"""
WAIT_S = 180


def _runs(kube: KubeSlurm) -> List[str]:
    try:
        return kube.read("runs.txt").splitlines()
    except FileNotFoundError:
        return []


def _pod_uids(kube: KubeSlurm, job_id: int) -> Set[str]:
    return {p["metadata"]["uid"]
            for p in kube.objects(kinds.POD, f"sbatch-k8s.io/job-id={job_id}")}


def _state(kube: KubeSlurm, job_id: int) -> str:
    return kube.run("sacct", "-j", str(job_id), "-X", "-n", "-P", "-o", "State").stdout.strip()


def test_requeue_runs_the_job_again_under_its_id(kube: KubeSlurm, kubelet: Any) -> None:
    kube.script("again.sh", RUNS)
    job_id = submitted_id(kube.run("sbatch", "again.sh").stdout)
    wait_until(lambda: _runs(kube) == [f"run unset of {job_id}"], WAIT_S, "the first run")
    first_pods = _pod_uids(kube, job_id)

    # The run's steps as node 0 publishes them (with the job ServiceAccount) end with it.
    record = f"sbatch-k8s-job-{job_id}"
    kube.api().merge_patch(kinds.CONFIG_MAP, record, kube.namespace,
                           {"data": {"running-steps.json": "[]"}})
    kube.env["SBATCHK8S_REQUEUE_DELAY"] = "4"
    done = kube.run("scontrol", "requeue", str(job_id))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), done
    shown = kube.run("scontrol", "show", "job", str(job_id)).stdout
    assert "Requeue=1 Restarts=1" in shown, shown
    data = kube.api().get(kinds.CONFIG_MAP, record, kube.namespace)["data"]
    assert "running-steps.json" not in data and "report.json" not in data, sorted(data)
    # PD (BeginTime) until Slurm's delay passed: the new workload waits suspended, gated by
    # the begin time, and no pod runs; then a command's look (here squeue) releases it.
    pending = kube.run("squeue", "-h", "-j", str(job_id), "-o", "%i %T %r").stdout
    assert pending == f"{job_id} PENDING BeginTime\n", pending
    workload = kube.api().get(kinds.JOB, f"again-{job_id}", kube.namespace)
    assert workload["spec"]["suspend"] is True and \
        "sbatch-k8s.io/begin" in workload["metadata"]["annotations"], workload["metadata"]
    assert not _pod_uids(kube, job_id)
    wait_until(lambda: _looked_at(kube, job_id) and _runs(kube)[1:] == [f"run 1 of {job_id}"],
               WAIT_S, "the second run")
    assert not first_pods & _pod_uids(kube, job_id)
    squeue = kube.run("squeue", "-h", "-j", str(job_id), "-o", "%i %T")
    assert squeue.stdout == f"{job_id} RUNNING\n"
    (kube.work / "go-1").write_text("")
    wait_until(lambda: _state(kube, job_id) == "COMPLETED", WAIT_S, "the second run's end")
    assert kube.read(f"again-{job_id}-1.out") == "restart 1\n"
    # The first run, as slurmdbd keeps it: only with --duplicates, closed as a cancel.
    assert _runs_in_sacct(kube, job_id) == [f"{job_id}|COMPLETED|0:0"]
    assert _runs_in_sacct(kube, job_id, "-D") == [
        f"{job_id}|REQUEUED|0:0", f"{job_id}|COMPLETED|0:0"]
    steps = kube.run("sacct", "-j", str(job_id), "-D", "-n", "-P", "-o",
                     "JobID,State,ExitCode").stdout.splitlines()
    assert steps[:3] == [f"{job_id}|REQUEUED|0:0", f"{job_id}.batch|CANCELLED|0:15",
                         f"{job_id}.extern|COMPLETED|0:0"], steps
    # The first run was ended as slurmctld's requeue ends it (node 0 heard the request on its
    # pod), with slurmstepd's line saying why.
    first = kube.read(f"again-{job_id}-0.out").splitlines()
    assert first[0] == "restart unset" and re.fullmatch(
        rf"slurmstepd: error: \*\*\* JOB {job_id} ON again-{job_id}-0 CANCELLED AT \S+ "
        r"DUE TO JOB REQUEUE \*\*\*", first[1]), first

    # A finished job is requeued too, as Slurm does; and waits as slurmctld shows it.
    done = kube.run("scontrol", "requeue", str(job_id))
    assert (done.returncode, done.stderr) == (0, ""), done
    shown = kube.run("scontrol", "show", "job", str(job_id)).stdout
    assert "Restarts=2" in shown, shown
    wait_until(lambda: _looked_at(kube, job_id) and _runs(kube)[2:] == [f"run 2 of {job_id}"],
               WAIT_S, "the third run")
    (kube.work / "go-2").write_text("")
    wait_until(lambda: _state(kube, job_id) == "COMPLETED", WAIT_S, "the third run's end")
    assert _runs_in_sacct(kube, job_id, "-D") == [
        f"{job_id}|REQUEUED|0:0", f"{job_id}|REQUEUED|0:0", f"{job_id}|COMPLETED|0:0"]
    # The companions survived both requeues, and hang on the newest workload (the Secret
    # through the ConfigMap, which the requeue alone detached and hung on again).
    api = kube.api()
    files = api.get(kinds.CONFIG_MAP, f"again-{job_id}", kube.namespace)
    owners = {o["uid"] for o in api.get(kinds.SECRET, f"again-{job_id}", kube.namespace)
              ["metadata"]["ownerReferences"]}
    assert owners == {files["metadata"]["uid"]}
    workload = api.get(kinds.JOB, f"again-{job_id}", kube.namespace)
    assert {o["uid"] for o in files["metadata"]["ownerReferences"]} == \
        {workload["metadata"]["uid"]}


def _looked_at(kube: KubeSlurm, job_id: int) -> bool:
    """Look at the job as any command does (its look releases a job whose begin time
    came); True."""
    kube.run("squeue", "-h", "-j", str(job_id))
    return True


def _runs_in_sacct(kube: KubeSlurm, job_id: int, *args: str) -> List[str]:
    return kube.run("sacct", "-j", str(job_id), "-X", "-n", "-P", "-o", "JobID,State,ExitCode",
                    *args).stdout.splitlines()


def test_requeuehold_keeps_the_job_held_until_release(kube: KubeSlurm, kubelet: Any) -> None:
    kube.script("again.sh", RUNS)
    job_id = submitted_id(kube.run("sbatch", "again.sh").stdout)
    wait_until(lambda: _runs(kube) == [f"run unset of {job_id}"], WAIT_S, "the first run")
    kube.env["SBATCHK8S_REQUEUE_DELAY"] = "2"
    done = kube.run("scontrol", "requeuehold", str(job_id))
    assert (done.returncode, done.stderr) == (0, ""), done
    held = kube.run("squeue", "-h", "-j", str(job_id), "-o", "%i %T %r").stdout
    assert held == f"{job_id} PENDING job requeued in held state\n"
    shown = kube.run("scontrol", "show", "job", str(job_id)).stdout
    assert "Priority=0 " in shown and "Reason=job_requeued_in_held_state" in shown, shown
    assert "Restarts=1" in shown and not _pod_uids(kube, job_id)  # held: no pods
    # Its begin time passing (looks release the gate) does not free it, nor change its reason.
    time.sleep(3)
    for _ in range(2):
        held = kube.run("squeue", "-h", "-j", str(job_id), "-o", "%i %T %r").stdout
        assert held == f"{job_id} PENDING job requeued in held state\n"
    assert not _pod_uids(kube, job_id)

    assert kube.run("scontrol", "release", str(job_id)).returncode == 0
    wait_until(lambda: _runs(kube)[1:] == [f"run 1 of {job_id}"], WAIT_S, "the second run")
    (kube.work / "go-1").write_text("")
    wait_until(lambda: _state(kube, job_id) == "COMPLETED", WAIT_S, "the second run's end")
    assert _runs_in_sacct(kube, job_id, "-D") == [
        f"{job_id}|REQUEUED|0:0", f"{job_id}|COMPLETED|0:0"]


def test_requeued_job_pends_with_begin_time_until_placed() -> None:
    """What squeue shows of a requeued job between its requeue and its new pods' placing."""
    from parsers.job_records import JobRecord, with_changes
    from sbatch_k8s.backends.kubernetes.history.records import live_record
    from sbatch_k8s.backends.kubernetes.requeue.next_run import requeued_record

    ran = with_changes(JobRecord(job_id=7, name="x", user="u", uid=1, group="g", gid=1,
                                 partition="debug", state="COMPLETED"),
                       start_time=10, end_time=20, exit_code=3)
    requeued = requeued_record(ran, 30)
    assert (requeued.state, requeued.reason, requeued.restarts, requeued.submit_time,
            requeued.start_time, requeued.end_time, requeued.exit_code) == (
        "PENDING", "BeginTime", 1, 30, None, None, 0)
    workload = {"apiVersion": "batch/v1", "kind": "Job", "spec": {"suspend": False},
                "metadata": {"name": "x-7"}}
    pending = live_record(requeued, workload, [], 31)
    assert (pending.state, pending.reason) == ("PENDING", "BeginTime")
    placed = {"metadata": {"name": "x-7-0", "labels": {"sbatch-k8s.io/job-id": "7"},
                           "annotations": {"batch.kubernetes.io/job-completion-index": "0"}},
              "spec": {"nodeName": "n1", "hostname": "x-7-0"},
              "status": {"phase": "Pending"}}
    assert live_record(requeued, workload, [placed], 32).reason != "BeginTime"


def test_requeue_refusals(kube: KubeSlurm, kubelet: Any) -> None:
    held = submitted_id(kube.run("sbatch", "-H", "--wrap", "true").stdout)
    never = submitted_id(kube.run("sbatch", "--no-requeue", "--wrap", "sleep 300").stdout)
    done = kube.run("scontrol", "requeue", f"{held},{never}", "999999", "abc")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"Job is pending execution for job {held}",
        f"Requested operation is presently disabled for job {never}",
        "Invalid job id specified for job 999999",
        "Invalid job id specified for job abc"]
    kube.run("scancel", str(held), str(never))


EVICTED = r"""#!/bin/sh
#SBATCH -J evicted -o evicted-%j-%r.out -N2 --requeue
echo "run ${SLURM_RESTART_COUNT:-unset} on $(hostname)" >> evicted-runs.txt
while [ ! -e go ]; do sleep 0.2; done
"""


def _lines_of(kube: KubeSlurm, name: str) -> List[str]:
    try:
        return kube.read(name).splitlines()
    except FileNotFoundError:
        return []


def _pod_of(kube: KubeSlurm, selector: str, index: int) -> str:
    """The name of the one pod of completion index ``index`` among those of ``selector``."""
    (name,) = [p["metadata"]["name"] for p in kube.objects(kinds.POD, selector)
               if p["metadata"]["annotations"].get(
                   "batch.kubernetes.io/job-completion-index") == str(index)]
    return name


def _evict(kube: KubeSlurm, name: str) -> None:
    kube.api().request("POST", f"/api/v1/namespaces/{kube.namespace}/pods/{name}/eviction",
                       body={"apiVersion": "policy/v1", "kind": "Eviction",
                             "metadata": {"name": name, "namespace": kube.namespace}})


def test_evicted_pod_of_a_requeue_job_runs_again(request: pytest.FixtureRequest,
                                                kubelet: Any) -> None:
    """A pod of a 2-node --requeue job evicted: node 1 tells node 0 it was stopped, node 0
    asks the API server (the job ServiceAccount: the workload lives on, so this was no
    cancel) and ends the run (slurmstepd's PREEMPTION line), the pod failure policy fails the
    Job, and the next look requeues the whole job as slurmctld does — the earlier run kept as
    the cluster ended it, PREEMPTED 0:0 whichever pod's failure failed the Job first (node 0's
    report is lost with its pod when node 1's did), the restart count raised."""
    kube: KubeSlurm = request.getfixturevalue("account_kube")
    kube.env["SBATCHK8S_REQUEUE_DELAY"] = "1"
    kube.script("evicted.sh", EVICTED)
    job_id = submitted_id(kube.run("sbatch", "evicted.sh").stdout)
    wait_until(lambda: len(_lines_of(kube, "evicted-runs.txt")) == 1, WAIT_S, "the first run")
    first_pods = _pod_uids(kube, job_id)
    node1 = _pod_of(kube, f"sbatch-k8s.io/job-id={job_id}", 1)
    _evict(kube, node1)
    wait_until(lambda: _looked_at(kube, job_id) and len(_lines_of(
        kube, "evicted-runs.txt")) == 2, WAIT_S, "the second run")
    assert _lines_of(kube, "evicted-runs.txt") == [f"run unset on evicted-{job_id}-0",
                                                   f"run 1 on evicted-{job_id}-0"]
    assert not first_pods & _pod_uids(kube, job_id)
    first = kube.read(f"evicted-{job_id}-0.out")
    assert re.search(rf"\*\*\* JOB {job_id} ON evicted-{job_id}-0 CANCELLED AT \S+ DUE TO "
                     r"PREEMPTION \*\*\*", first), first
    shown = kube.run("scontrol", "show", "job", str(job_id)).stdout
    assert "Restarts=1" in shown, shown
    assert _runs_in_sacct(kube, job_id, "-D")[0] == f"{job_id}|PREEMPTED|0:0"
    (kube.work / "go").write_text("")
    wait_until(lambda: _state(kube, job_id) == "COMPLETED", WAIT_S, "the end")
    assert _runs_in_sacct(kube, job_id, "-D") == [f"{job_id}|PREEMPTED|0:0",
                                                  f"{job_id}|COMPLETED|0:0"]


ELEMENT = r"""#!/bin/sh
#SBATCH -J element -o element-%A_%a-%r.out --array=0-1
echo "run ${SLURM_RESTART_COUNT:-unset} of $SLURM_ARRAY_TASK_ID" >> element-runs.txt
while [ ! -e go-$SLURM_ARRAY_TASK_ID ]; do sleep 0.2; done
"""


def _server_minor(kube: KubeSlurm) -> int:
    version = kube.api().request("GET", "/version") or {}
    return int("".join(c for c in str(version.get("minor", "0")) if c.isdigit()) or 0)


def test_evicted_pod_of_an_array_element_runs_again(kube: KubeSlurm, kubelet: Any) -> None:
    """A single-node array runs as one Indexed Job: an element's evicted pod is replaced by
    the Job controller (the Ignore rule), which counts the disruption on the new pod; its run
    is the element's restart — SLURM_RESTART_COUNT=1 and Restarts=1 — while the other
    element runs on untouched."""
    if _server_minor(kube) < 29:
        pytest.skip("the per-index failure counts need backoffLimitPerIndex (Kubernetes 1.29)")
    kube.script("element.sh", ELEMENT)
    job_id = submitted_id(kube.run("sbatch", "element.sh").stdout)
    wait_until(lambda: len(_lines_of(kube, "element-runs.txt")) == 2, WAIT_S, "both runs")
    pod1 = _pod_of(kube, f"sbatch-k8s.io/array-job-id={job_id}", 1)
    _evict(kube, pod1)
    wait_until(lambda: "run 1 of 1" in _lines_of(kube, "element-runs.txt"), WAIT_S,
               "element 1 again")
    assert sorted(_lines_of(kube, "element-runs.txt")) == \
        ["run 1 of 1", "run unset of 0", "run unset of 1"]
    for task, restarts in ((1, 1), (0, 0)):
        shown = kube.run("scontrol", "show", "job", f"{job_id}_{task}").stdout
        assert f"Restarts={restarts}" in shown and "JobState=RUNNING" in shown, shown
    assert kube.read(f"element-{job_id}_1-1.out") == ""
    (kube.work / "go-0").write_text("")
    (kube.work / "go-1").write_text("")
    wait_until(lambda: _state(kube, job_id).split() == ["COMPLETED", "COMPLETED"], WAIT_S,
               "the end")
    shown = kube.run("scontrol", "show", "job", f"{job_id}_1").stdout
    assert "Restarts=1" in shown, shown


def test_evicted_pod_of_a_no_requeue_job_ends_it(kube: KubeSlurm, kubelet: Any) -> None:
    kube.script("evicted.sh", EVICTED.replace("--requeue", "--no-requeue"))
    job_id = submitted_id(kube.run("sbatch", "evicted.sh").stdout)
    wait_until(lambda: len(_lines_of(kube, "evicted-runs.txt")) == 1, WAIT_S, "the first run")
    node0 = _pod_of(kube, f"sbatch-k8s.io/job-id={job_id}", 0)
    _evict(kube, node0)
    wait_until(lambda: _state(kube, job_id) == "PREEMPTED", WAIT_S, "the end")
    shown = kube.run("scontrol", "show", "job", str(job_id)).stdout
    assert "Restarts=0" in shown, shown
    assert _runs_in_sacct(kube, job_id, "-D") == [f"{job_id}|PREEMPTED|0:0"]
    assert len(_lines_of(kube, "evicted-runs.txt")) == 1


def test_a_job_failed_by_a_disrupted_pod_is_preempted_once_its_pods_are_gone() -> None:
    """The Job's Failed condition names the DisruptionTarget rule: the pods (evicted, or
    deleted by the Job controller) need not be there any more to tell why it ended."""
    from parsers.job_records import JobRecord, with_changes
    from sbatch_k8s.backends.kubernetes.history.records import live_record

    message = "Pod default/x-7-1-abcde has condition DisruptionTarget matching FailJob rule"
    failed = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x-7"},
              "spec": {}, "status": {"conditions": [
                  {"type": "Failed", "status": "True", "reason": "PodFailurePolicy",
                   "message": message, "lastTransitionTime": "2026-11-22T09:04:34Z"}]}}
    ran = with_changes(JobRecord(job_id=7, name="x", user="u", uid=1, group="g", gid=1,
                                 partition="debug", state="RUNNING"), start_time=10)
    assert live_record(ran, failed, [], 40).state == "PREEMPTED"
    failed["status"]["conditions"][0].update(reason="BackoffLimitExceeded", message="")
    assert live_record(ran, failed, [], 40).state == "FAILED"


def test_scancel_of_a_multi_node_job_is_a_plain_cancel(kube: KubeSlurm, kubelet: Any) -> None:
    """scancel deletes the workload: every pod gets SIGTERM, node 1's runtime tells node 0 it
    was stopped as an evicted one does — the job still ends with a cancel's line, not with
    PREEMPTION's."""
    kube.script("evicted.sh", EVICTED)
    job_id = submitted_id(kube.run("sbatch", "evicted.sh").stdout)
    wait_until(lambda: len(_lines_of(kube, "evicted-runs.txt")) == 1, WAIT_S, "the run")
    kube.run("scancel", str(job_id))
    wait_until(lambda: "CANCELLED AT" in kube.read(f"evicted-{job_id}-0.out"), WAIT_S,
               "the cancel line")
    wait_until(lambda: not kube.objects(kinds.POD, f"sbatch-k8s.io/job-id={job_id}"), WAIT_S,
               "the pods gone")
    out = kube.read(f"evicted-{job_id}-0.out")
    assert re.search(rf"\*\*\* JOB {job_id} ON evicted-{job_id}-0 CANCELLED AT \S+ \*\*\*",
                     out), out
    assert _runs_in_sacct(kube, job_id, "-D")[0].startswith(f"{job_id}|CANCELLED")
