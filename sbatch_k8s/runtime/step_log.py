"""Node 0's step log (``steps.jsonl``), read back: for the backends, and for the job's result.

:class:`~sbatch_k8s.runtime.steps.StepRegistry` appends one ``start`` and one ``end`` event
per step. :func:`read_step_log` is the one reader. :func:`result_message` is what node 0
leaves as the job's result (``result.json``, and in pods ``/dev/termination-log``, which
Kubernetes copies into the pod's status and the login side turns into the job's record): the
job's state, exit code, signal and reason, its start and end, and its steps as compact entries
(keys ``id name state exit_code exit_signal start end node_list node_count ntasks cpus``,
zero values left out). Kubernetes keeps at most :data:`TERMINATION_LIMIT` bytes of it, so
the ``batch`` step and the *last* numbered steps are kept and ``steps_dropped`` says how many
earlier ones did not fit.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional, Tuple

from sbatch_k8s.runtime.oom import OUT_OF_MEMORY

#: Bytes of a container's termination message Kubernetes keeps.
TERMINATION_LIMIT = 4096
#: Longest step name kept in the message (srun's command name).
NAME_LIMIT = 64
#: A step still running when the job ended was killed with it.
KILLED = {"state": "CANCELLED", "exit_code": 0, "signal": 9}


def read_step_log(path: str) -> Tuple[Dict[int, Dict[str, Any]], Dict[int, Dict[str, Any]]]:
    """Node 0's step log (``steps.jsonl``): the ``start`` and the ``end`` event of each step,
    by step id, in the order the steps started."""
    try:
        with open(path) as f:
            events = [json.loads(line) for line in f if line.strip()]
    except OSError:
        events = []
    starts = {e["step_id"]: e for e in events if e.get("event") == "start"}
    ends = {e["step_id"]: e for e in events if e.get("event") == "end"}
    return starts, ends


def _compact(entry: Mapping[str, Any]) -> Dict[str, Any]:
    """``entry`` without its zero, empty and None values."""
    return {k: v for k, v in entry.items() if v not in (None, 0, "")}


def step_entry(began: Mapping[str, Any], ended: Mapping[str, Any]) -> Dict[str, Any]:
    """One numbered step as a compact entry: its ``start`` and its ``end`` event."""
    from parsers.values.hostlist import compress_hostlist

    nodes = began.get("nodes") or []
    return _compact({
        "id": str(began["step_id"]), "name": str(began.get("name", ""))[:NAME_LIMIT],
        "state": ended.get("state", "COMPLETED"),
        "exit_code": int(ended.get("exit_code") or 0),
        "exit_signal": int(ended.get("signal") or 0), "start": began.get("time"),
        "end": ended.get("time"), "node_list": compress_hostlist(nodes),
        "node_count": len(nodes), "ntasks": began.get("ntasks", 0),
        "cpus": began.get("ntasks", 0)})


def step_entries(path: str, end: int) -> List[Dict[str, Any]]:
    """The numbered steps of the log as compact entries, in id order; a step with no end
    event ended with the job (CANCELLED by SIGKILL at ``end``)."""
    starts, ends = read_step_log(path)
    return [step_entry(began, ends.get(step_id) or dict(KILLED, time=end))
            for step_id, began in sorted(starts.items())]


def batch_entry(result: Mapping[str, Any], start: Optional[int], end: int) -> Dict[str, Any]:
    """The batch step: the script's exit (killed by a signal: CANCELLED, a non-zero exit:
    FAILED; out of memory as the job), over the job's time."""
    state = OUT_OF_MEMORY if result.get("state") == OUT_OF_MEMORY else \
        "CANCELLED" if result.get("signal") else (
            "FAILED" if result.get("exit_code") else "COMPLETED")
    return _compact({"id": "batch", "name": "batch", "state": state,
                     "exit_code": result.get("exit_code"), "exit_signal": result.get("signal"),
                     "start": start, "end": end})


def _text(message: Mapping[str, Any]) -> str:
    return json.dumps(message, sort_keys=True, separators=(",", ":"))


def result_message(result: Mapping[str, Any], start: Optional[int], end: int,
                   steps: List[Dict[str, Any]], limit: int = TERMINATION_LIMIT) -> str:
    """The job's result as JSON of at most ``limit`` bytes: ``result``'s keys, ``start_time``,
    ``end_time`` and ``steps`` (``batch`` first, then the last numbered steps that fit, with
    ``steps_dropped`` counting the others)."""
    head = dict(result, start_time=start, end_time=end)
    batch = batch_entry(result, start, end)
    room = limit - len(_text(dict(head, steps=[batch], steps_dropped=len(steps))))
    kept = len(steps) - _count_over(steps, room)
    while True:
        dropped = len(steps) - kept
        message = dict(head, steps=[batch] + steps[dropped:])
        if dropped:
            message["steps_dropped"] = dropped
        text = _text(message)
        if len(text.encode()) <= limit or kept == 0:
            return text
        kept -= 1


def _count_over(steps: List[Dict[str, Any]], room: int) -> int:
    """How many of the first ``steps`` must go so that the rest fit in ``room`` bytes."""
    fitting = 0
    for step in reversed(steps):
        room -= len(_text(step)) + 1
        if room < 0:
            break
        fitting += 1
    return len(steps) - fitting
