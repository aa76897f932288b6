"""Pod and container status, shaped as a kubelet reports them (pure functions).

Phases follow the kubelet's rule: ``Pending`` until the init containers have completed and
every container has started; ``Running`` while any container runs (or will be restarted);
once all have terminated for good, ``Succeeded`` if every one exited 0, else ``Failed``.
Condition transition times change only when a condition's status does.
"""

from __future__ import annotations

import datetime
from typing import Any, Dict, List, Optional

CONDITION_TYPES = ("PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready",
                   "PodScheduled")
DEADLINE_MESSAGE = "Pod was active on the node longer than the specified deadline"


def rfc3339(timestamp: float) -> str:
    """A Unix time as Kubernetes writes times: ``2026-11-23T06:49:00Z``."""
    moment = datetime.datetime.fromtimestamp(timestamp, datetime.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def waiting(reason: str, message: Optional[str] = None) -> Dict[str, Any]:
    """``state.waiting``."""
    state: Dict[str, Any] = {"reason": reason}
    if message:
        state["message"] = message
    return {"waiting": state}


def running(started_at: float) -> Dict[str, Any]:
    """``state.running``."""
    return {"running": {"startedAt": rfc3339(started_at)}}


def terminated(exit_code: int, reason: Optional[str], started_at: float, finished_at: float,
               message: Optional[str] = None) -> Dict[str, Any]:
    """``state.terminated``; the reason defaults to ``Completed`` (exit 0) or ``Error``."""
    state: Dict[str, Any] = {
        "exitCode": exit_code,
        "reason": reason or ("Completed" if exit_code == 0 else "Error"),
        "startedAt": rfc3339(started_at), "finishedAt": rfc3339(finished_at),
    }
    if message:
        state["message"] = message
    return {"terminated": state}


def container_status(container: Dict[str, Any], pod_uid: str, state: Dict[str, Any],
                     restart_count: int, last_state: Optional[Dict[str, Any]] = None
                     ) -> Dict[str, Any]:
    """One ``containerStatuses`` entry."""
    is_running = "running" in state
    status: Dict[str, Any] = {
        "name": container["name"], "image": container.get("image", ""),
        "imageID": "", "ready": is_running, "started": is_running,
        "restartCount": restart_count, "state": state, "lastState": last_state or {},
    }
    if "waiting" not in state:
        status["containerID"] = f"test-kubelet://{pod_uid}/{container['name']}"
    return status


def pod_phase(init_done: bool, states: List[Dict[str, Any]], restarting: bool) -> str:
    """The pod phase from its containers' states."""
    if not init_done or any("waiting" in s for s in states):
        return "Running" if restarting else "Pending"
    if any("running" in s for s in states) or restarting:
        return "Running"
    codes = [s["terminated"]["exitCode"] for s in states]
    return "Succeeded" if all(code == 0 for code in codes) else "Failed"


def conditions(previous: List[Dict[str, Any]], now: float, sandbox_ready: bool,
               initialized: bool, containers_ready: bool) -> List[Dict[str, Any]]:
    """The pod's conditions, keeping each one's transition time unless its status changed
    (``PodScheduled`` is kept as the scheduler wrote it, or set True)."""
    by_type = {c.get("type"): c for c in previous or []}
    wanted = {
        "PodReadyToStartContainers": sandbox_ready, "Initialized": initialized,
        "ContainersReady": containers_ready, "Ready": containers_ready,
        "PodScheduled": True,
    }
    result = []
    for kind in CONDITION_TYPES:
        status = "True" if wanted[kind] else "False"
        old = by_type.get(kind)
        if old is not None and old.get("status") == status:
            result.append(old)
            continue
        if kind == "PodScheduled" and old is not None:
            result.append(old)
            continue
        condition = {"type": kind, "status": status, "lastProbeTime": None,
                     "lastTransitionTime": rfc3339(now)}
        if not wanted[kind] and kind in ("ContainersReady", "Ready"):
            condition["reason"] = "PodCompleted" if initialized else "ContainersNotReady"
        result.append(condition)
    extra = [c for t, c in by_type.items() if t not in CONDITION_TYPES]
    return result + extra


def termination_message(text: bytes, log_tail: Optional[bytes]) -> Optional[str]:
    """The container's termination message: its message file (at most 4096 bytes), or with
    ``FallbackToLogsOnError`` (``log_tail`` given) the last 80 lines / 2048 bytes of its log."""
    if text.strip():
        return text[:4096].decode(errors="replace")
    if log_tail:
        lines = log_tail.splitlines(keepends=True)[-80:]
        return b"".join(lines)[-2048:].decode(errors="replace")
    return None
