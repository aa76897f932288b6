"""The option tables of the reporting commands (squeue, sacct, scancel, sinfo, scontrol).

These commands call getopt_long with an option string that does not start with ``+``, so
glibc *permutes*: words that are not options may appear anywhere and are handed back as
operands. Splitting is :func:`parsers.getopt.getopt_long`; this module holds their table
format and the wrapper with their error conventions (all exit 1; some print no
``Try "<cmd> --help"`` line).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from parsers.input_errors import EXIT_SUBMIT_ERROR, SlurmInputError
from parsers.getopt import Style, getopt_long
from parsers.options import NO_ARG, OPTIONAL, REQUIRED


@dataclass(frozen=True)
class ReportOption:
    """One ``struct option``: long name, short letter, argument kind, and the key the parsed
    value is stored under (options sharing a key are spellings of one option)."""

    long: str
    short: Optional[str]
    arg: str
    key: str


@dataclass(frozen=True)
class Given:
    """One option occurrence: its key, its value (None for flags), and how it was spelled."""

    key: str
    value: Optional[str]
    spelled: str


@dataclass(frozen=True)
class OptionDoc:
    """What one option (all spellings of one key) does here, for ``--help`` and the audit:
    ``meta`` names its argument (empty for flags); a non-empty ``refused`` says why
    sbatch-k8s refuses it — every option a command accepts is either applied or refused."""

    meta: str
    text: str
    refused: str = ""


#: Why --json/--yaml are refused (every reporting command).
OPENAPI_REFUSED = ("no faithful rendering of Slurm's openapi output yet; use the table or "
                   "--parsable2/-o")


def doc(meta: str, text: str, refused: str = "") -> OptionDoc:
    """One row of a command's option documentation table."""
    return OptionDoc(meta, text, refused)


def refuse_unapplied(given: Sequence[Given], table: Sequence[ReportOption],
                     docs: Mapping[str, OptionDoc]) -> None:
    """Raise the one-line refusal of the first given option sbatch-k8s does not apply."""
    for g in given:
        reason = docs[g.key].refused if g.key in docs else ""
        if reason:
            name = next((o.long for o in table if o.key == g.key and o.long), g.key)
            raise SlurmInputError(f"--{name} is not supported by sbatch-k8s: {reason}",
                                  exit_code=EXIT_SUBMIT_ERROR)


def options(*rows: Tuple[str, str, str]) -> Tuple[ReportOption, ...]:
    """Build a table from ``("long/s", "0|1|?", key)`` rows (``-`` as long name: short only)."""
    kinds = {"0": NO_ARG, "1": REQUIRED, "?": OPTIONAL}
    table = []
    for names, arg, key in rows:
        long, _, short = names.partition("/")
        table.append(ReportOption(long if long != "-" else "", short or None, kinds[arg], key))
    return tuple(table)


def comma_list(text: str) -> Tuple[str, ...]:
    """The items of a comma-separated option value, empty ones skipped (``strtok``)."""
    return tuple(item for item in text.split(",") if item)


def _same(a: ReportOption, b: ReportOption) -> bool:
    return a.key == b.key and a.arg == b.arg


def parse_argv(
    command: str, table: Sequence[ReportOption], argv: Sequence[str], try_help: bool = True
) -> Tuple[List[Given], List[str]]:
    """Split ``argv`` (without the program name) into options in order and operands."""
    longs: Dict[str, ReportOption] = {}
    for option in table:
        if option.long:
            longs.setdefault(option.long, option)
    shorts = {o.short: o for o in table if o.short}
    style = Style(command, permute=True, exit_code=EXIT_SUBMIT_ERROR, try_help=try_help)
    found, operands = getopt_long(style, argv, longs, shorts, lambda o: o.arg, _same)
    return [Given(o.row.key, o.raw, o.spelled) for o in found], operands


__all__ = ("ReportOption", "Given", "OptionDoc", "doc", "refuse_unapplied", "options",
           "comma_list", "parse_argv", "OPENAPI_REFUSED")
