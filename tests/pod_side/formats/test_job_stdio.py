"""A job's StdOut/StdErr/StdIn as recorded at submission and as scontrol and squeue show them.

Every expected value was printed by real Slurm 22.05 (``scontrol show job`` and
``squeue -O StdOut:60,StdErr:40,StdIn:30``) for the submission given in the row.
"""

from __future__ import annotations

from typing import Optional

import pytest

from parsers.formats.job_stdio import (
    recorded_stdio,
    scontrol_stdio,
    squeue_stderr,
    squeue_stdout,
)
from parsers.job_records import JobRecord
from tests.pod_side.formats.builders import job

#: job id, name, array (job id, task id or None for a pending rest), -o, -e, -i, work dir,
#: then scontrol's StdErr, StdIn, StdOut and squeue's StdOut, StdErr, StdIn.
CASES = [
    (453, "myname", None, "x-%j-%x-%N-%u-%n-%t-%A-%a.out", "e-%j-%s.err", "in-%j", "/tmp/rsA",
     "/tmp/rsA/e-453-%s.err", "/tmp/rsA/in-453",
     "/tmp/rsA/x-453-myname-%N-root-%n-%t-453-4294967294.out",
     "/tmp/rsA/x-%j-%x-%N-%u-%n-%t-%A-%a.out", "/tmp/rsA/e-%j-%s.err", "/tmp/rsA/in-%j"),
    (456, "nm", None, "y-%J-%b-%%-%4j-%r-%5x-%q-%S.out", "a\\%j-%x", None, "/tmp/rsA",
     "/tmp/rsA/a\\456-nm", "/dev/null", "/tmp/rsA/y-%J-%b-%%-%4j-%r-%5x-%q-%S.out",
     "/tmp/rsA/y-%J-%b-%%-%4j-%r-%5x-%q-%S.out", "/tmp/rsA/a\\%j-%x", "/dev/null"),
    (459, "arr", (457, 1), "z-%A_%a-%3a-%j.out", "rel/%u", None, "/tmp/rsA",
     "/tmp/rsA/rel/root", "/dev/null", "/tmp/rsA/z-457_1-%3a-459.out",
     "/tmp/rsA/z-%A_%a-%3a-%j.out", "/tmp/rsA/rel/%u", "/dev/null"),
    (458, "wrap", None, "/abs/%j/%x", "%", None, "/tmp",
     "/tmp/%", "/dev/null", "/abs/458/wrap", "/abs/%j/%x", "/tmp/%", "/dev/null"),
    (463, "nm2", None, "y-%j-%x-%N.out", "e%%j", None, "/tmp/rsA",
     "/tmp/rsA/e%463", "/dev/null", "/tmp/rsA/y-463-nm2-%N.out",
     "/tmp/rsA/y-%j-%x-%N.out", "/tmp/rsA/e%%j", "/dev/null"),
    (464, "we%jrd", None, "q-%x-%u-%a.out", None, None, "/tmp/rsA",
     "/tmp/rsA/q-we%jrd-root-4294967294.out", "/dev/null",
     "/tmp/rsA/q-we%jrd-root-4294967294.out",
     "/tmp/rsA/q-%x-%u-%a.out", "/tmp/rsA/q-%x-%u-%a.out", "/dev/null"),
    (465, "wrap", (465, None), "/abs/%A-%a", None, "in%j", "/tmp/rsA",
     "/abs/465-4294967294", "/tmp/rsA/in465", "/abs/465-4294967294",
     "/abs/%A-%a", "/abs/%A-%a", "/tmp/rsA/in%j"),
    (467, "wrap", None, "./dot//x.out", "e.err", None, "/tmp/rsA",
     "/tmp/rsA/e.err", "/dev/null", "/tmp/rsA/./dot//x.out",
     "/tmp/rsA/./dot//x.out", "/tmp/rsA/e.err", "/dev/null"),
    (435, "wrap", (435, None), None, None, None, "/tmp",
     "/tmp/slurm-435_4294967294.out", "/dev/null", "/tmp/slurm-435_4294967294.out",
     "/tmp/slurm-435.out", "/tmp/slurm-435.out", "/dev/null"),
    (5, "held", None, None, None, None, "/tmp",
     "/tmp/slurm-5.out", "/dev/null", "/tmp/slurm-5.out",
     "/tmp/slurm-5.out", "/tmp/slurm-5.out", "/dev/null"),
]


def _submitted(job_id: int, name: str, array: Optional[tuple], output: Optional[str],
               error: Optional[str], stdin: Optional[str], work_dir: str) -> JobRecord:
    stdout, stderr, recorded_in = recorded_stdio(output, error, stdin, work_dir)
    fields = dict(work_dir=work_dir, stdout=stdout, stderr=stderr, stdin=recorded_in)
    if array is not None:
        array_job_id, task = array
        fields.update(array_job_id=array_job_id, array_task_id=task)
        if task is None:
            fields["array_pending"] = "0-2"
    return job(job_id, name, "PENDING", **fields)


@pytest.mark.parametrize("case", CASES, ids=[str(c[0]) for c in CASES])
def test_scontrol_and_squeue_show_what_slurm_shows(case: tuple) -> None:
    record = _submitted(*case[:7])
    assert scontrol_stdio(record) == case[7:10]
    assert (squeue_stdout(record), squeue_stderr(record), record.stdin) == case[10:13]


def test_a_job_without_batch_script_has_no_squeue_stderr() -> None:
    record = job(7, "alloc", "RUNNING", work_dir="/w", batch_flag=False)
    assert squeue_stderr(record) == "N/A"
    assert squeue_stdout(record) == "/w/slurm-7.out"
