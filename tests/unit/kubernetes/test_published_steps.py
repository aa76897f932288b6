"""The login side folding node 0's published steps into a cluster job's record
(:mod:`sbatch_k8s.backends.kubernetes.history.record_steps`): while the job runs, its running and
ended steps in id order after ``batch`` and ``extern``; once it ended, node 0's report is
authoritative and the published ended steps fill in only those it had no room for."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional

from parsers.job_records import JobRecord, StepRecord, build, missing_steps
from sbatch_k8s.backends.kubernetes.history.record_steps import published_steps
from sbatch_k8s.backends.kubernetes.history.records import (
    final_patch,
    live_record,
    record_config_map,
    record_from_config_map,
)
from sbatch_k8s.runtime.batch_host.step_log import reported_steps, result_message, step_entries
from sbatch_k8s.runtime.cluster.step_publisher import ENDED_LIMIT, EndedSteps, key_value
from tests.unit.kubernetes.cluster_objects import (
    T0_EPOCH,
    T1_EPOCH,
    all_running,
    pod,
    terminated,
    workload,
)

RESULT = {"state": "COMPLETED", "exit_code": 0, "signal": 0, "reason": "None"}
STORED = build(JobRecord, job_id=1234, name="llm", user="alice", uid=1000, group="alice",
               gid=1000, partition="gpu", state="PENDING", node_count=1)


def _log(path: Path, count: int, running: int = 0, first: int = T0_EPOCH + 10) -> None:
    """A step log of ``count`` steps (step 1 exits 3); the last ``running`` have not ended."""
    events: List[Dict[str, Any]] = []
    for i in range(count):
        events.append({"event": "start", "step_id": i, "name": "sh" if i == 1 else "true",
                       "time": first + i, "nodes": ["llm-1234-0"], "ntasks": 1})
        if i < count - running:
            events.append({"event": "end", "step_id": i, "time": first + i + 1,
                           "state": "FAILED" if i == 1 else "COMPLETED",
                           "exit_code": 3 if i == 1 else 0, "signal": 0})
    path.write_text("".join(json.dumps(e) + "\n" for e in events))


def _published(path: Path, running_ids: range) -> str:
    """What node 0 publishes for the log at ``path`` with ``running_ids`` still running."""
    starts = [json.loads(line) for line in path.read_text().splitlines()]
    running = {e["step_id"]: e for e in starts
               if e["event"] == "start" and e["step_id"] in running_ids}
    value = key_value(running, EndedSteps(str(path)).read())
    assert value is not None
    return value


def _record(published: str, report: Optional[str] = None) -> JobRecord:
    """The stored record as read from its ConfigMap holding ``published`` (and a report)."""
    cm = record_config_map(STORED, {"kind": "Job", "name": "llm-1234"})
    cm["data"]["running-steps.json"] = published
    if report is not None:
        cm["data"]["report.json"] = report
    return record_from_config_map(cm)[0]


def _listed(record: JobRecord) -> List[tuple]:
    return [(s.step_id, s.name, s.state, s.exit_code, s.start_time, s.end_time, s.node_list)
            for s in record.steps]


def test_a_running_job_lists_its_ended_steps_then_its_running_ones(tmp_path: Path) -> None:
    log = tmp_path / "steps.jsonl"
    _log(log, 3, running=1)
    stored = _record(_published(log, range(2, 3)))
    live = live_record(stored, workload("Job"), all_running("Job", 1), T0_EPOCH + 100)
    first = T0_EPOCH + 10
    assert live.state == "RUNNING"
    assert _listed(live) == [
        ("batch", "batch", "RUNNING", 0, T0_EPOCH, None, "llm-1234-0"),
        ("extern", "extern", "RUNNING", 0, T0_EPOCH, None, "llm-1234-0"),
        ("0", "true", "COMPLETED", 0, first, first + 1, "llm-1234-0"),
        ("1", "sh", "FAILED", 3, first + 1, first + 2, "llm-1234-0"),
        ("2", "true", "RUNNING", 0, first + 2, None, "llm-1234-0")]
    assert [s.step_id for s in live.steps if s.state == "RUNNING"] == ["batch", "extern", "2"]


def test_steps_of_the_run_before_a_requeue_are_not_listed(tmp_path: Path) -> None:
    log = tmp_path / "steps.jsonl"
    _log(log, 2, first=T0_EPOCH - 500)
    live = live_record(_record(_published(log, range(0))), workload("Job"),
                       all_running("Job", 1), T0_EPOCH + 100)
    assert [s.step_id for s in live.steps] == ["batch", "extern"]


def test_the_report_is_authoritative_once_the_job_ended(tmp_path: Path) -> None:
    """Published while step 2 ran; node 0's report has it ended, and is what is listed."""
    log = tmp_path / "steps.jsonl"
    _log(log, 3, running=1)
    published = _published(log, range(2, 3))
    _log(log, 3)
    text = result_message(RESULT, T0_EPOCH + 5, T1_EPOCH - 5,
                          step_entries(str(log), T1_EPOCH - 5))
    node0 = pod("Job", 0, "Succeeded", terminated(0, message=text))
    ended = live_record(_record(published), workload("Job"), [node0], T1_EPOCH + 10)
    assert ended.state == "COMPLETED" and ended.derived_exit_code == 3
    assert [(s.step_id, s.state, s.exit_code) for s in ended.steps] == [
        ("batch", "COMPLETED", 0), ("extern", "COMPLETED", 0), ("0", "COMPLETED", 0),
        ("1", "FAILED", 3), ("2", "COMPLETED", 0)]
    own = dict(json.loads(text), node_list="llm-1234-0", batch_host="llm-1234-0")
    assert _listed(_record(published, json.dumps(own))) == _listed(ended)  # report.json


