"""Node 0's result message (``/dev/termination-log``): its steps, its 4096-byte cap, and the
login side reading it back into the job's record."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List

from parsers.job_records import JobRecord, build
from sbatch_k8s.backends.kubernetes.history.records import final_patch, live_record
from sbatch_k8s.runtime.batch_host.batch_step import JobResult
from sbatch_k8s.runtime.agent.node_setup import NodeSettings
from sbatch_k8s.runtime.agent.node import write_result
from sbatch_k8s.runtime.batch_host.step_log import (
    TERMINATION_LIMIT,
    reported_steps,
    result_message,
    step_entries,
)
from tests.unit.kubernetes.cluster_objects import pod, terminated, workload

RESULT = {"state": "COMPLETED", "exit_code": 0, "signal": 0, "reason": "None"}


def write_log(path: Path, count: int, unfinished: int = 0) -> None:
    """A step log of ``count`` steps on two nodes; the last ``unfinished`` never ended."""
    lines: List[Dict[str, Any]] = []
    for i in range(count):
        lines.append({"event": "start", "step_id": i, "name": "python", "time": 1000 + i,
                      "nodes": ["llm-1234-0", "llm-1234-1"], "ntasks": 4})
        if i < count - unfinished:
            lines.append({"event": "end", "step_id": i, "time": 1001 + i,
                          "state": "FAILED" if i == 1 else "COMPLETED",
                          "exit_code": 3 if i == 1 else 0, "signal": 0})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_steps_become_compact_entries(tmp_path: Path) -> None:
    log = tmp_path / "steps.jsonl"
    write_log(log, 3, unfinished=1)
    assert step_entries(str(log), 2000) == [
        {"id": "0", "name": "python", "state": "COMPLETED", "start": 1000, "end": 1001,
         "node_list": "llm-1234-[0-1]", "node_count": 2, "ntasks": 4, "cpus": 4},
        {"id": "1", "name": "python", "state": "FAILED", "exit_code": 3, "start": 1001,
         "end": 1002, "node_list": "llm-1234-[0-1]", "node_count": 2, "ntasks": 4, "cpus": 4},
        {"id": "2", "name": "python", "state": "CANCELLED", "exit_signal": 9, "start": 1002,
         "end": 2000, "node_list": "llm-1234-[0-1]", "node_count": 2, "ntasks": 4,
         "cpus": 4}]
    assert step_entries(str(tmp_path / "missing.jsonl"), 2000) == []


def test_message_keeps_batch_and_last_steps_under_the_limit(tmp_path: Path) -> None:
    log = tmp_path / "steps.jsonl"
    write_log(log, 1000)
    text = result_message(RESULT, 990, 3000, step_entries(str(log), 3000))
    assert len(text.encode()) <= TERMINATION_LIMIT
    message = json.loads(text)
    ids = [s["id"] for s in reported_steps(message)]
    assert ids[0] == "batch" and ids[-1] == "999"
    assert message["steps_dropped"] == int(ids[1]) > 0
    assert ids[1:] == [str(i) for i in range(int(ids[1]), 1000)]
    assert len(ids) > 250            # packed: hundreds of steps where 26 fitted as they are


def test_thirty_steps_are_all_kept(tmp_path: Path) -> None:
    """Issue 15, item 14: a 30-step job without API access kept its last 26."""
    log = tmp_path / "steps.jsonl"
    write_log(log, 30)
    message = json.loads(result_message(RESULT, 990, 3000, step_entries(str(log), 3000)))
    assert [s["id"] for s in reported_steps(message)] == ["batch"] + [str(i) for i in
                                                                      range(30)]
    assert "steps_dropped" not in message
    assert {k: message[k] for k in RESULT} == RESULT
    assert (message["start_time"], message["end_time"]) == (990, 3000)


def test_small_message_drops_nothing() -> None:
    message = json.loads(result_message(dict(RESULT, state="FAILED", exit_code=2), 5, 9, []))
    assert "steps_dropped" not in message
    assert message["steps"] == [{"id": "batch", "name": "batch", "state": "FAILED",
                                 "exit_code": 2, "start": 5, "end": 9}]


def test_write_result_leaves_the_message_in_the_spool(tmp_path: Path) -> None:
    write_log(tmp_path / "steps.jsonl", 2)
    (tmp_path / "slurm_script").write_text("#!/bin/sh\n")
    os.utime(tmp_path / "slurm_script", (1234, 1234))
    settings = NodeSettings("local", str(tmp_path), "", 0, str(tmp_path), 0, 1.0, 1.0)
    write_result(settings, JobResult("FAILED", 3, 0, "NonZeroExitCode"),
                 ["llm-1234-0", "llm-1234-1"])
    message = json.loads((tmp_path / "result.json").read_text())
    assert message["node_list"] == "llm-1234-[0-1]"   # the login side may miss some pods
    assert (message["state"], message["exit_code"], message["signal"], message["reason"]) == \
        ("FAILED", 3, 0, "NonZeroExitCode")
    assert message["start_time"] == 1234 and message["end_time"] >= 1234
    assert [s["id"] for s in message["steps"]] == ["batch", "0", "1"]


def test_login_side_reads_a_capped_message_back(tmp_path: Path) -> None:
    log = tmp_path / "steps.jsonl"
    write_log(log, 1000)
    text = result_message(RESULT, 990, 3000, step_entries(str(log), 3000))
    node0 = pod("Job", 0, "Succeeded", terminated(0, message=text))
    stored = build(JobRecord, job_id=1234, name="llm", user="alice", uid=1000,
                   group="alice", gid=1000, partition="gpu", state="PENDING", node_count=2)
    others = [pod("Job", 1, "Succeeded", terminated(0))]
    record = live_record(stored, workload("Job"), [node0] + others, 4000)
    assert (record.state, record.start_time, record.end_time) == ("COMPLETED", 990, 3000)
    assert record.steps[0].step_id == "batch" and record.steps[-1].step_id == "999"
    kept = [s for s in record.steps if s.step_id.isdigit()]
    assert record.derived_exit_code == 0
    written = json.loads(final_patch(record)["data"]["record.json"])
    assert written["steps_dropped"] == 1000 - len(kept) == json.loads(text)["steps_dropped"]
