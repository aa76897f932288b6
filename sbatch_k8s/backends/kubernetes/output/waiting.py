"""``sbatch --wait`` on a cluster: look until every job of the submission has ended.

Each look costs the same few LISTs as ``squeue`` (:mod:`..read.cluster_jobs`); the interval grows
from 0.2 s to 2 s, so short jobs return quickly and long ones cost little.

A job whose working directory is not on a shared volume of its partition has its output
files copied into node 0's pod log (:mod:`sbatch_k8s.runtime.log_stream.tee`): once node 0's
container has started, its log is followed and the files are written into the working
directory as they arrive (:mod:`.rebuilt_files`), across reconnects, each byte once. When the
job has ended, sbatch waits for the rest of the log (at most :data:`DRAIN_S`); what could not
be written is said on stderr, one line per job, and makes the exit status non-zero (1 when the
job's own is 0).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence

from parsers.job_records import COMPLETED, PENDING, JobRecord
from sbatch_k8s.backends.kubernetes.api.client import KubeClient, KubeError
from sbatch_k8s.user_messages import print_job_error, print_job_warning
from translators.config import ClusterConfig

if TYPE_CHECKING:
    from sbatch_k8s.backends.kubernetes.output.rebuilt_files import JobOutput

FIRST_INTERVAL_S = 0.2
LONGEST_INTERVAL_S = 2.0
#: How long the rest of a streamed log may take to arrive once the job has ended.
DRAIN_S = 60.0
COMMAND = "sbatch"
#: The reason of a job whose node 0 could not start it; its one line is the record's
#: Comment (a runtime that failed its check, :func:`translators.pod.runtime_command`).
LAUNCH_FAILURE = "JobLaunchFailure"


def exit_code_of(records: Sequence[JobRecord]) -> int:
    """sbatch --wait's exit code: the job's (1 when it ended by a signal or without
    completing); for an array, the highest."""
    codes = []
    for record in records:
        code = record.exit_code
        if record.exit_signal or (record.state != COMPLETED and code == 0):
            code = 1
        codes.append(code)
    return max(codes) if codes else 0


def files_streamed(config: Optional[ClusterConfig], record: JobRecord) -> bool:
    """Whether the job's output files travel through node 0's log (its working directory
    is on no volume of its partition)."""
    from translators.storage import workdir_shared

    partition = config.partition(record.partition) if config is not None else None
    return partition is not None and bool(record.work_dir) and \
        not workdir_shared(record.work_dir, partition)


class OutputFetcher:
    """The output files of the streamed jobs of one ``sbatch --wait``."""

    def __init__(self, client: KubeClient, namespace: str, config: Optional[ClusterConfig],
                 not_before: int) -> None:
        self.client = client
        self.namespace = namespace
        self.config = config
        self.not_before = not_before
        self.outputs: Dict[int, "JobOutput"] = {}
        #: The node-0 pod each output follows (a requeued job's next run has another).
        self.pods: Dict[int, str] = {}

    def follow(self, records: Sequence[JobRecord]) -> Dict[int, str]:
        """Start following node 0 of every streamed job that has started; job id → why its
        node 0 pod could not be read (the API server did not answer), for those."""
        from sbatch_k8s.backends.kubernetes.output.rebuilt_files import (
            FileSink,
            JobOutput,
            allowed_roots,
            container_started,
            node0_pod,
        )

        unread: Dict[int, str] = {}
        for record in records:
            if record.state == PENDING or not files_streamed(self.config, record):
                continue
            try:
                pod = node0_pod(self.client, self.namespace, record)
            except KubeError as e:
                unread[record.job_id] = str(e)
                continue
            if pod is None or not container_started(pod):
                continue
            uid = str((pod.get("metadata") or {}).get("uid") or "")
            earlier = self.outputs.get(record.job_id)
            if earlier is not None:
                if self.pods.get(record.job_id) == uid:
                    continue
                # A new run (the job was requeued): its files are written afresh, as the
                # new run's batch step truncates them.
                earlier.stop()
                earlier.sink.close()  # type: ignore[attr-defined]
            sink = FileSink(allowed_roots(record), self.not_before, COMMAND, record.job_id)
            output = JobOutput(self.client, self.namespace, record, sink)
            output.start(pod)
            self.outputs[record.job_id] = output
            self.pods[record.job_id] = uid
        return unread

    def _follow_ended(self, records: Sequence[JobRecord], deadline: float) -> Dict[int, str]:
        """Follow the jobs that ended between two looks; an API server that does not answer
        (under load) is asked again until ``deadline``, so a pod still there is not taken
        for gone. Job id → why node 0's pod could not be read, for those never read."""
        missing = list(records)
        while True:
            unread = self.follow(missing)
            missing = [r for r in missing if r.job_id in unread and r.job_id not in self.outputs]
            if not missing or time.monotonic() >= deadline:
                return {r.job_id: unread[r.job_id] for r in missing}
            time.sleep(FIRST_INTERVAL_S)

    def finish(self, records: Sequence[JobRecord]) -> bool:
        """Wait for the rest of every log; one warning per job whose files are not whole;
        whether all are."""
        deadline = time.monotonic() + DRAIN_S
        unread = self._follow_ended(records, deadline)
        whole = True
        for record in records:
            if record.system_comment:   # why its batch step never started, in one line
                print_job_error(COMMAND, record.job_id, record.system_comment)
            output = self.outputs.get(record.job_id)
            if output is None:
                if files_streamed(self.config, record) and record.start_time:
                    why = (f"node 0's pod could not be read: {unread[record.job_id]}"
                           if record.job_id in unread else "node 0's pod is gone")
                    _warn(record.job_id, f"its output files could not be read: {why}")
                    whole = False
                continue
            complete, why = output.finish(max(1.0, deadline - time.monotonic()))
            output.sink.close()  # type: ignore[attr-defined]
            lost = output.lost()
            if record.reason == LAUNCH_FAILURE and record.system_comment:
                continue   # node 0 never ran the job: its one line (above) says so
            if not complete:
                _warn(record.job_id, f"its output files may be incomplete: {why}"
                                     + (f" ({lost} bytes missing before it)" if lost else ""))
            elif lost:
                _warn(record.job_id, f"{lost} bytes of its output files were lost (the "
                                     "kubelet rotated node 0's log before they were read)")
            whole = whole and complete and not lost
        return whole


