"""Record ConfigMaps: the manifest, the round trip, live overlays, the final patch, arrays."""

from __future__ import annotations

import json
from typing import Any, Dict, Mapping

import pytest

from parsers.job_records import JobRecord, StepRecord, build
from sbatch_k8s.backends.kubernetes.history.records import (
    final_patch,
    is_final,
    live_record,
    record_config_map,
    record_from_config_map,
)
from tests.unit.kubernetes.cluster_objects import (
    KINDS,
    NAME,
    SUCCEEDED,
    T0,
    T1,
    T0_EPOCH,
    T1_EPOCH,
    all_running,
    pod,
    report,
    running,
    terminated,
    workload,
)

NOW = T1_EPOCH + 60
REF = {"apiVersion": "batch/v1", "kind": "Job", "name": NAME, "namespace": "team-a"}
HOSTNAMES = {"Job": "llm-1234-[0-3]", "JobSet": "llm-1234-node-0-[0-3]",
             "PyTorchJob": "llm-1234-master-0,llm-1234-worker-[0-2]",
             "MPIJob": "llm-1234-launcher,llm-1234-worker-[0-2]"}
BATCH_HOSTS = {"Job": "llm-1234-0", "JobSet": "llm-1234-node-0-0",
               "PyTorchJob": "llm-1234-master-0", "MPIJob": "llm-1234-launcher"}


def submitted(job_id: int = 1234, **changes: Any) -> JobRecord:
    """A record as sbatch creates it."""
    return build(JobRecord, **dict(dict(
        job_id=job_id, name="llm", user="alice", uid=1000, group="alice", gid=1000,
        partition="gpu", state="PENDING", account="alice", submit_time=T0_EPOCH - 60,
        eligible_time=T0_EPOCH - 60, time_limit_min=60, node_count=4, cpus=32, batch_cpus=8,
        cluster="k8s"), **changes))


def merge(target: Mapping[str, Any], patch: Mapping[str, Any]) -> Dict[str, Any]:
    """RFC 7386 JSON merge patch, as the API server applies it."""
    out = dict(target)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def test_manifest_outlives_the_workload_and_is_findable() -> None:
    cm = record_config_map(submitted(), REF)
    meta = cm["metadata"]
    assert (cm["apiVersion"], cm["kind"], meta["name"]) == ("v1", "ConfigMap",
                                                           "sbatch-k8s-job-1234")
    assert "ownerReferences" not in meta and "annotations" not in meta
    assert meta["labels"] == {
        "sbatch-k8s.io/kind": "record", "sbatch-k8s.io/job-id": "1234",
        "sbatch-k8s.io/user": "alice", "sbatch-k8s.io/partition": "gpu",
        "sbatch-k8s.io/state": "active", "app.kubernetes.io/managed-by": "sbatch-k8s"}
    assert json.loads(cm["data"]["workload.json"]) == REF
    assert json.loads(cm["data"]["record.json"])["state"] == "PENDING"


def test_round_trip_keeps_every_field_and_step() -> None:
    steps = (StepRecord("batch", "batch", "COMPLETED", start_time=1, end_time=2,
                        node_list="llm-1234-0", node_count=1, ntasks=1, cpus=8),
             StepRecord("0", "python", "FAILED", exit_code=3, node_list="llm-1234-[0-3]",
                        node_count=4, ntasks=32, cpus=32))
    record = submitted(state="FAILED", exit_code=3, steps=steps, end_time=T1_EPOCH,
                       array_job_id=1230, array_task_id=4, comment="ünïcode")
    back, ref = record_from_config_map(record_config_map(record, REF))
    assert back == record and ref == REF


def test_older_and_newer_writers_are_read() -> None:
    cm = record_config_map(submitted(), REF)
    values = json.loads(cm["data"]["record.json"])
    values["a_field_from_the_future"] = 1
    del values["batch_cpus"]
    values["workload"] = REF
    old = {"metadata": {"name": "x"}, "data": {"record.json": json.dumps(values)}}
    record, ref = record_from_config_map(old)
    assert record.batch_cpus == 1 and ref == REF


def test_unreadable_record_names_the_config_map() -> None:
    with pytest.raises(ValueError, match="sbatch-k8s-job-9"):
        record_from_config_map({"metadata": {"name": "sbatch-k8s-job-9"},
                                "data": {"record.json": "{"}})


@pytest.mark.parametrize("kind", KINDS)
def test_running_job_shows_its_nodes_start_and_steps(kind: str) -> None:
    record = live_record(submitted(), workload(kind), all_running(kind, 4), NOW)
    assert (record.state, record.node_list, record.batch_host) == \
        ("RUNNING", HOSTNAMES[kind], BATCH_HOSTS[kind])
    assert record.start_time == T0_EPOCH and record.end_time is None
    assert [(s.step_id, s.state, s.node_list) for s in record.steps] == [
        ("batch", "RUNNING", BATCH_HOSTS[kind]), ("extern", "RUNNING", HOSTNAMES[kind])]
    assert not is_final(record)


