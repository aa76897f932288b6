"""Node 0 with API access: its running steps published in the job's record, for ``squeue -s``.

Slurm's ``squeue -s`` lists the steps slurmctld knows; here only node 0's step registry
(:class:`~sbatch_k8s.runtime.steps.StepRegistry`) knows them. When the pod runs as the job
ServiceAccount (:func:`sbatch_k8s.runtime.job_end.api_for`), node 0 keeps its running
numbered steps in the record ConfigMap's :data:`RUNNING_STEPS_KEY` (the ``batch`` and
``extern`` steps the login side makes from the job itself): a JSON list of compact entries
as in the termination message (keys ``id name start node_list node_count ntasks cpus``, see
:mod:`sbatch_k8s.runtime.step_log`), written by a JSON merge patch of that key alone; no
step running: the key is removed. The login side reads it from the records it lists anyway
(:mod:`sbatch_k8s.backends.kubernetes.record_steps`).

The registry only hands a snapshot to :meth:`StepPublisher.changed` (a dict copy, on the
event loop); one background thread writes. A burst of changes (a script starting a hundred
``srun &``) becomes few patches: the thread waits :data:`COALESCE_S` after a change and
leaves at least :data:`MIN_INTERVAL_S` between patches, writes only what differs from what it
last wrote, and keeps the last :data:`STEP_LIMIT` started steps. Nothing here may slow or fail
the job: a failed patch is one line in the node's log (then silence until one succeeds; it is
tried again after a pause that doubles up to :data:`RETRY_MAX_S`), and
:meth:`StepPublisher.close` waits at most :data:`CLOSE_WAIT_S` for the last patch.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Callable, Dict, List, Mapping, Optional

from sbatch_k8s.runtime.job_end import RECORD_PREFIX, api_for
from sbatch_k8s.runtime.kube_api import KubeApi

#: The record ConfigMap's data key of node 0's running steps.
RUNNING_STEPS_KEY = "running-steps.json"
#: After a change, wait this long for more before writing (a burst becomes one patch).
COALESCE_S = 0.5
#: At least this long between two patches.
MIN_INTERVAL_S = 1.0
#: At most this many steps (the last started) are published.
STEP_LIMIT = 200
#: Longest step name kept (as in the termination message).
NAME_LIMIT = 64
#: Longest pause before trying a failed patch again (the pause doubles from
#: :data:`MIN_INTERVAL_S`).
RETRY_MAX_S = 30.0
#: How long the job's end waits for the last patch.
CLOSE_WAIT_S = 2.0

#: Step id → the registry's record of a running step (its ``info`` plus ``step_id``, ``time``).
Running = Mapping[int, Mapping[str, Any]]


def running_entries(running: Running) -> List[Dict[str, Any]]:
    """The running steps as compact entries, in id order (the last :data:`STEP_LIMIT`)."""
    from parsers.values.hostlist import compress_hostlist

    entries = []
    for step_id in sorted(running)[-STEP_LIMIT:]:
        step = running[step_id]
        nodes = list(step.get("nodes") or [])
        entry = {"id": str(step_id), "name": str(step.get("name", ""))[:NAME_LIMIT],
                 "start": step.get("time"), "node_list": compress_hostlist(nodes),
                 "node_count": len(nodes), "ntasks": step.get("ntasks", 0),
                 "cpus": step.get("ntasks", 0)}
        entries.append({k: v for k, v in entry.items() if v not in (None, 0, "")})
    return entries


def key_value(running: Running) -> Optional[str]:
    """:data:`RUNNING_STEPS_KEY`'s value for ``running``; None (the key removed) for none."""
    if not running:
        return None
    return json.dumps(running_entries(running), sort_keys=True, separators=(",", ":"))


class StepPublisher:
    """Writes the running steps of job ``job_id`` into its record (module docstring)."""

    def __init__(self, api: KubeApi, namespace: str, job_id: int,
                 log: Callable[[str], None]) -> None:
        self.api = api
        self.path = f"/api/v1/namespaces/{namespace}/configmaps/{RECORD_PREFIX}{job_id}"
        self.job_id = job_id
        self.log = log
        self.patches = 0
        self._condition = threading.Condition()
        self._pending: Optional[Dict[int, Mapping[str, Any]]] = None
        self._closing = False
        self._written: Optional[str] = None
        self._failing = False
        self._thread = threading.Thread(target=self._run, name="step-publisher", daemon=True)
        self._thread.start()

    def changed(self, running: Running) -> None:
        """The registry's running steps now (cheap: the thread does the work)."""
        with self._condition:
            self._pending = dict(running)
            self._condition.notify()

    def close(self) -> None:
        """Write what is pending at once and stop, waiting at most :data:`CLOSE_WAIT_S`."""
        with self._condition:
            self._closing = True
            self._condition.notify()
        self._thread.join(CLOSE_WAIT_S)

    def _take(self) -> Optional[Dict[int, Mapping[str, Any]]]:
        """Wait for a change (None: closing with nothing pending), then let a burst settle."""
        with self._condition:
            while self._pending is None and not self._closing:
                self._condition.wait()
            if self._pending is None:
                return None
            if not self._closing:
                self._condition.wait_for(lambda: self._closing, COALESCE_S)
            pending, self._pending = self._pending, None
            return pending

    def _run(self) -> None:
        pause_s = MIN_INTERVAL_S
        while True:
            running = self._take()
            if running is None:
                return
            value = key_value(running)
            if value == self._written:
                continue
            if self._write(value):
                pause_s = MIN_INTERVAL_S
            else:
                self._retry(running)
                pause_s = min(pause_s * 2, RETRY_MAX_S)
            with self._condition:
                self._condition.wait_for(lambda: self._closing, pause_s)

    def _retry(self, running: Dict[int, Mapping[str, Any]]) -> None:
        """Write ``running`` again later, unless something newer came or the job ends."""
        with self._condition:
            if self._pending is None and not self._closing:
                self._pending = running

    def _write(self, value: Optional[str]) -> bool:
        """One merge patch of the key; a failure is logged once per run of failures. False:
        worth trying again (not when the record is gone: nobody would read it)."""
        try:
            self.api.request("PATCH", self.path, body={"data": {RUNNING_STEPS_KEY: value}},
                             content_type="application/merge-patch+json")
        except Exception as e:  # never the job's problem
            if not self._failing:
                self.log(f"error: job {self.job_id}: could not publish its running steps "
                         f"(squeue -s): {e}")
            self._failing = True
            return getattr(e, "status", 0) == 404
        self.patches += 1
        self._written = value
        self._failing = False
        return True


def start_publisher(environ: Mapping[str, str], desc: Mapping[str, Any],
                    log: Callable[[str], None]) -> Optional[StepPublisher]:
    """Node 0's publisher when its pod has API access, else None."""
    api = api_for(environ)
    if api is None:
        return None
    namespace = environ.get("SBATCH_K8S_NAMESPACE") or api.namespace
    return StepPublisher(api, namespace, int(desc["job_id"]), log)
