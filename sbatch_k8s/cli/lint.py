"""``sbatch --k8s-lint``: how each option of a script maps to Kubernetes.

One line per option occurrence (``#SBATCH`` directives, ``SBATCH_*`` variables, command-line
options): where it came from, the option as written, its support level, and what it becomes.
Values that Slurm would refuse are reported as ``invalid`` with Slurm's message. The exit
status is 0 when nothing is rejected or invalid.
"""

from __future__ import annotations

from typing import List, Mapping, Tuple

from parsers.errors import SlurmInputError
from parsers.getopt import GivenOption
from parsers.jobspec import BatchScript
from parsers.option_values import read_value
from parsers.options import REJECTED, SBATCH
from parsers.sbatch import COMMAND_LINE, CommandLine, env_options, script_options

INVALID = "invalid"


def _where(source: str) -> str:
    """``job.sh:3`` for a directive, the variable name, or ``command line``."""
    return source.split(": ", 1)[0] if source != COMMAND_LINE else source


def _row(given: GivenOption) -> Tuple[str, str, str, str]:
    option = given.option
    written = given.spelled
    if given.raw is not None and given.source != COMMAND_LINE and "=" not in written:
        written = f"--{option.long}={given.raw}"
    level = option.level(SBATCH) or REJECTED
    note = option.note
    try:
        if given.raw != "\0reset":
            read_value(option, given.raw)
    except SlurmInputError as e:
        level, note = INVALID, " ".join(e.lines)
    return _where(given.source), written, level, note


def lint_report(command_line: CommandLine, environ: Mapping[str, str],
                script: BatchScript) -> Tuple[str, bool]:
    """The report text and whether the job could be submitted as is."""
    rows: List[Tuple[str, str, str, str]] = []
    notes: List[str] = []
    try:
        from_script, header = script_options(script)
        notes = [f"{n.location + ': ' if n.location else ''}{n.message}" for n in header]
    except SlurmInputError as e:
        from_script = ()
        rows.append((e.location.split(": ", 1)[0] if e.location else script.display_name,
                     "", INVALID, " ".join(e.lines)))
    for given in from_script + env_options(environ) + command_line.options:
        if not given.option.long.startswith("k8s-"):
            rows.append(_row(given))
    widths = [max([len(r[i]) for r in rows] + [len(h)]) for i, h in
              enumerate(("WHERE", "OPTION", "SUPPORT"))]
    lines = [f"{'WHERE':<{widths[0]}}  {'OPTION':<{widths[1]}}  {'SUPPORT':<{widths[2]}}  "
             "ON KUBERNETES"]
    lines += [f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}"
              for r in rows]
    lines += [f"note: {n}" for n in notes]
    ok = not any(r[2] in (REJECTED, INVALID) for r in rows)
    return "\n".join(lines) + "\n", ok
