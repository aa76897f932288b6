"""``sattach`` on a cluster: a job's output from node 0's pod log.

When the job's working directory is on a volume of its partition, its files are where the
user reads them and sattach prints them in place (:mod:`sbatch_k8s.backends.attach_files`).
Otherwise node 0 copies them into its pod log (:mod:`sbatch_k8s.runtime.log_stream.tee`) and sattach
follows that log: the stdout file to stdout, a separate ``--error`` file to stderr — from the start,
then as it grows until the job ends (a running job), or all at once (a job that has ended while its
pods still exist). With ``--k8s-output`` the files are written into the job's working directory
instead (:mod:`.rebuilt_files`). A job whose node 0 pod is gone has nothing left to read: Slurm's
"already completing or completed".
"""

from __future__ import annotations

import time
from typing import Any, Dict, Optional

from sbatch_k8s.backends.attach_files import (
    ENDED_JOB,
    PENDING_JOB,
    UNKNOWN_JOB,
    AttachError,
    attach_to_files,
    has_ended,
)
from parsers.job_records import PENDING
from sbatch_k8s.backends.base import OutputSink
from sbatch_k8s.backends.kubernetes.api.client import KubeError
from sbatch_k8s.user_messages import print_job_error, print_job_warning, print_note

POLL_S = 0.5
COMMAND = "sattach"


def attach_on_cluster(backend: Any, job_id: int, write_files: bool, quiet: bool,
                      sink: OutputSink) -> int:
    """sattach's exit code for job ``job_id`` of the cluster; its output to ``sink``."""
    from sbatch_k8s.backends.kubernetes.read.cluster_jobs import find_job
    from sbatch_k8s.backends.kubernetes.output.rebuilt_files import (
        FileSink,
        JobOutput,
        StdioSink,
        allowed_roots,
        container_started,
        node0_pod,
    )
    from sbatch_k8s.backends.kubernetes.output.waiting import files_streamed

    found = find_job(backend.client, backend.namespaces(), job_id, int(time.time()))
    if found is None:
        raise AttachError(UNKNOWN_JOB)
    record, _, namespace = found
    if record.state == PENDING:
        raise AttachError(PENDING_JOB)
    if not files_streamed(backend.config, record):
        return attach_to_files(backend, record, write_files, quiet, sink)
    pod = _started_node0(backend, namespace, record, node0_pod, container_started)
    if pod is None:
        raise AttachError(ENDED_JOB)
    files = FileSink(allowed_roots(record), record.submit_time, COMMAND, job_id) \
        if write_files else None
    output = JobOutput(backend.client, namespace, record,
                       files if files is not None else StdioSink(sink))
    output.start(pod)
    complete, why = output.finish(None)
    if files is not None:
        files.close()
        if not quiet:
            for key in sorted(files.paths):
                print_note(COMMAND, f"wrote {files.paths[key]}")
    lost = output.lost()
    ended = find_job(backend.client, [namespace], job_id, int(time.time()))
    if ended is not None and ended[0].system_comment:
        # Its batch step never started: why, in one line (slurmstepd's words).
        print_job_error(COMMAND, job_id, ended[0].system_comment)
        return 1
    if not complete:
        print_job_warning(COMMAND, job_id, f"the output may be incomplete: {why}")
        return 1
    if lost:
        print_job_warning(COMMAND, job_id, f"{lost} bytes of the output were lost (the "
                                           "kubelet rotated node 0's log before they were read)")
        return 1
    return 0


def _started_node0(backend: Any, namespace: str, record: Any, node0_pod: Any,
                   container_started: Any) -> Optional[Dict[str, Any]]:
    """Node 0's pod once its container has started (None: gone, or the job ended first)."""
    from sbatch_k8s.backends.kubernetes.read.cluster_jobs import find_job

    while True:
        try:
            pod = node0_pod(backend.client, namespace, record)
        except KubeError:
            pod = None
        if pod is not None and container_started(pod):
            return pod                  # type: ignore[no-any-return]
        if has_ended(record):
            return None
        time.sleep(POLL_S)
        found = find_job(backend.client, [namespace], record.job_id, int(time.time()))
        if found is None:
            return None
        record = found[0]
