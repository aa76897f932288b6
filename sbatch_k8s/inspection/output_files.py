"""The batch step's output files as log sources: where ``scontrol show job`` says they are.

``StdOut=``/``StdErr=`` name them (:func:`parsers.formats.job_stdio.scontrol_stdio`); the
runtime writes them there, so on this machine (the local backend, or a cluster whose volumes
hold the job's working directory) the console reads them in place. A name with a pattern
scontrol leaves unexpanded (``%N``, ``%t``…) names several files or none: not offered.
"""

from __future__ import annotations

from typing import List

from parsers.formats.job_stdio import DEV_NULL, scontrol_stdio
from parsers.job_records import JobRecord
from sbatch_k8s.inspection.values import OUTPUT_FILE, LogSource


def output_sources(record: JobRecord) -> List[LogSource]:
    """``stdout`` (and ``stderr`` when it is another file) of a batch job."""
    if not record.batch_flag:
        return []
    stderr, _, stdout = scontrol_stdio(record)
    sources = [_source("stdout", "Output (StdOut)", stdout)]
    if stderr != stdout:
        sources.append(_source("stderr", "Error (StdErr)", stderr))
    return sources


def _source(key: str, title: str, path: str) -> LogSource:
    if "%" in path:
        return LogSource(key, title, OUTPUT_FILE, path, available=False,
                         why=f"{path} is a pattern of several files")
    if path.startswith("/dev/") and path != DEV_NULL:
        return LogSource(key, title, OUTPUT_FILE, path, available=False,
                         why=f"{path} is not a file the console can read")
    return LogSource(key, title, OUTPUT_FILE, path, available=path != DEV_NULL,
                     why="discarded (/dev/null)" if path == DEV_NULL else "")
