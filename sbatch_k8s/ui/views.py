"""What the console's seam (:mod:`sbatch_k8s.ui.jobs_source`) answers: plain frozen values.

Jobs themselves are Slurm's records (:class:`parsers.job_records.JobRecord`); a job's nodes,
logs and events are :mod:`sbatch_k8s.inspection.values`; these are the rest of what a page
shows — who is looking, the outcome of an action, a submission — in words a page can print as
they are. Every value (those of :mod:`~sbatch_k8s.inspection.values` too) converts to JSON with
:func:`to_json`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Optional, Tuple

from sbatch_k8s.inspection.values import LogSource, Unavailable


@dataclass(frozen=True)
class Identity:
    """Who the console acts as, and on what."""

    user: str
    uid: int
    operator: bool
    backend: str
    describe: str
    cluster: str
    partitions: Tuple[str, ...]
    default_partition: str
    work_dir: str


@dataclass(frozen=True)
class ActionResult:
    """What an action came to: ``ok``, and Slurm's words (empty when it says nothing)."""

    ok: bool
    message: str = ""


@dataclass(frozen=True)
class SubmitResult:
    """What ``sbatch`` answered: its exit status, output and error lines, the job id."""

    ok: bool
    job_id: Optional[int]
    stdout: str
    stderr: str


@dataclass(frozen=True)
class LintResult:
    """``sbatch --k8s-lint``'s report and whether it found nothing refused."""

    ok: bool
    report: str


@dataclass(frozen=True)
class Submission:
    """How a job was submitted, as far as its records keep it: what "submit again" runs
    (``sbatch ARGV SCRIPT`` in ``work_dir``) after the user confirmed it."""

    script: str
    script_name: str
    argv: Tuple[str, ...]
    work_dir: str


def to_json(value: Any) -> Any:
    """A value of this module (or a tuple/list/dict of them) as JSON-ready data; an
    :class:`Unavailable` as ``{"available": false, "why": …}``."""
    if isinstance(value, Unavailable):
        return {"available": False, "why": value.why}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        data = {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if isinstance(value, LogSource):
            data["file_name"] = value.file_name
        return data
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    return value
