"""``srun`` outside an allocation on a cluster: a one-step job, its output streamed back.

As Slurm's srun does, it obtains an allocation with its own options — a job whose batch script
is ``exec srun <the same arguments>`` (:mod:`sbatch_k8s.srun_job`), run by node 0's runtime —
and the step runs there with the runtime's fan-out, ``--label`` and exit rules. The batch
script writes to node 0's container (``--output=/dev/stdout --error=/dev/stderr``), whose log
the API server streams from the kubelet; it is copied to the command's stdout as it arrives (the log
API merges the container's two streams, so the tasks' stderr arrives on our stdout too).
Meanwhile the job is watched as ``sbatch --wait`` does; srun exits with the step's exit code.

Slurm's messages: ``srun: job N queued and waiting for resources`` when the job does not start
at once (then ``... has been allocated resources``). Ctrl-C while the job waits revokes it;
once it runs, Ctrl-C shows the step's tasks and a second one within a second cancels the job,
as ``scancel`` does (its tasks get SIGTERM, then SIGKILL after KillWait). SIGTERM and SIGHUP
cancel at once. The tasks' stdin is ``/dev/null``: the log API carries output only.
"""

from __future__ import annotations

import os
import signal
import stat
import threading
import time
from typing import Any, Dict, List, Mapping, Optional, Tuple

from parsers.job_records import COMPLETED, PENDING, JobRecord
from sbatch_k8s.backends.base import SRUN_COMMAND, OutputSink
from sbatch_k8s.backends.kubernetes.api.client import KubeClient, KubeError
from sbatch_k8s.backends.kubernetes.output.pod_log import LogFollower, RawCopy
from sbatch_k8s.user_messages import print_error, print_note, print_warning
from translators.config import ClusterConfig

COMMAND = SRUN_COMMAND
#: Where the step's batch script reads and writes: node 0's container.
STDIO = ("--input=/dev/null", "--output=/dev/stdout", "--error=/dev/stderr",
         "--open-mode=append")
FIRST_INTERVAL_S = 0.2
LONGEST_INTERVAL_S = 1.0
#: How long the log may take to arrive once the job has ended (or been cancelled).
DRAIN_S = 30.0
CANCEL_DRAIN_S = 10.0
#: Two Ctrl-C within this time cancel the step (srun's rule).
DOUBLE_INTERRUPT_S = 1.0


def _stdin_forwarded_nowhere() -> bool:
    """True when srun's stdin could carry data (not a terminal, not /dev/null)."""
    try:
        mode = os.fstat(0)
        if os.isatty(0):
            return False
        null = os.stat(os.devnull)
    except OSError:
        return False
    return not (stat.S_ISCHR(mode.st_mode) and mode.st_rdev == null.st_rdev)


class StepWatch:
    """One outside srun's job: its state, node 0's log, Ctrl-C."""

    def __init__(self, client: KubeClient, namespace: str, job_id: int,
                 sink: OutputSink) -> None:
        self.client = client
        self.namespace = namespace
        self.job_id = job_id
        self.sink = sink
        self.record: Optional[JobRecord] = None
        self.ref: Dict[str, str] = {}
        self.pods: List[Dict[str, Any]] = []
        self.follower: Optional[LogFollower] = None
        self.queued = False
        self.allocated = False
        self.cancelled = False
        self.revoked = False
        self.signals: List[Tuple[int, float]] = []
        self.interrupts: List[float] = []
        self.unreachable = False
        self.look_failed = False
        self.log_error_said = False
        self.wake = threading.Event()

    # -- looking -----------------------------------------------------------------------------
    def look(self) -> None:
        """Read the job's record, workload and pods once."""
        from sbatch_k8s.backends.kubernetes.read.cluster_jobs import joined_records, look

        view = look(self.client, self.namespace, active_only=False, job_ids=[self.job_id])
        for record, (_, ref, _) in zip(joined_records(self.client, view, int(time.time())),
                                       view.stored):
            if record.job_id == self.job_id:
                self.record, self.ref = record, ref
        self.pods = view.pods.get(str(self.job_id), self.pods)

    def node0(self) -> Optional[Dict[str, Any]]:
        """Node 0's current pod, if it exists."""
        from sbatch_k8s.backends.kubernetes.read.pod_view import nodes_by_index

        count = self.record.node_count if self.record is not None else 1
        return nodes_by_index(self.pods, max(count, 1)).get(0)  # type: ignore[return-value]

    def final(self) -> bool:
        """The job has ended."""
        from sbatch_k8s.backends.kubernetes.history.records import is_final

        return self.record is not None and is_final(self.record)

    # -- reporting ---------------------------------------------------------------------------
    def announce(self) -> None:
        """Slurm's allocation lines, as the job's state moves."""
        record = self.record
        if record is None:
            return
        if record.state == PENDING and record.reason != "None" and not self.queued:
            self.queued = True
            _say(f"job {self.job_id} queued and waiting for resources")
        if record.state != PENDING and not self.allocated:
            self.allocated = True
            if self.queued:
                _say(f"job {self.job_id} has been allocated resources")

    def follow_log(self) -> None:
        """Start following node 0's log once its container has started."""
        from sbatch_k8s.backends.kubernetes.read.pod_view import main_container, running_since

        pod = self.node0()
        if self.follower is not None or pod is None:
            return
        if running_since(main_container(pod)) is None and not self.final():
            return
        name = pod["metadata"]["name"]
        self.follower = LogFollower(self.client, self.namespace, name, container_of(pod),
                                    lambda: self._container_ended(name),
                                    self.wake.set, RawCopy(self.sink)).start()

    def say_log_error(self) -> None:
        """Say once why node 0's log cannot be read (a missing permission)."""
        follower = self.follower
        if follower is not None and follower.error and not self.log_error_said:
            self.log_error_said = True
            print_error(COMMAND, f"the output of job {self.job_id} cannot be read: "
                                 f"{follower.error}")

    def _container_ended(self, pod_name: str) -> bool:
        from sbatch_k8s.backends.kubernetes.api.kinds import POD
        from sbatch_k8s.backends.kubernetes.read.pod_view import main_container, terminated

        try:
            pod = self.client.get(POD, pod_name, self.namespace)
        except KubeError:
            return False
        return pod is None or terminated(main_container(pod)) is not None

    # -- signals -----------------------------------------------------------------------------
    def on_signal(self, signum: int, _frame: object) -> None:
        """Signal handler: note it; the watch loop acts on it."""
        self.signals.append((signum, time.monotonic()))
        self.wake.set()

    def handle_signals(self) -> None:
        """Act on the signals received since the last look."""
        if self.signals and self.record is None:
            # never read (the cluster does not answer): nothing to cancel it with
            self.unreachable = self.look_failed
            return
        while self.signals and not self.cancelled and self.record is not None:
            signum, when = self.signals.pop(0)
            record = self.record
            if record.state == PENDING:
                self.revoked = True
                self.cancel()
                _say(f"Job allocation {self.job_id} has been revoked")
                _say(f"Force Terminated JobId={self.job_id}")
            elif signum != signal.SIGINT:
                self.cancel()
            elif self._recent_interrupt(when):
                self.cancel()
            else:
                self.interrupts.append(when)
                _say("interrupt (one more within 1 sec to abort)")
                _say(_running_line(self.job_id, record.ntasks or record.node_count or 1))

    def _recent_interrupt(self, when: float) -> bool:
        return bool(self.interrupts) and when - self.interrupts[-1] < DOUBLE_INTERRUPT_S

    def cancel(self) -> None:
        """Cancel the job as ``scancel`` does (the record says CANCELLED)."""
        from sbatch_k8s.backends.kubernetes.control.job_control import cancel_on_cluster

        if self.record is None:
            return
        self.cancelled = True
        if self.record.state != PENDING:
            _say("forcing job termination")
        cancel_on_cluster(self.client, self.record, self.ref, self.namespace, os.getuid(),
                          None, False, False, None)
        self.look()