def test_what_sacct_listed_while_the_job_ran_is_still_listed_after(tmp_path: Path) -> None:
    """1,000 steps: the report keeps the last few hundred (packed), the published document
    the last 100 ended; the final record keeps them all (the report's for the ids it has)
    and counts the rest dropped."""
    count = 1000
    log = tmp_path / "steps.jsonl"
    _log(log, count, running=1)
    published = _published(log, range(count - 1, count))
    while_running = live_record(_record(published), workload("Job"), all_running("Job", 1),
                                T0_EPOCH + 400)
    listed = [s.step_id for s in while_running.steps if s.step_id.isdigit()]
    assert listed == [str(i) for i in range(count - 1 - ENDED_LIMIT, count)]
    _log(log, count)
    text = result_message(RESULT, T0_EPOCH + 5, T1_EPOCH - 5,
                          step_entries(str(log), T1_EPOCH - 5))
    reported = [e["id"] for e in reported_steps(json.loads(text)) if e["id"] != "batch"]
    assert ENDED_LIMIT < len(reported) < count and reported[-1] == str(count - 1)
    final = _record(published, text)
    kept = [s for s in final.steps if s.step_id.isdigit()]
    first = min(int(reported[0]), count - 1 - ENDED_LIMIT)
    assert [s.step_id for s in kept] == [str(i) for i in range(first, count)]
    assert kept[-1].state == "COMPLETED" and kept[-1].end_time is not None
    written = json.loads(final_patch(final)["data"]["record.json"])
    assert written["steps_dropped"] == first
    assert "running-steps.json" in final_patch(final)["data"]  # removed (set to None)


def test_published_steps_tolerates_any_text_and_dropped_steps_counts_gaps() -> None:
    assert published_steps("not json") == () == published_steps('{"id": "0"}')
    assert [(s.step_id, s.state) for s in published_steps(
        '[{"id": "0", "state": "FAILED"}, {"id": "1"}, {"id": "batch"}, 7]')] == [
        ("0", "FAILED"), ("1", "RUNNING")]
    usage = '{"n": 1, "u": 1.5, "s": 0.5}'
    batch = [s for s in published_steps(f'[{{"id": "batch", "usage": {usage}}}, {{"id": "0"}}]')
             if s.step_id == "batch"]
    assert batch[0].usage is not None and batch[0].usage.total_cpu == 2.0
    steps = [build(StepRecord, step_id=i, name="", state="COMPLETED")
             for i in ("batch", "0", "1", "5", "6")]
    assert missing_steps(steps) == 3 and missing_steps(steps[:1]) == 0
