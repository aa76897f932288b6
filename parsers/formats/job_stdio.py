"""A batch job's stdio file names as the controller records them and as commands show them.

Slurm keeps three views of ``--output``/``--error``/``--input`` (checked on Slurm 22.05):

* **Recorded** (:func:`recorded_stdio`): at submission the controller stores each given
  pattern unexpanded, made absolute by plain concatenation with the working directory
  (``./o//%j`` in ``/w`` is ``/w/./o//%j``); ``--input`` not given is ``/dev/null``, the other
  two stay unset. This is what a job record holds, pending or running.
* **squeue** ``-O StdOut,StdErr,StdIn`` (``src/squeue/print.c``) prints the recorded text as is
  (``/w/out-%j.txt``); an unset output is ``<WorkDir>/slurm-<JobId>.out``, an unset error
  the output, and a job without a batch script has error ``N/A``.
* **scontrol show job** (``_fname_format``, ``src/api/job_info.c``) expands only ``%A %a %j
  %u %x``, in that order, each wherever it occurs, with no padding and no escapes: ``%N``,
  ``%4j``, ``%%`` and backslashes stay as written. The codes take the values the runtime gives
  them (:class:`~parsers.values.filename.FilenameField`); a pending array's rest has task id
  ``4294967294``. An unset output is ``slurm-%j.out`` (``slurm-%A_%a.out`` in an array).

The runtime's full expansion (``%N``, padding, ``%%``…) names the files actually written;
these are only what the commands display.
"""

from __future__ import annotations

from typing import Optional, Tuple

from parsers.job_records import JobRecord
from parsers.values.filename import NO_ARRAY_TASK, FilenameContext, FilenameField

#: What ``scontrol`` expands, in the order ``_fname_format`` replaces them.
SCONTROL_CODES = "Aajux"
DEV_NULL = "/dev/null"


def recorded_path(pattern: str, work_dir: str) -> str:
    """One given stdio pattern as the controller stores it: absolute, unexpanded."""
    return pattern if pattern.startswith("/") else f"{work_dir}/{pattern}"


def recorded_stdio(output: Optional[str], error: Optional[str], stdin: Optional[str],
                   work_dir: str) -> Tuple[str, str, str]:
    """``(stdout, stderr, stdin)`` of a new job record ("" for unset)."""
    return (recorded_path(output, work_dir) if output else "",
            recorded_path(error, work_dir) if error else "",
            recorded_path(stdin, work_dir) if stdin else DEV_NULL)


def _pattern_context(job: JobRecord) -> FilenameContext:
    return FilenameContext(job_id=job.job_id, step_id=None, array_job_id=job.array_job_id,
                           array_task_id=job.array_task_id, user=job.user,
                           job_name=job.name)


def scontrol_path(job: JobRecord, pattern: str) -> str:
    """``_fname_format``: ``%A %a %j %u %x`` expanded, relative names put in WorkDir."""
    ctx = _pattern_context(job)
    text = pattern
    for code in SCONTROL_CODES:
        text = text.replace(f"%{code}", FilenameField(code, 0).render(ctx))
    return text if text.startswith("/") else f"{job.work_dir}/{text}"


def scontrol_default_output(job: JobRecord) -> str:
    """scontrol's name of an unset output: ``slurm-%j.out``, in an array
    ``slurm-%A_%a.out`` (the pending rest: task id ``4294967294``)."""
    if job.array_job_id is None:
        name = f"slurm-{job.job_id}.out"
    else:
        task = NO_ARRAY_TASK if job.array_task_id is None else job.array_task_id
        name = f"slurm-{job.array_job_id}_{task}.out"
    return f"{job.work_dir.rstrip('/')}/{name}" if job.work_dir else name


def scontrol_stdio(job: JobRecord) -> Tuple[str, str, str]:
    """``(StdErr, StdIn, StdOut)`` of ``scontrol show job`` (a batch job)."""
    stdout = scontrol_path(job, job.stdout) if job.stdout else scontrol_default_output(job)
    stderr = scontrol_path(job, job.stderr) if job.stderr else stdout
    stdin = scontrol_path(job, job.stdin) if job.stdin else DEV_NULL
    return stderr, stdin, stdout


def squeue_stdout(job: JobRecord) -> str:
    """squeue's ``StdOut``: as recorded, else ``<WorkDir>/slurm-<JobId>.out``."""
    return job.stdout or f"{job.work_dir}/slurm-{job.job_id}.out"


def squeue_stderr(job: JobRecord) -> str:
    """squeue's ``StdErr``: ``N/A`` without a batch script, else as recorded, else the
    output."""
    if not job.batch_flag:
        return "N/A"
    return job.stderr or squeue_stdout(job)
