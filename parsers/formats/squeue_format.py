"""squeue's output: ``-o`` format strings, ``-O`` field lists, and the default layouts.

A format is read the way ``parse_format``/``parse_long_format`` (``src/squeue/opts.c``) read
it, into :class:`FormatItem` s: a field, its width, right-justification, and the literal text
that follows it. Unknown codes are kept as items that print only their text (``%-5j`` prints
``%-5j``), and reported in :attr:`ParsedFormat.errors` with Slurm's words, which the caller
prints on stderr (squeue still exits 0).

Rendering takes records in the order given: :mod:`parsers.formats.squeue_sort` orders them as
squeue does, and pending array tasks arrive already combined (``JobRecord.array_pending``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Sequence, Tuple

from parsers.formats.cells import ctime_line, squeue_cell
from parsers.formats.cnumbers import strtol
from parsers.formats.squeue_fields import JobContext, job_field_by_letter, job_field_by_name
from parsers.job_records import JobRecord

#: ``squeue`` with no format option (squeue.c builds it as the -O list below).
DEFAULT_FORMAT = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"
#: ``squeue -l``.
LONG_FORMAT = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"
#: ``squeue -s``.
STEPS_FORMAT = "%.15i %.8j %.9P %.8u %.9M %N"
#: ``squeue --start`` (sorted by ``S``, pending jobs only); Slurm 22.05's spacing (26.05 puts
#: two blanks before START_TIME).
START_FORMAT = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R"
#: ``squeue --only-job-state``.
ONLY_STATE_FORMAT = "%.18i %.2t"
#: The same defaults as squeue.c spells them internally, for ``-O`` rendering.
DEFAULT_FORMAT2 = ("jobarrayid:.18 ,partition:.9 ,name:.8 ,username:.8 ,statecompact:.2 ,"
                   "timeused:.10 ,numnodes:.6 ,reasonlist:0")
LONG_FORMAT2 = ("jobarrayid:.18 ,partition:.9 ,name:.8 ,username:.8 ,state:.8 ,"
                "timeused:.10 ,timelimit:.9 ,numnodes:.6 ,reasonlist:0")
#: Width of an ``-O`` field given without ``:size``.
DEFAULT_LONG_WIDTH = 20
#: ``%all`` expands to every letter, separated by ``|``.
ALL_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class FormatItem:
    """One piece of a format: a field (None for a prefix or an unknown code) and its text."""

    field: Optional[Any]
    width: int
    right: bool
    suffix: str


@dataclass(frozen=True)
class ParsedFormat:
    """The items of a format, and the error lines squeue printed while reading it."""

    items: Tuple[FormatItem, ...]
    errors: Tuple[str, ...] = ()


Lookup = Callable[[str], Optional[Any]]


def _split_token(token: str) -> Tuple[bool, int, str, str]:
    """``_parse_token``: ``.5u|`` → right-justified, width 5, letter ``u``, suffix ``|``."""
    right = token.startswith(".")
    i = 1 if right else 0
    digits = ""
    while i < len(token) and "0" <= token[i] <= "9":
        digits += token[i]
        i += 1
    letter = token[i] if i < len(token) else ""
    return right, int(digits or "0"), letter, token[i + 1:]


def parse_format(fmt: str, lookup: Lookup = job_field_by_letter,
                 what: str = "job", all_format: Optional[str] = None) -> ParsedFormat:
    """Read an ``-o`` format; ``what`` is ``job`` or ``job step`` (for the error wording);
    ``%all`` is ``all_format`` (default: every letter, separated by ``|``)."""
    items: List[FormatItem] = []
    errors: List[str] = []
    start = fmt.find("%")
    if start != 0:
        items.append(FormatItem(None, 0, False, fmt if start < 0 else fmt[:start]))
        if start < 0:
            return ParsedFormat(tuple(items))
        fmt = fmt[start:]
    everything = fmt.lower() == "%all"
    if everything:
        fmt = all_format or "|".join(f"%{letter}" for letter in ALL_LETTERS)
    for token in (t for t in fmt.split("%") if t):
        right, width, letter, suffix = _split_token(token)
        field = lookup(letter) if letter else None
        if field is not None:
            items.append(FormatItem(field, width, right, suffix))
        elif not everything:
            items.append(FormatItem(None, width, right, "%" + token))
            errors.append(f"Invalid {what} format specification: {letter}")
    return ParsedFormat(tuple(items), tuple(errors))


def parse_long_format(spec: str, lookup: Lookup = job_field_by_name,
                      what: str = "job", everything: Optional[ParsedFormat] = None
                      ) -> ParsedFormat:
    """Read an ``-O`` list: ``name[:[.][size][suffix]]``, comma-separated, width 20 by default;
    the name ``all`` (any case) stands for ``everything`` when given (sinfo's ``%all``)."""
    items: List[FormatItem] = []
    errors: List[str] = []
    for token in (t for t in spec.split(",") if t):
        name, colon, rest = token.partition(":")
        if everything is not None and name.lower() == "all":
            items.extend(everything.items)
            continue
        right, width, suffix = False, DEFAULT_LONG_WIDTH, ""
        if colon:
            right = rest.startswith(".")
            width, suffix = strtol(rest[1:] if right else rest)
        field = lookup(name)
        if field is None:
            errors.append(f"Invalid {what} format specification: {name}")
        items.append(FormatItem(field, width, right, suffix))
    return ParsedFormat(tuple(items), tuple(errors))


def header_line(items: Sequence[FormatItem]) -> str:
    """The title line: each field's title under the field's own width rules."""
    out = []
    for item in items:
        if item.field is not None:
            right = item.right and not getattr(item.field, "header_left", False)
            out.append(squeue_cell(item.field.header, item.width, right, item.field.header_cut))
        out.append(item.suffix)
    return "".join(out)


def row_line(items: Sequence[FormatItem], record: Any, ctx: JobContext) -> str:
    """One record's line (``record`` is a job, or a ``(job, step)`` pair for steps)."""
    out = []
    for item in items:
        if item.field is not None:
            value = item.field.value(record, ctx)
            out.append(squeue_cell(value, item.width, item.right, item.field.cuts(record)))
        out.append(item.suffix)
    return "".join(out)


def render(parsed: ParsedFormat, records: Sequence[Any], ctx: JobContext, header: bool,
           date_line: bool = False) -> str:
    """The whole listing: optional date line, optional title line, one line per record."""
    lines = [ctime_line(ctx.now)] if date_line and header else []
    if header:
        lines.append(header_line(parsed.items))
    lines.extend(row_line(parsed.items, record, ctx) for record in records)
    return "".join(line + "\n" for line in lines)


def format_squeue(records: Sequence[JobRecord], fmt: str, now: int, header: bool = True,
                  time_format: Optional[str] = None, date_line: bool = False) -> str:
    """squeue's listing for an ``-o`` format (``date_line``: ``-l``'s date on top)."""
    return render(parse_format(fmt), records, JobContext(now, time_format), header, date_line)


def format_squeue_fields(records: Sequence[JobRecord], spec: str, now: int,
                         header: bool = True, time_format: Optional[str] = None,
                         date_line: bool = False) -> str:
    """squeue's listing for an ``-O`` field list."""
    return render(parse_long_format(spec), records, JobContext(now, time_format), header,
                  date_line)
