"""Node 0's step log (``steps.jsonl``), read back: for the backends, and for the job's result.

:class:`~sbatch_k8s.runtime.batch_host.step_registry.StepRegistry` appends one ``start`` and one
``end`` event per step. :func:`read_step_log` is the one reader. :func:`result_message` is what node
0 leaves as the job's result (``result.json``, and in pods ``/dev/termination-log``, which
Kubernetes copies into the pod's status and the login side turns into the job's record): the job's
state, exit code, signal and reason, its start and end, its nodes (``node_list``: the login side may
find some of their pods gone already), and its steps as compact entries (keys ``id name state
exit_code exit_signal start end node_list node_count ntasks cpus``, zero values left out).
Kubernetes keeps at most :data:`TERMINATION_LIMIT` bytes of it: when the steps do not fit as they
are, the numbered ones go packed (``steps_packed``: their JSON list, zlib-compressed, base64 — a few
hundred similar steps fit), and when even that is too much, the ``batch`` step and the *last*
numbered steps are kept and ``steps_dropped`` says how many earlier ones did not fit.
:func:`reported_steps` reads the steps back, packed or not.
"""

from __future__ import annotations

import base64
import json
import os
import zlib
from typing import Any, Dict, List, Mapping, Optional, Tuple

from sbatch_k8s.runtime.stepd.oom import OUT_OF_MEMORY

#: Bytes of a container's termination message Kubernetes keeps.
TERMINATION_LIMIT = 4096
#: Longest step name kept in the message (srun's command name).
NAME_LIMIT = 64
#: The batch script's key among the running steps' usage (:func:`usage_path`).
BATCH = "batch"
#: A step still running when the job ended was killed with it.
KILLED = {"state": "CANCELLED", "exit_code": 0, "signal": 9}


def _events(path: str) -> List[Dict[str, Any]]:
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except OSError:
        return []


def usage_path(log_path: str) -> str:
    """Where node 0 keeps its running steps' latest usage, beside the step log: one JSON
    object ``{step id: usage}`` (``"batch"`` for the script), rewritten whole at each
    change — an append per sample would grow the log every sampling interval."""
    return os.path.join(os.path.dirname(log_path), "usage.json")


def latest_usage(log_path: str) -> Dict[str, Any]:
    """``{step id (text): usage}`` of the running steps (empty when none was sampled)."""
    try:
        with open(usage_path(log_path)) as f:
            found = json.load(f)
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def batch_usage(path: str) -> Optional[Dict[str, Any]]:
    """The batch script's latest usage (None: not sampled yet)."""
    return latest_usage(path).get(BATCH)


def read_step_log(path: str) -> Tuple[Dict[int, Dict[str, Any]], Dict[int, Dict[str, Any]]]:
    """Node 0's step log (``steps.jsonl``): the ``start`` and the ``end`` event of each step,
    by step id, in the order the steps started; a running step's latest usage (for
    ``sstat``: :func:`latest_usage`) is its start event's ``usage``."""
    events = _events(path)
    starts = {e["step_id"]: e for e in events if e.get("event") == "start"}
    ends = {e["step_id"]: e for e in events if e.get("event") == "end"}
    usage = latest_usage(path) if starts else {}
    for step_id, began in starts.items():
        if str(step_id) in usage:
            began["usage"] = usage[str(step_id)]
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
        "cpus": began.get("ntasks", 0), "usage": ended.get("usage") or began.get("usage")})


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
                     "start": start, "end": end, "usage": result.get("usage")})


def _text(message: Mapping[str, Any]) -> str:
    return json.dumps(message, sort_keys=True, separators=(",", ":"))


def result_message(result: Mapping[str, Any], start: Optional[int], end: int,
                   steps: List[Dict[str, Any]], limit: int = TERMINATION_LIMIT,
                   node_list: str = "") -> str:
    """The job's result as JSON of at most ``limit`` bytes: ``result``'s keys, ``start_time``,
    ``end_time``, ``node_list`` (when given) and ``steps`` (``batch`` first, then the
    numbered steps: all of them, as they are or packed, else the last that fit packed, with
    ``steps_dropped`` counting the others)."""
    head = {k: v for k, v in dict(result, start_time=start, end_time=end).items()
            if k != "usage"}
    if node_list:
        head["node_list"] = node_list
    batch = batch_entry(result, start, end)
    text = _text(dict(head, steps=[batch] + steps))
    if len(text.encode()) <= limit:
        return text
    kept = _most_that_fit(head, batch, steps, limit)
    message = dict(head, steps=[batch])
    if kept:
        message["steps_packed"] = pack_steps(steps[len(steps) - kept:])
    if kept < len(steps):
        message["steps_dropped"] = len(steps) - kept
    return _text(message)


def _most_that_fit(head: Mapping[str, Any], batch: Mapping[str, Any],
                   steps: List[Dict[str, Any]], limit: int) -> int:
    """How many of the last ``steps``, packed, fit in the message (a binary search: the
    packed size grows with the count)."""
    def fits(count: int) -> bool:
        message = dict(head, steps=[batch], steps_dropped=len(steps))
        if count:
            message["steps_packed"] = pack_steps(steps[len(steps) - count:])
        return len(_text(message).encode()) <= limit

    low, high = 0, len(steps)
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low


def pack_steps(steps: List[Dict[str, Any]]) -> str:
    """Steps as ``steps_packed`` holds them: their JSON list, zlib-compressed, base64."""
    return base64.b64encode(zlib.compress(_text_list(steps).encode(), 9)).decode("ascii")


def _text_list(steps: List[Dict[str, Any]]) -> str:
    return json.dumps(steps, sort_keys=True, separators=(",", ":"))


def reported_steps(report: Mapping[str, Any]) -> List[Mapping[str, Any]]:
    """The steps of node 0's result: those of ``steps`` and the packed ones (empty when the
    packed text cannot be read: a result must stay readable whatever a key holds)."""
    entries: List[Mapping[str, Any]] = [e for e in report.get("steps") or []
                                        if isinstance(e, dict)]
    packed = report.get("steps_packed")
    if isinstance(packed, str) and packed:
        try:
            unpacked = json.loads(zlib.decompress(base64.b64decode(packed)).decode())
        except (ValueError, zlib.error, UnicodeDecodeError):
            unpacked = []
        entries += [e for e in unpacked if isinstance(e, dict)]
    return entries
