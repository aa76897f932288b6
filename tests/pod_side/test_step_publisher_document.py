"""What node 0 publishes in its record while the job runs
(:mod:`sbatch_k8s.runtime.cluster.step_publisher`): running steps without a state, ended steps read
from the step log as it grows (as node 0's report has them), bounded in count and bytes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

from sbatch_k8s.runtime.batch_host.step_log import step_entries
from sbatch_k8s.runtime.cluster.step_publisher import (
    DOCUMENT_LIMIT,
    ENDED_LIMIT,
    EndedSteps,
    document,
    key_value,
)


def _start(step_id: int, name: str = "python", nodes: Any = ("pod-0",)) -> Dict[str, Any]:
    return {"event": "start", "step_id": step_id, "name": name, "time": 1000 + step_id,
            "nodes": list(nodes), "ntasks": 1}


def _end(step_id: int, exit_code: int = 0) -> Dict[str, Any]:
    return {"event": "end", "step_id": step_id, "time": 1001 + step_id,
            "state": "FAILED" if exit_code else "COMPLETED", "exit_code": exit_code,
            "signal": 0}


def _append(path: Path, *events: Dict[str, Any], tail: str = "") -> None:
    with path.open("a") as f:
        f.write("".join(json.dumps(e, sort_keys=True) + "\n" for e in events) + tail)


def test_ended_steps_are_entries_as_in_the_report_and_read_as_the_log_grows(
        tmp_path: Path) -> None:
    log = tmp_path / "steps.jsonl"
    ended = EndedSteps(str(log))
    assert ended.read() == []  # no log yet
    _append(log, _start(0, "true"), _end(0), _start(1, "sh"))
    assert [e["id"] for e in ended.read()] == ["0"]
    half = json.dumps(_end(1, 3))
    _append(log, tail=half[:10])  # a line being written waits for its end
    assert [e["id"] for e in ended.read()] == ["0"]
    _append(log, tail=half[10:] + "\n")
    assert ended.read() == step_entries(str(log), 9999)
    assert ended.read()[1] == {"id": "1", "name": "sh", "state": "FAILED", "exit_code": 3,
                               "start": 1001, "end": 1002, "node_list": "pod-0",
                               "node_count": 1, "ntasks": 1, "cpus": 1}
    assert ended.starts == {} and ended.offset == log.stat().st_size


def test_running_steps_have_no_state_and_a_step_read_ended_is_shown_ended(
        tmp_path: Path) -> None:
    log = tmp_path / "steps.jsonl"
    _append(log, _start(0), _start(1), _end(0, 2))
    running = {0: dict(_start(0), holds=[[0, 1]]), 1: dict(_start(1), holds=[[0, 1]])}
    entries = document(running, EndedSteps(str(log)).read())
    assert [(e["id"], e.get("state"), e.get("exit_code")) for e in entries] == [
        ("0", "FAILED", 2), ("1", None, None)]
    assert entries[1] == {"id": "1", "name": "python", "start": 1001, "node_list": "pod-0",
                          "node_count": 1, "ntasks": 1, "cpus": 1}
    assert key_value({}, []) is None


def test_the_ended_steps_of_the_highest_ids_are_kept(tmp_path: Path) -> None:
    log = tmp_path / "steps.jsonl"
    ended = EndedSteps(str(log))
    events: List[Dict[str, Any]] = [_start(0)]  # step 0 runs on, and ends last
    for step_id in range(1, 3 * ENDED_LIMIT):
        events += [_start(step_id), _end(step_id)]
    _append(log, *events)
    first = [int(e["id"]) for e in ended.read()]
    assert first == list(range(2 * ENDED_LIMIT, 3 * ENDED_LIMIT))
    _append(log, _end(0))
    assert [int(e["id"]) for e in ended.read()] == first  # too low an id to be kept
    assert len(ended.ended) == ENDED_LIMIT and ended.starts == {}


def test_the_document_stays_within_its_byte_limit(tmp_path: Path) -> None:
    """Steps on every other node of a big job (long node lists): the ended steps of the
    lowest ids go first, then the running ones started first."""
    log = tmp_path / "steps.jsonl"
    nodes = [f"llm-123456-worker-{i}" for i in range(0, 400, 2)]
    events: List[Dict[str, Any]] = []
    for step_id in range(ENDED_LIMIT):
        events += [_start(step_id, nodes=nodes), _end(step_id)]
    _append(log, *events)
    running = {i: _start(i, nodes=nodes) for i in range(ENDED_LIMIT, ENDED_LIMIT + 50)}
    text = key_value(running, EndedSteps(str(log)).read())
    assert text is not None and len(text) <= DOCUMENT_LIMIT
    ids = [int(e["id"]) for e in json.loads(text)]
    assert ids == sorted(ids) and ids[-1] == ENDED_LIMIT + 49
    assert ids[0] > 0  # the first ended steps made room