def _say(message: str) -> None:
    print_note(COMMAND, message)


def _running_line(job_id: int, ntasks: int) -> str:
    from sbatch_k8s.runtime.srun.report import rank_ranges

    noun = "task" if ntasks == 1 else "tasks"
    return f"StepId={job_id}.0 {noun} {rank_ranges(list(range(ntasks)))}: running"


def container_of(pod: Mapping[str, Any]) -> str:
    """The name of the container running the runtime."""
    from sbatch_k8s.backends.kubernetes.read.pod_view import MAIN_CONTAINERS

    names = [c.get("name", "") for c in (pod.get("spec") or {}).get("containers") or []]
    return next((n for n in names if n in MAIN_CONTAINERS), names[0] if names else "main")


def exit_code_of(record: Optional[JobRecord]) -> int:
    """srun's exit code: the step's (the batch script is the step), 128 + N when it died of
    signal N, 1 for a job that never ran."""
    if record is None:
        return 1
    if record.exit_signal:
        return 128 + record.exit_signal
    if record.state != COMPLETED and record.exit_code == 0:
        return 1
    return record.exit_code


def run_outside(argv: List[str], config: ClusterConfig, environ: Mapping[str, str],
                client: KubeClient, sink: OutputSink) -> int:
    """srun's exit code for a step run in a job of its own on the cluster; node 0's log
    copied to ``sink``'s stdout."""
    from sbatch_k8s.backends.kubernetes.submit.schedule import create_on_cluster
    from sbatch_k8s.srun_job import build_step_job
    from sbatch_k8s.submission_plan import plan_submission
    from parsers.jobspec import SubmitOptions

    job = build_step_job(argv, STDIO, environ)
    if _stdin_forwarded_nowhere():
        print_warning(COMMAND, "the Kubernetes backend does not forward stdin: the tasks "
                               "read /dev/null")
    plan = plan_submission(job, SubmitOptions(), config, environ, command=COMMAND)
    created = create_on_cluster(plan, environ, client)
    watch = StepWatch(client, created.location, created.job_ids[0], sink)
    previous = {s: signal.signal(s, watch.on_signal)
                for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        return _watch(watch)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _watch(watch: StepWatch) -> int:
    """Look until the job ends, following node 0's log; the exit code."""
    interval = FIRST_INTERVAL_S
    while True:
        try:
            watch.look()
            watch.look_failed = False
        except KubeError:
            watch.look_failed = True   # a passing failure (the retries inside ran out)
        watch.handle_signals()
        if watch.revoked:
            return 1
        if watch.unreachable:
            print_error(COMMAND, f"job {watch.job_id} cannot be read from the cluster; it "
                                 f"may still run: scancel {watch.job_id}")
            return 1
        watch.say_log_error()
        watch.announce()
        watch.follow_log()
        if watch.final():
            break
        watch.wake.wait(interval)
        watch.wake.clear()
        interval = min(interval * 1.5, LONGEST_INTERVAL_S)
    follower = watch.follower
    if follower is None and not watch.cancelled:
        print_warning(COMMAND, f"job {watch.job_id} ended before its output could be read "
                               "(node 0's pod is gone)")
    if follower is not None:
        deadline = time.monotonic() + (CANCEL_DRAIN_S if watch.cancelled else DRAIN_S)
        while not follower.join(FIRST_INTERVAL_S):
            if watch.signals or time.monotonic() > deadline:   # Ctrl-C: stop waiting
                follower.stop()
                follower.join(1.0)
                break
    watch.say_log_error()
    return exit_code_of(watch.record)
