"""scancel's requests to a running job on Kubernetes, and node 0's watch for them.

On a cluster the login side cannot open a connection to a pod's agent (pod addresses are not
reachable from a laptop), and job pods get no API permissions. So ``scancel --signal``,
``-b``, ``-f`` and ``scancel <job>.<step>`` append a request to an annotation
(:data:`ANNOTATION`) of the job's node-0 pod; the kubelet projects that annotation into a
downwardAPI volume file (:data:`REQUESTS_FILE`) and rewrites the file when the annotation
changes (a real kubelet within its sync period: about a minute by default). Node 0's runtime
stats the file every :data:`POLL_S` seconds and carries out each request it has not seen
yet, exactly as the local backend's message to node 0
(:meth:`sbatch_k8s.runtime.batch_host.batch_step.BatchHost.handle_cancel`): node 0 signals the batch
shell itself and every node's tasks through its control connections, or asks a step's srun to cancel
the step (SIGKILL, with slurmstepd's CANCELLED line).

The annotation's value is a JSON list, oldest first, of requests
``{"seq": n, "signal": number or null, "target": t}`` (and ``"step": id`` for the target
``step``); :data:`TARGETS` says what each target reaches. ``scontrol requeue`` writes the
target ``requeue`` (no signal): node 0 ends the job as a cancel does, its line saying ``DUE TO
JOB REQUEUE`` as slurmstepd's does (the login side then replaces the workload). Only the newest
:data:`MAX_REQUESTS` are kept; ``seq`` grows by one per request, so node 0 knows which ones
it has carried out.
"""

from __future__ import annotations

from parsers.vocabulary import (
    SCANCEL_REQUESTS,
    CONTROL_DIR,
    CONTROL_KEY,
)
import asyncio
import json
import os
from typing import Any, Callable, Dict, List, Mapping, Optional, Set, Tuple

from sbatch_k8s.runtime.agent.service import log

#: The pod annotation scancel writes (translators.metadata.SCANCEL_REQUESTS).
ANNOTATION = SCANCEL_REQUESTS
#: Where every pod sees :data:`ANNOTATION`: a downwardAPI volume
#: (translators.storage.CONTROL_DIR and CONTROL_KEY).
REQUESTS_KEY = CONTROL_KEY
REQUESTS_FILE = f"{CONTROL_DIR}/{REQUESTS_KEY}"
#: How often node 0 stats the file.
POLL_S = 0.5
#: Requests kept in the annotation (the oldest are dropped).
MAX_REQUESTS = 64
#: The target of ``scontrol requeue``'s request.
REQUEUE = "requeue"

#: Target → (``batch``, ``full``) of node 0's cancel message: ``steps`` is every task of
#: every step (``scancel --signal``), ``batch`` the batch shell alone, not its children
#: (``-b``), ``full`` the batch shell, its children and every step (``-f``); ``step`` is one
#: step (``scancel 12.3``: cancelled without a signal, signalled with one); ``requeue`` ends
#: the whole job for ``scontrol requeue``.
TARGETS: Dict[str, Tuple[bool, bool]] = {
    "steps": (False, False),
    "batch": (True, False),
    "full": (False, True),
    "step": (False, False),
    REQUEUE: (False, False),
}

Deliver = Callable[[Dict[str, Any]], None]


def target_of(batch: bool, full: bool, step: Optional[int]) -> str:
    """The target of scancel's options: one step, else ``-f``, else ``-b``, else steps."""
    if step is not None:
        return "step"
    return "full" if full else "batch" if batch else "steps"


def read_requests(text: Optional[str]) -> List[Dict[str, Any]]:
    """The well-formed requests of an annotation value, by ``seq`` (others are skipped: the
    annotation is anyone's to edit)."""
    try:
        items = json.loads(text) if text else []
    except ValueError:
        return []
    requests = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or item.get("target") not in TARGETS:
            continue
        seq, signum, step = item.get("seq"), item.get("signal"), item.get("step")
        if not isinstance(seq, int) or not (signum is None or isinstance(signum, int)):
            continue
        if (item["target"] == "step") != isinstance(step, int):
            continue
        if signum is None and item["target"] not in ("step", REQUEUE):
            continue    # cancelling the whole job deletes its workload instead
        requests.append(item)
    return sorted(requests, key=lambda r: r["seq"])


def with_request(text: Optional[str], signum: Optional[int], target: str,
                 step: Optional[int] = None) -> str:
    """The annotation value ``text`` with one more request (the next ``seq``)."""
    requests = read_requests(text)
    request: Dict[str, Any] = {"seq": (requests[-1]["seq"] + 1) if requests else 1,
                               "signal": signum, "target": target}
    if target == "step":
        request["step"] = step
    kept = (requests + [request])[-MAX_REQUESTS:]
    return json.dumps(kept, separators=(",", ":"))


def cancel_message(request: Mapping[str, Any]) -> Dict[str, Any]:
    """The request as the local backend's cancel message to node 0."""
    batch, full = TARGETS[request["target"]]
    message: Dict[str, Any] = {"type": "cancel", "signal": request["signal"],
                               "batch": batch, "full": full}
    if request["target"] == "step":
        message["step"] = request["step"]
    if request["target"] == REQUEUE:
        message.update(signal=None, requeue=True)
    return message


def _signature(path: str) -> Optional[Tuple[int, int, int, int]]:
    """What changes when the kubelet rewrites the file (it follows the kubelet's symlinks)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _read(path: str) -> Optional[str]:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


async def watch_requests(path: str, deliver: Deliver, poll_s: float = POLL_S) -> None:
    """Carry out each new request in ``path`` (oldest first) with ``deliver``, until
    cancelled. Requests already in the file when the watch starts are new too: they were
    written for this pod, which is this job's only node 0. A step is cancelled once (step
    ids are never reused): a second ``scancel 12.3`` is a no-op, as in Slurm."""
    done = 0
    seen: Optional[Tuple[int, int, int, int]] = None
    cancelled_steps: Set[int] = set()
    while True:
        signature = _signature(path)
        if signature is not None and signature != seen:
            seen = signature
            for request in read_requests(_read(path)):
                if request["seq"] <= done:
                    continue
                done = request["seq"]
                if request["target"] == "step" and request["signal"] is None:
                    if request["step"] in cancelled_steps:
                        continue    # scancel again before the step ended: nothing more
                    cancelled_steps.add(request["step"])
                try:
                    deliver(cancel_message(request))
                except Exception as e:  # a bad request must not end the job
                    log(f"scancel request {request['seq']} failed: {e}")
        await asyncio.sleep(poll_s)


def start_watch(contract: str, deliver: Deliver,
                environ: Mapping[str, str]) -> "Optional[asyncio.Future[None]]":
    """Node 0 of a job in pods watches :data:`REQUESTS_FILE` (``SBATCHK8S_REQUESTS_FILE``
    overrides it); a local job gets scancel's messages over its socket instead (None)."""
    if contract == "local":
        return None
    path = environ.get("SBATCHK8S_REQUESTS_FILE", REQUESTS_FILE)
    return asyncio.ensure_future(watch_requests(path, deliver))
