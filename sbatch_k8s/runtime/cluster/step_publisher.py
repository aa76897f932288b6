"""Node 0 with API access: its steps published in the job's record, for ``squeue -s`` and
``sacct`` while the job runs.

Slurm's ``squeue -s`` lists the steps slurmctld knows, and ``sacct`` lists a step that ended
as soon as it ends; here only node 0's step registry
(:class:`~sbatch_k8s.runtime.batch_host.step_registry.StepRegistry`) and its step log
(``steps.jsonl``) know them. When the pod runs as the job ServiceAccount
(:func:`sbatch_k8s.runtime.cluster.job_end.api_for`), node 0 keeps its numbered steps in the record
ConfigMap's :data:`RUNNING_STEPS_KEY` (the ``batch`` and ``extern`` steps the login side makes from
the job itself): a JSON list in id order of compact entries as in the termination message
(:mod:`sbatch_k8s.runtime.batch_host.step_log`): a running step without ``state`` (keys ``id name
start node_list node_count ntasks cpus``), an ended one as node 0's report will have it (``state
exit_code exit_signal end`` too), written by a JSON merge patch of that key alone; no step started
yet: the key is removed. The login side reads it from the records it lists anyway
(:mod:`sbatch_k8s.backends.kubernetes.history.record_steps`), no API call per step; node 0's report
at the job's end stays what the record's steps are made of, the ended steps published here filling
in only those the report had no room for.

The document stays bounded (a ConfigMap holds at most 1 MiB, and every patch sends it
whole): the last :data:`STEP_LIMIT` started of the running steps, the ended steps of the
:data:`ENDED_LIMIT` highest ids, and at most :data:`DOCUMENT_LIMIT` bytes in all. The ended
steps are read from the step log as it grows (:class:`EndedSteps`: each byte once, so a job
of a million steps costs no more per patch than one of a hundred).

The registry only hands a snapshot of its running steps to :meth:`StepPublisher.changed` (a
dict copy, on the event loop, after every start and end); one background thread reads the
log and writes. A burst of changes (a script starting a hundred ``srun &``) becomes few
patches: the thread waits :data:`COALESCE_S` after a change and leaves at least
:data:`MIN_INTERVAL_S` between patches, and writes only what differs from what it last
wrote. Nothing here may slow or fail the job: a failed patch is one line in the node's log
(then silence until one succeeds; it is tried again after a pause that doubles up to
:data:`RETRY_MAX_S`), and :meth:`StepPublisher.close` waits at most :data:`CLOSE_WAIT_S` for
the last patch.
"""

from __future__ import annotations

from parsers.vocabulary import (
    RUNNING_STEPS_KEY,
)
import json
import threading
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from parsers.values.acctg_freq import checked_interval
from parsers.vocabulary import RECORD_PREFIX
from sbatch_k8s.runtime.cluster.job_end import api_for
from sbatch_k8s.runtime.cluster.kube_api import KubeApi
from sbatch_k8s.runtime.batch_host.step_log import step_entry

#: The record ConfigMap's data key of node 0's steps (running, and the last ended ones).
#: After a change, wait this long for more before writing (a burst becomes one patch).
COALESCE_S = 0.5
#: At least this long between two patches.
MIN_INTERVAL_S = 1.0
#: At most this many running steps (the last started) are published.
STEP_LIMIT = 200
#: At most this many ended steps (those of the highest ids) are published: the login side
#: keeps them in the final record where node 0's report (4 KiB, some 20 steps) left them
#: out, so a record keeps ~300 bytes a step of them (~30 KB, well under a ConfigMap's
#: 1 MiB even with requeued runs beside it), and a patch stays ~15-25 KB.
ENDED_LIMIT = 100
#: The published document's bytes at most, whatever the steps' names and node lists: the
#: ended steps of the lowest ids go first, then the running ones started first.
DOCUMENT_LIMIT = 128 * 1024
#: Longest pause before trying a failed patch again (the pause doubles from
#: :data:`MIN_INTERVAL_S`).
RETRY_MAX_S = 30.0
#: How long the job's end waits for the last patch.
CLOSE_WAIT_S = 2.0

#: Step id → the registry's record of a running step (its ``info`` plus ``step_id``, ``time``).
Running = Mapping[int, Mapping[str, Any]]
#: A compact entry (:mod:`sbatch_k8s.runtime.batch_host.step_log`).
Entry = Dict[str, Any]


def running_entries(running: Running) -> List[Entry]:
    """The running steps as compact entries without a state, in id order (the last
    :data:`STEP_LIMIT`)."""
    return [{k: v for k, v in step_entry(running[step_id], {}).items() if k != "state"}
            for step_id in sorted(running)[-STEP_LIMIT:]]


