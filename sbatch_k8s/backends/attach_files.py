"""``sattach`` where the job's output files are already where the user reads them (the local
backend; a cluster partition whose volumes hold the working directory).

The batch output files (``scontrol show job``'s StdOut and StdErr) are printed from their
start — the stdout file on stdout, a separate stderr file on stderr — and, while the job
runs, followed as they grow (as ``tail -f``) until it ends. ``--k8s-output`` has nothing to
fetch there and says where the files are.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from sbatch_k8s.operation_errors import SbatchK8sError
from sbatch_k8s.user_messages import print_note

if TYPE_CHECKING:
    from parsers.job_records import JobRecord
    from sbatch_k8s.backends.base import Backend, OutputSink

POLL_S = 0.2
COMMAND = "sattach"
#: Slurm's reasons after ``Could not get job step info:``.
UNKNOWN_JOB = "Invalid job id specified"
PENDING_JOB = "Job is pending execution"
ENDED_JOB = "Job/step already completing or completed"


class AttachError(SbatchK8sError):
    """sattach cannot attach: one of Slurm's reasons."""


def has_ended(record: "JobRecord") -> bool:
    """Whether the job has ended (nothing more will be written)."""
    from parsers.job_records import COMPLETING, PENDING, REQUEUED, RUNNING, SUSPENDED

    return record.state not in (PENDING, RUNNING, SUSPENDED, COMPLETING, REQUEUED)


def job_to_attach(backend: "Backend", job_id: int) -> "JobRecord":
    """The started job ``job_id`` (AttachError with Slurm's reason otherwise)."""
    from parsers.job_records import PENDING

    records = [r for r in backend.job_records(True, int(time.time()), [job_id])
               if r.job_id == job_id]
    if not records:
        raise AttachError(UNKNOWN_JOB)
    if records[0].state == PENDING:
        raise AttachError(PENDING_JOB)
    return records[0]


def output_paths(record: "JobRecord") -> Tuple[str, str]:
    """The job's stdout and stderr files (as ``scontrol show job`` names them)."""
    from parsers.formats.job_stdio import scontrol_stdio

    stderr, _, stdout = scontrol_stdio(record)
    return stdout, stderr


def attach_to_files(backend: "Backend", record: "JobRecord", write_files: bool,
                    quiet: bool, sink: "OutputSink") -> int:
    """Copy the job's files in place to ``sink`` (or, with ``write_files``, point at them);
    exit code."""
    stdout, stderr = output_paths(record)
    paths = [stdout] if os.path.normpath(stdout) == os.path.normpath(stderr) else [stdout,
                                                                                  stderr]
    if write_files:
        if not quiet:
            print_note(COMMAND, f"the output files of job {record.job_id} are already in "
                                f"place: {' '.join(paths)}")
        return 0
    if has_ended(record) and not any(os.path.exists(p) for p in paths):
        raise AttachError(ENDED_JOB)
    offsets: Dict[str, int] = {}
    while True:
        final = has_ended(record)
        _copy_new(paths, offsets, sink)
        if final:
            return 0
        time.sleep(POLL_S)
        fresh = _fresh(backend, record.job_id)
        record = fresh if fresh is not None else record


def _fresh(backend: "Backend", job_id: int) -> Optional["JobRecord"]:
    found: List["JobRecord"] = [r for r in backend.job_records(True, int(time.time()),
                                                               [job_id]) if r.job_id == job_id]
    return found[0] if found else None


def _copy_new(paths: List[str], offsets: Dict[str, int], sink: "OutputSink") -> None:
    """What each file gained since the last look, to the sink's stdout (the first) or
    stderr."""
    for index, path in enumerate(paths):
        try:
            with open(path, "rb") as f:
                f.seek(offsets.get(path, 0))
                data = f.read()
        except OSError:
            continue
        if data:
            offsets[path] = offsets.get(path, 0) + len(data)
            (sink.write_out if index == 0 else sink.write_err)(data)