@pytest.mark.parametrize("kind", KINDS)
def test_final_record_from_node_0_report(kind: str) -> None:
    steps = [{"id": "batch", "name": "batch", "state": "FAILED", "exit_code": 2,
              "start": T0_EPOCH + 5, "end": T1_EPOCH - 5},
             {"id": "7", "name": "torchrun", "state": "FAILED", "exit_code": 2,
              "start": T0_EPOCH + 9, "end": T1_EPOCH - 6, "node_list": HOSTNAMES[kind],
              "node_count": 4, "ntasks": 4, "cpus": 4}]
    pods = [pod(kind, 0, "Failed", terminated(2, report=report("FAILED", 2, 0,
                                                                "NonZeroExitCode", steps)))]
    pods += [pod(kind, i, "Succeeded", terminated(0)) for i in range(1, 4)]
    record = live_record(submitted(), workload(kind), pods, NOW)
    assert (record.state, record.exit_code, record.derived_exit_code) == ("FAILED", 2, 2)
    assert (record.start_time, record.end_time) == (T0_EPOCH + 5, T1_EPOCH - 5)
    assert [(s.step_id, s.state, s.exit_code, s.node_list, s.cpus) for s in record.steps] == [
        ("batch", "FAILED", 2, BATCH_HOSTS[kind], 8),
        ("extern", "COMPLETED", 0, HOSTNAMES[kind], 32),
        ("7", "FAILED", 2, HOSTNAMES[kind], 4)]
    patch = final_patch(record)
    assert patch["metadata"] == {"labels": {"sbatch-k8s.io/state": "FAILED"},
                                 "annotations": {"sbatch-k8s.io/end-time":
                                                 str(T1_EPOCH - 5)}}
    written = json.loads(patch["data"]["record.json"])
    assert written["steps_dropped"] == 7 and written["state"] == "FAILED"


def test_final_patch_applied_keeps_the_workload_reference() -> None:
    cm = record_config_map(submitted(), REF)
    pods = [pod("Job", i, "Succeeded", terminated(0, report=report("COMPLETED")) if i == 0
                else terminated(0)) for i in range(4)]
    final = live_record(submitted(), workload("Job", SUCCEEDED["Job"]), pods, NOW)
    assert is_final(final)
    stored, ref = record_from_config_map(merge(cm, final_patch(final)))
    assert stored == final and ref == REF
    assert live_record(stored, None, [], NOW + 3600) is stored


def test_job_that_vanished_unobserved_is_a_node_failure() -> None:
    running = live_record(submitted(), workload("Job"), all_running("Job", 4), NOW)
    gone = live_record(running, None, [], NOW + 7200)
    assert (gone.state, gone.reason, gone.end_time) == ("NODE_FAIL", "NodeDown", NOW + 7200)
    assert gone.start_time == T0_EPOCH and gone.node_list == "llm-1234-[0-3]"
    assert [(s.step_id, s.state) for s in gone.steps] == [("batch", "CANCELLED"),
                                                          ("extern", "COMPLETED")]
    never_ran = live_record(submitted(), None, [], NOW)
    assert (never_ran.state, never_ran.steps) == ("NODE_FAIL", ())


def test_workload_gone_but_pods_remain() -> None:
    pods = [pod("Job", 0, "Succeeded", terminated(0, report=report("COMPLETED")))] + \
        [pod("Job", i, "Succeeded", terminated(0)) for i in range(1, 4)]
    assert live_record(submitted(), None, pods, NOW).state == "COMPLETED"
    ending = [pod("Job", i, "Running", None, deleting=True) for i in range(4)]
    assert live_record(submitted(), None, ending, NOW).state == "COMPLETING"


def test_pending_record_has_no_nodes_or_steps() -> None:
    record = live_record(submitted(reason="JobHeldUser"), workload(
        "Job", suspend=True, annotations={"sbatch-k8s.io/hold": "user"}), [], NOW)
    assert (record.state, record.reason, record.priority, record.node_list, record.steps) == \
        ("PENDING", "JobHeldUser", 0, "", ())


@pytest.mark.parametrize("kind", KINDS)
def test_array_elements_are_separate_workloads(kind: str) -> None:
    """``--array=3-4`` on a multi-node job: job ids 1234 and 1235, one workload each."""
    records = {}
    for offset, task in enumerate((3, 4)):
        job_id = 1234 + offset
        name = f"llm-1234-{task}"
        labels = {"sbatch-k8s.io/array-job-id": "1234", "sbatch-k8s.io/array-task-id": str(task)}
        element = submitted(job_id, array_job_id=1234, array_task_id=task, node_count=2)
        cm = record_config_map(element, {"apiVersion": "batch/v1", "kind": kind,
                                         "name": name, "namespace": "team-a"})
        assert cm["metadata"]["name"] == f"sbatch-k8s-job-{job_id}"
        assert {k: cm["metadata"]["labels"][k] for k in labels} == labels
        pods = all_running(kind, 2) if task == 3 else []
        pods = [with_name(p, NAME, name) for p in pods]
        records[task] = live_record(element, workload(kind, labels=labels, name=name), pods,
                                    NOW)
    assert (records[3].state, records[3].job_id_text) == ("RUNNING", "1234_3")
    assert records[3].batch_host.startswith("llm-1234-3")
    assert (records[4].state, records[4].job_id_text) == ("PENDING", "1234_4")


