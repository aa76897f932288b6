"""``--help`` and ``--usage`` of the reporting commands, derived from their option tables.

Each command module has its option table (spellings), ``DOCS`` (what each option does
here, or why sbatch-k8s refuses it) and ``SYNOPSIS``. Help lists every option once, with
all its spellings, and tags the refused ones; the usage line lists them briefly. A test
keeps ``DOCS`` covering every key of every table, so no option can go undocumented.
"""

from __future__ import annotations

import importlib
from typing import Dict, List, Mapping, Sequence, Tuple

from parsers.report_options.argv import OptionDoc, ReportOption

#: The reporting commands and the name of each one's option table.
TABLES = {"scancel": "SCANCEL_OPTIONS", "squeue": "SQUEUE_OPTIONS", "sacct": "SACCT_OPTIONS",
          "sinfo": "SINFO_OPTIONS", "scontrol": "SCONTROL_OPTIONS", "sstat": "SSTAT_OPTIONS"}


def command_tables(command: str) -> Tuple[Sequence[ReportOption], Mapping[str, OptionDoc], str]:
    """A reporting command's option table, its documentation and its synopsis."""
    module = importlib.import_module(f"parsers.report_options.{command}_options")
    return getattr(module, TABLES[command]), module.DOCS, module.SYNOPSIS


def _spellings(table: Sequence[ReportOption]) -> Dict[str, List[str]]:
    names: Dict[str, List[str]] = {}
    for option in table:
        spelled = names.setdefault(option.key, [])
        if option.short and f"-{option.short}" not in spelled:
            spelled.insert(0, f"-{option.short}")
        if option.long:
            spelled.append(f"--{option.long}")
    return names


def report_help(command: str) -> str:
    """The help text: the synopsis, then one entry per option."""
    table, docs, synopsis = command_tables(command)
    lines = [f"Usage: {command} {synopsis}", "",
             "Options (those sbatch-k8s refuses say why in brackets):"]
    for key, spelled in _spellings(table).items():
        entry = docs[key]
        text = ", ".join(spelled) + (f"={entry.meta}" if entry.meta else "")
        note = f" [not supported: {entry.refused}]" if entry.refused else ""
        if len(text) > 32:
            lines += [f"  {text}", f"  {'':<32} {entry.text}{note}"]
        else:
            lines.append(f"  {text:<32} {entry.text}{note}")
    return "\n".join(lines) + "\n"


def report_usage(command: str) -> str:
    """The brief usage: every applied option in one bracket each, wrapped at 79 columns."""
    table, docs, synopsis = command_tables(command)
    words = []
    for key, spelled in _spellings(table).items():
        entry = docs[key]
        if not entry.refused:
            words.append(f"[{spelled[0]}{' ' + entry.meta if entry.meta else ''}]")
    prefix = f"Usage: {command} "
    lines, line = [], prefix
    operands = [w for w in synopsis.split() if w.strip("[]<>").lower() not in ("options",
                                                                             "option")]
    for word in words + operands:
        if len(line) + len(word) > 79 and line.strip() != prefix.strip():
            lines.append(line.rstrip())
            line = " " * len(prefix)
        line += word + " "
    lines.append(line.rstrip())
    return "\n".join(lines) + "\n"
