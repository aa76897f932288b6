"""Job and step ids as each reporting command reads them — each has its own rules.

* squeue ``-j`` (``_build_job_list``, Slurm 22.05): ``strtol`` of the job id, an optional
  ``_<task>``; anything after is ignored (``72x`` is 72, ``72_`` is task 0). Only a job id
  of 0 or less is an error.
* squeue ``-s`` (``_build_step_list``): ``job[_task].step``, the step read with ``strtol``
  (so ``batch`` reads as step 0, as in Slurm).
* scancel operands (``_xlate_job_step_ids``): ``job[_task|_[ranges]|_*][.step]``, several
  per word when separated by commas; anything else is ``Invalid job id``.
* sacct ``-j`` (``slurm_parse_step_str``, Slurm 22.05): ``job[_task][.step]`` with named
  steps ``batch``/``extern``/``interactive``; duplicates are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

from parsers.input_errors import EXIT_SUBMIT_ERROR, SlurmInputError, ValueSyntaxError, fatal
from parsers.formats.cnumbers import atoi, strtol
from parsers.report_options.argv import comma_list
from parsers.values.hostlist import expand_hostlist

NAMED_STEPS = ("batch", "extern", "interactive")


@dataclass(frozen=True)
class JobId:
    """A selected job: ``job_id``, optionally one array task (``all_tasks``: ``_*``), one step
    (``"0"``, ``"batch"``; None selects the job with all its steps) or a het component."""

    job_id: int
    array_task_id: Optional[int] = None
    step: Optional[str] = None
    all_tasks: bool = False
    het_offset: Optional[int] = None

    def __str__(self) -> str:
        text = str(self.job_id)
        if self.all_tasks:
            text += "_*"
        elif self.array_task_id is not None:
            text += f"_{self.array_task_id}"
        elif self.het_offset is not None:
            text += f"+{self.het_offset}"
        return text if self.step is None else f"{text}.{self.step}"


def parse_squeue_jobs(text: str) -> Tuple[JobId, ...]:
    """squeue's ``-j`` list; raises ``Invalid job id: <item>`` (exit 1)."""
    ids = []
    for item in comma_list(text):
        job_id, rest = strtol(item)
        task = strtol(rest[1:])[0] if rest.startswith("_") else None
        if job_id <= 0:
            raise SlurmInputError(f"Invalid job id: {item}", exit_code=EXIT_SUBMIT_ERROR)
        ids.append(JobId(job_id, task))
    return tuple(ids)


def parse_squeue_steps(text: str) -> Tuple[JobId, ...]:
    """squeue's ``-s`` list of ``job[_task].step``; raises ``Invalid job_step id: …``."""
    ids = []
    for item in comma_list(text):
        parts = [p for p in item.split(".") if p]
        if not parts:
            break
        job_id, rest = strtol(parts[0])
        task = strtol(rest[1:])[0] if rest.startswith("_") else None
        if len(parts) < 2:
            raise SlurmInputError(f"Invalid job_step id: {parts[0]}.??",
                                  exit_code=EXIT_SUBMIT_ERROR)
        step = strtol(parts[1])[0]
        if job_id <= 0 or step < 0:
            raise SlurmInputError(f"Invalid job_step id: {parts[0]}.{parts[1]}",
                                  exit_code=EXIT_SUBMIT_ERROR)
        ids.append(JobId(job_id, task, str(step)))
    return tuple(ids)


def _scancel_invalid(word: str) -> SlurmInputError:
    return SlurmInputError(f"Invalid job id {word}", exit_code=EXIT_SUBMIT_ERROR)


def _scancel_tasks(word: str, job_id: int, rest: str) -> List[JobId]:
    """``job_[ranges]``: one id per task; nothing may follow the bracket."""
    close = rest.find("]", 2)
    if close < 0 or close != len(rest) - 1:
        raise _scancel_invalid(word)
    try:
        tasks = expand_hostlist(rest[1:])
    except ValueSyntaxError:
        raise _scancel_invalid(word) from None
    if not tasks:
        raise _scancel_invalid(word)
    ids = []
    for task in tasks:
        number = strtol(task)[0]
        if number < 0:
            raise _scancel_invalid(word)
        ids.append(JobId(job_id, number))
    return ids


def parse_scancel_ids(words: Tuple[str, ...]) -> Tuple[JobId, ...]:
    """scancel's operands; raises ``Invalid job id <word>`` (exit 1)."""
    ids: List[JobId] = []
    pending = list(words)
    while pending:
        word = pending.pop(0)
        job_id, rest = strtol(word)
        if job_id <= 0:
            raise _scancel_invalid(word)
        if rest.startswith("_["):
            ids.extend(_scancel_tasks(word, job_id, rest))
            continue
        task: Optional[int] = None
        het: Optional[int] = None
        every = False
        if rest.startswith("_*"):
            every, rest = True, rest[2:]
        elif rest.startswith("_"):
            task, rest = strtol(rest[1:])
        elif rest.startswith("+"):
            het, rest = strtol(rest[1:])
        if (task is not None and task < 0) or (het is not None and het < 0):
            raise _scancel_invalid(word)
        step: Optional[str] = None
        if rest.startswith("."):
            number, rest = strtol(rest[1:])
            if number < 0:
                raise _scancel_invalid(word)
            step = str(number)
        if rest.startswith(","):
            pending.insert(0, rest[1:])
        elif rest:
            raise _scancel_invalid(word)
        ids.append(JobId(job_id, task, step, every, het))
    return tuple(ids)


def _sacct_step(name: str, dot: str) -> str:
    if dot in NAMED_STEPS:
        return dot
    if "0" <= dot[:1] <= "9":
        return str(atoi(dot))
    raise fatal(f"Bad step specified: {name}")


def parse_sacct_jobs(text: str) -> Tuple[JobId, ...]:
    """sacct's ``-j`` list (Slurm 22.05 rules); raises sacct's ``fatal`` messages."""
    ids: List[JobId] = []
    for item in comma_list(text.strip("'\"")):
        if not "0" <= item[:1] <= "9":
            raise fatal(f"Bad job/step specified: {item}")
        name, has_dot, dot = item.partition(".")
        step = _sacct_step(name, dot.partition("+")[0]) if has_dot else None
        task: Optional[int] = None
        het: Optional[int] = None
        if "_" in name:
            name, _, under = name.partition("_")
            if not "0" <= under[:1] <= "9":
                raise fatal(f"Bad job array element specified: {name}")
            task = atoi(under)
        elif "+" in name and not (has_dot and "+" in dot):
            name, _, plus = name.partition("+")
            if not "0" <= plus[:1] <= "9":
                raise fatal(f"Bad hetjob offset specified: {name}")
            het = atoi(plus)
        selected = JobId(atoi(name), task, step, het_offset=het)
        if selected not in ids:
            ids.append(selected)
    return tuple(ids)