def test_array_element_of_a_shared_indexed_job() -> None:
    """A single-node array run as one Indexed Job: element 1235 is completion index 1; the
    backend passes its pod alone (the workload's conditions speak for every element)."""
    element = submitted(1235, array_job_id=1234, array_task_id=8, node_count=1)
    mine = [pod("Job", 1, "Succeeded", terminated(0, report=report("COMPLETED")))]
    record = live_record(element, None, mine, NOW)
    assert (record.state, record.job_id_text, record.batch_host) == \
        ("COMPLETED", "1234_8", "llm-1234-1")


def test_restarts_made_inside_the_workload_count() -> None:
    """A JobSet's gang restart attempt and an array element's pods replaced after a
    disruption add to the record's restarts (scontrol's Restarts=), as node 0's runtime adds
    them to SLURM_RESTART_COUNT; the newest pod of node 0 tells."""
    gang = all_running("JobSet", 4)
    gang[0]["metadata"]["labels"]["jobset.sigs.k8s.io/restart-attempt"] = "2"
    record = live_record(submitted(restarts=1), workload("JobSet"), gang, NOW)
    assert (record.state, record.restarts) == ("RUNNING", 3)
    element = submitted(1235, array_job_id=1234, array_task_id=8, node_count=1)
    first = pod("Job", 1, "Failed", terminated(143), created=T0)
    second = pod("Job", 1, "Running", running(), created=T1)
    second["metadata"]["annotations"][
        "batch.kubernetes.io/job-index-ignored-failure-count"] = "1"
    assert live_record(element, None, [first, second], NOW).restarts == 1
    assert live_record(element, None, [first], NOW).restarts == 0


def with_name(obj: Dict[str, Any], old: str, new: str) -> Dict[str, Any]:
    """``obj`` with every ``old`` name prefix replaced (an array element's own names)."""
    return json.loads(json.dumps(obj).replace(old, new))


def test_the_job_of_an_srun_outside_a_job_is_no_batch_job() -> None:
    """srun's own job keeps BatchFlag=0 in its record, and is never requeued (slurmctld
    requeues batch jobs only: ``Only batch jobs are accepted or processed``)."""
    from sbatch_k8s.backends.base import BATCH_ONLY
    from sbatch_k8s.backends.kubernetes.control.job_control import requeue_job

    record = submitted(batch_flag=False, state="RUNNING")
    stored, _ = record_from_config_map(record_config_map(record, REF))
    assert stored.batch_flag is False and stored.requeue is True
    assert requeue_job(None, stored, REF, "team-a") == BATCH_ONLY  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", KINDS)
def test_a_job_whose_pods_go_one_by_one_keeps_all_its_nodes(kind: str) -> None:
    """Issue 15, item 15: a 2-node job that timed out, node 1's pod already deleted when a
    command first looked, listed only node 0 while its step showed both. Node 0's report
    names every node; without it, an Indexed Job's names follow its pods'."""
    both = {"Job": "llm-1234-[0-1]", "JobSet": "llm-1234-node-0-[0-1]",
            "PyTorchJob": "llm-1234-master-0,llm-1234-worker-0",
            "MPIJob": "llm-1234-launcher,llm-1234-worker-0"}[kind]
    steps = [{"id": "0", "name": "python", "state": "CANCELLED", "exit_signal": 15,
              "start": T0_EPOCH + 9, "end": T1_EPOCH - 6, "node_list": both,
              "node_count": 2, "ntasks": 2, "cpus": 2}]
    message = dict(report("TIMEOUT", 0, 15, "TimeLimit", steps), node_list=both)
    node0 = pod(kind, 0, "Failed", terminated(143, report=message), deleting=True)
    stored = submitted(node_count=2, cpus=16)
    record = live_record(stored, workload(kind), [node0], NOW)
    assert (record.state, record.node_list) == ("TIMEOUT", both)
    assert [(s.step_id, s.node_list) for s in record.steps if s.step_id != "batch"] == [
        ("extern", both), ("0", both)]
    # an older runtime's report without its nodes: an Indexed Job's pods are named by index
    older = pod(kind, 0, "Failed", terminated(143, report=report("TIMEOUT", 0, 15,
                                                                  "TimeLimit", steps)))
    record = live_record(stored, workload(kind), [older], NOW)
    if kind in ("Job", "JobSet"):
        assert record.node_list == both