def _warn(job_id: int, message: str) -> None:
    print_job_warning(COMMAND, job_id, message)


def wait_for_jobs(client: KubeClient, namespace: str, job_ids: Sequence[int],
                  config: Optional[ClusterConfig] = None) -> int:
    """Block until all ``job_ids`` are final, writing the output files of streamed jobs;
    their exit code as sbatch --wait returns it."""
    from sbatch_k8s.backends.kubernetes.read.cluster_jobs import joined_records, look
    from sbatch_k8s.backends.kubernetes.read.cluster_reads import LiveReads
    from sbatch_k8s.backends.kubernetes.control.dependencies import release_waiting
    from sbatch_k8s.backends.kubernetes.history.records import is_final

    wanted = set(job_ids)
    seen: Dict[int, JobRecord] = {}
    fetcher = OutputFetcher(client, namespace, config, int(time.time()) - 1)
    interval = FIRST_INTERVAL_S
    while True:
        try:
            view = look(client, namespace, active_only=False, job_ids=job_ids)
            now = int(time.time())
            records: List[JobRecord] = release_waiting(
                client, namespace, view.stored, joined_records(client, view, now),
                LiveReads(client), now, complete=False)
        except KubeError:
            records = []  # a passing failure: the retries inside ran out; look again
        for record in records:
            if record.job_id in wanted:
                seen[record.job_id] = record
        fetcher.follow([r for r in seen.values() if not is_final(r)])
        if len(seen) == len(wanted) and all(is_final(r) for r in seen.values()):
            whole = fetcher.finish(sorted(seen.values(), key=lambda r: r.job_id))
            code = exit_code_of(list(seen.values()))
            return code if whole else max(code, 1)
        time.sleep(interval)
        interval = min(interval * 1.5, LONGEST_INTERVAL_S)
