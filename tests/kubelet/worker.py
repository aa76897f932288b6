"""One pod's life on the test kubelet, in its own thread: prepare, run, report, terminate.

The sequence a kubelet follows, kept in order here:

1. report the pod ``Pending`` (containers waiting ``ContainerCreating``), ``startTime``,
   ``hostIP`` and ``podIP``;
2. prepare: volumes, /etc/hosts, every container's environment — retrying while a ConfigMap
   or Secret is missing, failing the pod when preparation can never succeed;
3. run the init containers one by one, then all containers together, restarting them as
   ``restartPolicy`` says, reporting every state change;
4. on ``deletionTimestamp``: SIGTERM, the grace period, SIGKILL, a terminal status, then
   delete the pod with grace 0; on ``activeDeadlineSeconds`` (from ``startTime``): the same
   stop, then phase ``Failed`` reason ``DeadlineExceeded``;
5. once the pod is gone from the API server: remove its files (logs are kept).
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
from typing import Any, Dict, List, Optional

from tests.kubelet.errors import PrepareError
from tests.kubelet.lifecycle import ContainerRun, PodServices, PreparedPod, pod_status, \
    prepare_pod
from tests.kubelet.podspec import grace_period_s, restarts_after
from tests.kubelet.status import DEADLINE_MESSAGE

POLL_S = 0.1
PREPARE_RETRY_S = 1.0
RESTART_BACKOFF_S = 1.0
VANISHED_GRACE_S = 2.0
log = logging.getLogger("tests.kubelet")
#: The phases a pod ends in.
TERMINAL_PHASES = ("Succeeded", "Failed")


class PodWorker:
    """Runs one pod bound to this kubelet's node; fed the pod's updates by the watch."""

    def __init__(self, services: PodServices, pod: Dict[str, Any], address: str) -> None:
        self.services = services
        self.pod = pod
        self.address = address
        meta = pod["metadata"]
        self.uid: str = meta["uid"]
        self.namespace: str = meta.get("namespace", "default")
        self.name: str = meta["name"]
        self.start_time = time.time()
        self.prepared: Optional[PreparedPod] = None
        self.vanished = False
        self.shutting_down = False
        #: The phase last written: a report before the pod is torn down keeps it.
        self.reported_phase = "Pending"
        self._changed = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._main, daemon=True,
                                        name=f"pod-{self.namespace}/{self.name}")

    # fed by the kubelet
    def start(self) -> None:
        """Begin the pod's life in its own thread."""
        self._thread.start()

    def update(self, pod: Dict[str, Any]) -> None:
        """The pod as the API server now has it."""
        with self._lock:
            self.pod = pod
        self._changed.set()

    def vanish(self) -> None:
        """The pod was removed from the API server."""
        self.vanished = True
        self._changed.set()

    def shutdown(self) -> None:
        """The kubelet stops: kill the containers at once, report nothing more."""
        self.shutting_down = True
        self._changed.set()

    def join(self, timeout_s: float) -> bool:
        """Wait for the thread to end; True when it did."""
        self._thread.join(timeout_s)
        return not self._thread.is_alive()

    # the pod's life
    @property
    def deleting(self) -> bool:
        """The pod is being deleted (or already gone)."""
        return self.vanished or bool(self.pod["metadata"].get("deletionTimestamp"))

    def _wait(self, timeout_s: float) -> None:
        self._changed.wait(timeout_s)
        self._changed.clear()

    def _main(self) -> None:
        try:
            self._live()
        except Exception:
            log.exception("pod %s/%s: test kubelet error", self.namespace, self.name)
            self._report_failure("TestKubeletError", "the test kubelet failed; see its log")
            self._await_deletion()
        finally:
            self._kill_all()
            for run in self.prepared.all_runs() if self.prepared else []:
                run.close_log()
            if self.vanished or self.shutting_down:
                self._clean_up()
            self.services.on_worker_done(self)

    def _live(self) -> None:
        self._report()
        if not self._prepare():
            self._await_deletion()
            return
        prepared = self.prepared
        assert prepared is not None
        outcome = "exited"
        for run in prepared.init_runs:
            outcome = self._supervise([run], is_init=True)
            if outcome != "exited" or run.exit_code != 0:
                break
        else:
            prepared.initialized = True
            outcome = self._supervise(prepared.runs, is_init=False)
        if outcome == "stopped":
            return
        self._report(reason="DeadlineExceeded" if outcome == "deadline" else None,
                     message=DEADLINE_MESSAGE if outcome == "deadline" else None,
                     final=True)
        self._await_deletion()

    def _prepare(self) -> bool:
        """Prepare the pod, retrying while that can succeed; False when the pod cannot run."""
        last = ""
        while not (self.deleting or self.shutting_down):
            try:
                self.prepared = prepare_pod(self.services, self.pod, self.address)
                self._report()
                return True
            except PrepareError as e:
                if e.message != last:
                    self.services.event(self.pod, "Warning", e.reason, e.message)
                    last = e.message
                if e.permanent:
                    self._report_failure(e.reason, e.message)
                    return False
                self._report(waiting_reason=e.reason, waiting_message=e.message)
            self._wait(PREPARE_RETRY_S)
        return False

    def _supervise(self, runs: List[ContainerRun], is_init: bool) -> str:
        """Run ``runs`` until each has ended for good: ``exited``, or ``deleted``,
        ``deadline`` (stopped by the kubelet) or ``stopped`` (the kubelet stops)."""
        policy = self.pod["spec"].get("restartPolicy") or "Always"
        for run in runs:
            self._start(run)
        self._report()
        deadline_s = self.pod["spec"].get("activeDeadlineSeconds")
        while True:
            if self.shutting_down:
                return "stopped"
            if self.deleting:
                grace = VANISHED_GRACE_S if self.vanished else grace_period_s(self.pod)
                if not self.vanished:
                    time.sleep(self.services.sigterm_delay_s(self.pod))
                self._stop_runs(runs, grace, None)
                return "deleted"
            if deadline_s is not None and time.time() >= self.start_time + int(deadline_s):
                self.services.event(self.pod, "Normal", "DeadlineExceeded", DEADLINE_MESSAGE)
                self._stop_runs(runs, grace_period_s(self.pod), "DeadlineExceeded")
                return "deadline"
            changed = False
            for run in runs:
                if run.check_exit():
                    changed = True
                    if restarts_after(policy, run.exit_code or 0, is_init):
                        run.restart_at = time.time() + RESTART_BACKOFF_S
                    else:
                        run.finished = True
                if run.restart_at is not None and time.time() >= run.restart_at:
                    run.restart_at = None
                    self._start(run)
                    changed = True
            if changed:
                self._report()
            if all(run.finished for run in runs):
                return "exited"
            self._wait(POLL_S)

    def _start(self, run: ContainerRun) -> None:
        """Start a container with the events a 1.28 kubelet records for it (the image is
        always present here: this machine runs the command)."""
        name = run.container.get("name", "")
        self.services.event(self.pod, "Normal", "Pulled", f'Container image '
                            f'"{run.container.get("image", "")}" already present on machine')
        self.services.event(self.pod, "Normal", "Created", f"Created container {name}")
        run.start(self.services)
        self.services.event(self.pod, "Normal", "Started", f"Started container {name}")

    def _stop_runs(self, runs: List[ContainerRun], grace_s: float,
                   reason: Optional[str]) -> None:
        """SIGTERM every running container, wait ``grace_s`` for all, SIGKILL the rest."""
        self.services.event(self.pod, "Normal", "Killing",
                            f"Stopping containers (grace period {grace_s:g} s)")
        live = [run for run in runs if run.process is not None and run.process.poll() is None]
        for run in live:
            run.process.signal_group(15)
        end = time.monotonic() + grace_s
        while any(run.process.poll() is None for run in live) and time.monotonic() < end \
                and not self.shutting_down:  # a stopping kubelet kills at once
            time.sleep(POLL_S)
        for run in runs:
            if run.process is not None and run.process.poll() is None:
                run.process.kill()
            run.check_exit(reason)
            run.finished = True
            run.restart_at = None

    def _await_deletion(self) -> None:
        """Wait (the pod is terminal) until it is deleted; then remove it for good."""
        while not (self.vanished or self.shutting_down):
            if self.pod["metadata"].get("deletionTimestamp"):
                try:
                    self.services.api.delete_pod_now(self.namespace, self.name, self.uid)
                except Exception as e:
                    log.warning("pod %s/%s: delete failed: %s", self.namespace, self.name, e)
                self._wait(PREPARE_RETRY_S)
                continue
            self._wait(1.0)

    def _kill_all(self) -> None:
        """Kill every container, and what those that exited left behind."""
        for run in self.prepared.all_runs() if self.prepared else []:
            if run.process is None:
                continue
            if run.process.poll() is None:
                run.process.kill()
            else:
                run.process.reap_leftovers()

    def _clean_up(self) -> None:
        self.services.hosts.forget_hosts_file(self.services.pod_files(self.uid).hosts)
        for path in (self.services.pod_dir(self.uid), self.services.memory_pod_dir(self.uid)):
            shutil.rmtree(path, ignore_errors=True)

    # status
    def _report(self, waiting_reason: Optional[str] = None,
                waiting_message: Optional[str] = None, reason: Optional[str] = None,
                message: Optional[str] = None, final: bool = False) -> None:
        if self.shutting_down or self.vanished:
            return
        status = pod_status(self, waiting_reason, waiting_message, final)
        if not final and status["phase"] in TERMINAL_PHASES:
            # A 1.27+ kubelet writes a terminal phase only once the pod is torn down; until
            # then its containers show their ends under the phase it had: Pending for a
            # container that ended before it was ever reported running (a real node did so).
            status["phase"] = self.reported_phase
        self.reported_phase = status["phase"]
        status["reason"], status["message"] = reason, message
        try:
            self.services.api.patch_pod_status(self.namespace, self.name, status)
        except Exception as e:
            log.warning("pod %s/%s: status update failed: %s", self.namespace, self.name, e)

    def _report_failure(self, reason: str, message: str) -> None:
        status = pod_status(self, reason, message, True)
        status.update(phase="Failed", reason=reason, message=message)
        try:
            self.services.api.patch_pod_status(self.namespace, self.name, status)
        except Exception as e:
            log.warning("pod %s/%s: status update failed: %s", self.namespace, self.name, e)