class EndedSteps:
    """The ended steps of node 0's step log, read as it grows (each byte once): the start
    events of running steps, and the ended steps of the :data:`ENDED_LIMIT` highest ids
    as compact entries, as the termination message has them."""

    def __init__(self, path: Optional[str]) -> None:
        self.path = path
        self.offset = 0
        self.starts: Dict[int, Mapping[str, Any]] = {}
        self.ended: Dict[int, Entry] = {}

    def read(self) -> List[Entry]:
        """The ended steps now, in id order."""
        for event in self._new_events():
            step_id = event.get("step_id")
            if not isinstance(step_id, int):
                continue
            if event.get("event") == "start":
                self.starts[step_id] = event
            elif event.get("event") == "end" and step_id in self.starts:
                self.ended[step_id] = step_entry(self.starts.pop(step_id), event)
        for step_id in sorted(self.ended)[:-ENDED_LIMIT]:
            del self.ended[step_id]
        return [self.ended[step_id] for step_id in sorted(self.ended)]

    def _new_events(self) -> List[Mapping[str, Any]]:
        """The whole lines appended since the last read (a line being written waits)."""
        if not self.path:
            return []
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return []
        whole = data[:data.rfind(b"\n") + 1]
        self.offset += len(whole)
        events = []
        for line in whole.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                events.append(event)
        return events


def document(running: Running, ended: Sequence[Entry] = (),
             batch: Optional[Mapping[str, Any]] = None) -> List[Entry]:
    """The published entries: the batch script's usage so far (``{"id": "batch", "usage"}``,
    when sampled) first, then in id order ``running`` (no state) and ``ended`` (with their
    state), within :data:`DOCUMENT_LIMIT` bytes (module docstring)."""
    kept = list(ended)
    ended_ids = {e["id"] for e in kept}
    shown = [e for e in running_entries(running) if e["id"] not in ended_ids]
    room = DOCUMENT_LIMIT - 2
    sizes = [len(json.dumps(e, separators=(",", ":"))) + 1 for e in kept + shown]
    total = sum(sizes)
    while total > room and (kept or shown):
        total -= sizes.pop(0)
        (kept or shown).pop(0)
    head = [{"id": "batch", "usage": dict(batch)}] if batch else []
    return head + sorted(kept + shown, key=lambda e: int(e["id"]))


def key_value(running: Running, ended: Sequence[Entry] = (),
              batch: Optional[Mapping[str, Any]] = None) -> Optional[str]:
    """:data:`RUNNING_STEPS_KEY`'s value; None (the key removed) when no step ran and the
    batch script was not sampled."""
    entries = document(running, ended, batch)
    if not entries:
        return None
    return json.dumps(entries, sort_keys=True, separators=(",", ":"))


class StepPublisher:
    """Writes the steps of job ``job_id`` into its record (module docstring): the running
    ones it is told of, and the ended ones of node 0's step log ``step_log``."""

    def __init__(self, api: KubeApi, namespace: str, job_id: int,
                 log: Callable[[str], None], step_log: Optional[str] = None,
                 usage_interval_s: float = 30.0) -> None:
        self.api = api
        #: A change of usage alone waits this long after the last patch (``sstat``'s figures
        #: are as fresh as the sampling interval, at most one patch an interval for them).
        self.usage_interval_s = usage_interval_s
        self.ended = EndedSteps(step_log)
        self.path = f"/api/v1/namespaces/{namespace}/configmaps/{RECORD_PREFIX}{job_id}"
        self.job_id = job_id
        self.log = log
        self.patches = 0
        self._condition = threading.Condition()
        self._pending: Optional[Dict[int, Mapping[str, Any]]] = None
        self._usage_only = False
        self._last_patch = 0.0
        #: The batch script's usage so far (the node sets it to its registry's).
        self.batch_usage: Callable[[], Optional[Mapping[str, Any]]] = lambda: None
        self._closing = False
        self._written: Optional[str] = None
        self._failing = False
        self._thread = threading.Thread(target=self._run, name="step-publisher", daemon=True)
        self._thread.start()

    def changed(self, running: Running) -> None:
        """The registry's running steps now (cheap: the thread does the work)."""
        with self._condition:
            self._pending = dict(running)
            self._usage_only = False
            self._condition.notify()

    def usage_changed(self, running: Running) -> None:
        """A running step's usage changed: published with the next change, or one sampling
        interval after the last patch."""
        with self._condition:
            if self._pending is None:
                self._usage_only = True
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
            if self._usage_only and not self._closing:
                due = self._last_patch + self.usage_interval_s - time.monotonic()
                self._condition.wait_for(lambda: self._closing or not self._usage_only, due)
            if not self._closing:
                self._condition.wait_for(lambda: self._closing, COALESCE_S)
            pending, self._pending = self._pending, None
            self._usage_only = False
            return pending

    def _run(self) -> None:
        pause_s = MIN_INTERVAL_S
        while True:
            running = self._take()
            if running is None:
                return
            value = key_value(running, self.ended.read(), self.batch_usage())
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
        self._last_patch = time.monotonic()
        self._written = value
        self._failing = False
        return True


def start_publisher(environ: Mapping[str, str], desc: Mapping[str, Any],
                    log: Callable[[str], None],
                    step_log: Optional[str] = None) -> Optional[StepPublisher]:
    """Node 0's publisher when its pod has API access, else None (``step_log``: node 0's
    ``steps.jsonl``, where the ended steps are read)."""
    api = api_for(environ)
    if api is None:
        return None
    namespace = environ.get("SBATCHK8S_NAMESPACE") or api.namespace
    return StepPublisher(api, namespace, int(desc["job_id"]), log, step_log,
                         checked_interval(desc.get("acctg_freq")))
