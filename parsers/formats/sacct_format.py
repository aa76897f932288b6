"""sacct's output: ``--format`` field lists, the fixed-width table and ``-p``/``-P`` lines.

:func:`parse_format` reads a field list the way ``parse_command_line`` in
``src/sacct/options.c`` does: comma-separated, leading blanks skipped, names matched
case-insensitively as *prefixes* in table order (``jobn`` is JobName), ``name%N`` sets the
width (negative: left-justified), a prefix of ``ALL`` selects every field, and an empty item
ends the list. As in Slurm, a width given to a field applies to every occurrence of it.

:func:`format_sacct` prints the title and dashes lines, then each job followed by its steps
(``batch``, ``extern``, then numbered steps, as the database orders them) unless
``allocations_only`` (``-X``). :func:`unrecorded_steps_notes` says, for the warnings on stderr,
which jobs' records lack some of their steps (the listing itself stays what Slurm prints).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Collection, Dict, List, Mapping, Optional, Sequence

from parsers.input_errors import EXIT_SUBMIT_ERROR, SlurmInputError, fatal
from parsers.formats.cells import print_field, print_header
from parsers.formats.cnumbers import atoi
from parsers.formats.sacct_fields import SACCT_FIELDS, SacctField
from parsers.formats.squeue_fields import JobContext
from parsers.formats.squeue_steps import step_number
from parsers.job_records import JobRecord, StepRecord, missing_steps
from parsers.values.array import format_indices

DEFAULT_FIELDS = "jobid,jobname,partition,account,alloccpus,state,exitcode"
BRIEF_FIELDS = "jobid,state,exitcode"
LONG_FIELDS = (
    "jobid,jobidraw,jobname,partition,maxvmsize,maxvmsizenode,maxvmsizetask,avevmsize,maxrss,"
    "maxrssnode,maxrsstask,averss,maxpages,maxpagesnode,maxpagestask,avepages,mincpu,"
    "mincpunode,mincputask,avecpu,ntasks,alloccpus,elapsed,state,exitcode,avecpufreq,"
    "reqcpufreqmin,reqcpufreqmax,reqcpufreqgov,reqmem,consumedenergy,maxdiskread,"
    "maxdiskreadnode,maxdiskreadtask,avediskread,maxdiskwrite,maxdiskwritenode,"
    "maxdiskwritetask,avediskwrite,reqtres,alloctres,tresusageinave,tresusageinmax,"
    "tresusageinmaxn,tresusageinmaxt,tresusageinmin,tresusageinminn,tresusageinmint,"
    "tresusageintot,tresusageoutmax,tresusageoutmaxn,tresusageoutmaxt,tresusageoutave,"
    "tresusageouttot")
#: Fields of ``sacct --helpformat`` that Slurm removed, with the message it gives instead.
REMOVED_FIELDS = {
    "allocgres": "AllocGRES has been removed, please use AllocTRES",
    "reqgres": "ReqGRES has been removed, please use ReqTRES",
}


@dataclass(frozen=True)
class FieldSpec:
    """One selected column: the field's Slurm name and its signed width."""

    name: str
    width: int


FIELDS_BY_NAME: Dict[str, SacctField] = {field.name: field for field in SACCT_FIELDS}


def parse_format(text: str, table: Sequence[SacctField] = SACCT_FIELDS) -> List[FieldSpec]:
    """The columns of a ``--format`` list (``jobid,jobname%20,state%-12``) among ``table``'s
    fields (sacct's; sstat's share the rules).

    Raises :class:`SlurmInputError` with sacct's ``Invalid field requested: "x"`` (exit 1).
    """
    selected: List[FieldSpec] = []
    widths: Dict[str, int] = {}
    for raw in (text + ",").split(",")[:-1]:
        item = raw.lstrip(" \t\n\r\f\v")
        if not item:
            break
        name, percent, width_text = item.partition("%")
        if "all".startswith(name.lower()):
            for field in table:
                if percent:
                    widths[field.name] = atoi(width_text)
                selected.append(FieldSpec(field.name, field.width))
            continue
        match = next((f for f in table if f.name.lower().startswith(name.lower())), None)
        if match is None:
            if name.lower() in REMOVED_FIELDS:
                raise fatal(REMOVED_FIELDS[name.lower()])
            raise SlurmInputError(f'Invalid field requested: "{name}"',
                                  exit_code=EXIT_SUBMIT_ERROR)
        if percent:
            widths[match.name] = atoi(width_text)
        selected.append(FieldSpec(match.name, match.width))
    return [replace(spec, width=widths.get(spec.name, spec.width)) for spec in selected]


def _step_order(step: StepRecord) -> int:
    """The database's order: named steps (negative ids there) first, then by number."""
    number = step_number(step.step_id)
    return number - 2**32 if number >= 0xFFFFFFF0 else number


def _line(fields: Sequence[FieldSpec], job: JobRecord, step: Optional[StepRecord],
          ctx: JobContext, parsable: Optional[str], delimiter: Optional[str]) -> str:
    cells = []
    for index, spec in enumerate(fields):
        field = FIELDS_BY_NAME[spec.name]
        last = index == len(fields) - 1
        cells.append(print_field(field.value(job, step, ctx), spec.width, field.kind,
                                 parsable, delimiter, last))
    return "".join(cells)


def format_sacct(
    records: Sequence[JobRecord],
    fields: Sequence[FieldSpec],
    now: int,
    parsable: Optional[str] = None,
    header: bool = True,
    delimiter: Optional[str] = "|",
    allocations_only: bool = False,
    time_format: Optional[str] = None,
    only_steps: Optional[Mapping[int, Collection[str]]] = None,
    convert: bool = True,
    units: Optional[str] = None,
) -> str:
    """sacct's listing. ``parsable`` is None (columns), ``"p"`` (``-p``: every field followed
    by the delimiter) or ``"P"`` (``-P``: no delimiter after the last field). ``only_steps``:
    jobs (by id) of which ``-j`` named steps only — those steps are listed, not the job's
    own line (unless ``allocations_only``, which lists just that line). ``convert`` False:
    memory amounts in bytes (``--noconvert``); ``units``: all in that unit (``--units``)."""
    ctx = JobContext(now, time_format, convert, units)
    lines: List[str] = []
    if header:
        lines.append("".join(
            print_header(spec.name, spec.width, parsable, delimiter, i == len(fields) - 1)
            for i, spec in enumerate(fields)))
        if not parsable:
            lines.append("".join("-" * abs(spec.width) + " " for spec in fields))
    for job in records:
        named = (only_steps or {}).get(job.job_id)
        if named is None or allocations_only:
            lines.append(_line(fields, job, None, ctx, parsable, delimiter))
        if allocations_only:
            continue
        for step in sorted(job.steps, key=_step_order):
            if named is None or step.step_id in named:
                lines.append(_line(fields, job, step, ctx, parsable, delimiter))
    return "".join(line + "\n" for line in lines)



def unrecorded_steps_notes(records: Sequence[JobRecord]) -> List[str]:
    """One note per job whose record lacks some of its numbered steps: every id below the
    highest was a step (``job 12: 4 of its 30 steps were not recorded (steps 0-3)``)."""
    notes = []
    for job in records:
        missing = missing_steps(job.steps)
        if not missing:
            continue
        numbered = {int(s.step_id) for s in job.steps if s.step_id.isdigit()}
        count = max(numbered) + 1
        absent = [i for i in range(count) if i not in numbered]
        notes.append(f"job {job.job_id_text}: {missing} of its {count} steps were not "
                     f"recorded (steps {format_indices(absent, None)})")
    return notes
