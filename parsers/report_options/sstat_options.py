"""``sstat`` command line → :class:`SstatQuery` (``src/sstat/options.c`` of Slurm 22.05).

``-j`` takes sacct's job/step list (``12``, ``12.0``, ``12.batch``; a bad one is ``sstat: fatal:
Bad job/step specified: abc``); job ids may also come as operands; none at all is ``sstat:
error: You didn't give me any jobs to stat.`` (exit 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from parsers.formats.sacct_format import FieldSpec, parse_format
from parsers.formats.sstat_format import DEFAULT_FIELDS, SSTAT_FIELDS
from parsers.input_errors import SlurmInputError
from parsers.report_options.argv import doc, options, parse_argv, refuse_unapplied
from parsers.report_options.ids import JobId, parse_sacct_jobs

COMMAND = "sstat"
SSTAT_OPTIONS = options(
    ("allsteps/a", "0", "allsteps"), ("fields", "1", "format"), ("format/o", "1", "format"),
    ("helpformat/e", "0", "helpformat"), ("help/h", "0", "help"),
    ("jobs/j", "1", "jobs"), ("noconvert", "0", "noconvert"), ("noheader/n", "0", "noheader"),
    ("parsable/p", "0", "parsable"), ("parsable2/P", "0", "parsable2"),
    ("pidformat/i", "0", "pidformat"), ("usage", "0", "usage"),
    ("verbose/v", "0", "verbose"), ("version/V", "0", "version"),
)
ACTIONS = ("help", "usage", "version", "helpformat")
SYNOPSIS = "[options] -j job[.stepid]"
#: Every option, applied or refused (``refused`` set): what ``--help`` prints.
DOCS = {
    "allsteps": doc("", "every running step of the jobs (batch too)"),
    "format": doc("field_list", "fields to print"),
    "helpformat": doc("", "list the fields -o accepts"),
    "help": doc("", "show this help message"),
    "jobs": doc("job(.step)", "the jobs or steps to report"),
    "noconvert": doc("", "memory amounts in bytes, not converted to units"),
    "noheader": doc("", "no header"),
    "parsable": doc("", "'|' after every field"),
    "parsable2": doc("", "'|' between fields"),
    "pidformat": doc("", "the pids of each step's tasks per node",
                     refused="task pids are not recorded"),
    "usage": doc("", "brief usage"),
    "verbose": doc("", "verbosity level"),
    "version": doc("", "output version information and exit"),
}


@dataclass(frozen=True)
class SstatQuery:
    """What ``sstat`` was asked; ``action`` is set for help/usage/version/helpformat."""

    jobs: Tuple[JobId, ...] = ()
    fields: Tuple[FieldSpec, ...] = ()
    all_steps: bool = False
    parsable: Optional[str] = None
    header: bool = True
    noconvert: bool = False
    verbose: int = 0
    action: Optional[str] = None


def parse_sstat_args(argv: Sequence[str]) -> SstatQuery:
    """Parse sstat's arguments (Slurm's errors as :class:`SlurmInputError`)."""
    given, operands = parse_argv(COMMAND, SSTAT_OPTIONS, argv)
    for action in ACTIONS:
        if any(g.key == action for g in given):
            return SstatQuery(action=action)
    refuse_unapplied(given, SSTAT_OPTIONS, DOCS)
    seen: Dict[str, Optional[str]] = {}
    jobs: List[JobId] = []
    verbose = 0
    for g in given:
        if g.key == "jobs":
            jobs.extend(parse_sacct_jobs(g.value or ""))
        elif g.key == "verbose":
            verbose += 1
        else:
            seen[g.key] = g.value
    for word in operands:
        jobs.extend(parse_sacct_jobs(word))
    if not jobs:
        raise SlurmInputError("You didn't give me any jobs to stat.", exit_code=1)
    parsable = "P" if "parsable2" in seen else "p" if "parsable" in seen else None
    fields = parse_format(seen.get("format") or DEFAULT_FIELDS, SSTAT_FIELDS)
    return SstatQuery(tuple(jobs), tuple(fields), "allsteps" in seen, parsable,
                      "noheader" not in seen, "noconvert" in seen, verbose)
