"""getopt_long as the reporting commands (squeue, sacct, scancel, sinfo, scontrol) use it.

Unlike sbatch and srun (:mod:`parsers.getopt`, POSIX mode), these commands call getopt_long
with an option string that does not start with ``+``, so glibc *permutes*: words that are not
options may appear anywhere and are handed back as operands, in order, after the options;
``--`` ends the options. Long names may be abbreviated; an abbreviation matching several
names is ambiguous unless they all are spellings of the same option (``--nod`` is squeue's
``--nodelist``). Optional arguments are taken only glued (``-j1008``) or after ``=``.

Errors are glibc's messages (the possibilities of an ambiguous name listed in table order),
then the command's own ``Try "<cmd> --help" …`` line when it prints one; all exit 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from parsers.errors import EXIT_SUBMIT_ERROR, SlurmInputError

NO_ARG, REQUIRED, OPTIONAL = "none", "required", "optional"


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


def _error(command: str, message: str, try_help: bool) -> SlurmInputError:
    hint = f'Try "{command} --help" for more information' if try_help else None
    return SlurmInputError(message, plain=True, hint=hint, exit_code=EXIT_SUBMIT_ERROR)


def _same(a: ReportOption, b: ReportOption) -> bool:
    return a.key == b.key and a.arg == b.arg


def _match_long(command: str, table: Sequence[ReportOption], body: str,
                try_help: bool) -> ReportOption:
    name = body.partition("=")[0]
    longs = [o for o in table if o.long]
    exact = next((o for o in longs if o.long == name), None)
    if exact is not None:
        return exact
    matches = [o for o in longs if o.long.startswith(name)]
    if not matches:
        raise _error(command, f"unrecognized option '--{body}'", try_help)
    first = matches[0]
    if all(_same(first, other) for other in matches[1:]):
        return first
    listed = " ".join(f"'--{o.long}'" for o in matches)
    raise _error(command, f"option '--{body}' is ambiguous; possibilities: {listed}", try_help)


def parse_argv(
    command: str, table: Sequence[ReportOption], argv: Sequence[str], try_help: bool = True
) -> Tuple[List[Given], List[str]]:
    """Split ``argv`` (without the program name) into options in order and operands."""
    shorts: Dict[str, ReportOption] = {o.short: o for o in table if o.short}
    given: List[Given] = []
    operands: List[str] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        i += 1
        if word == "--":
            operands.extend(argv[i:])
            break
        if not word.startswith("-") or word == "-":
            operands.append(word)
            continue
        if word.startswith("--"):
            body = word[2:]
            option = _match_long(command, table, body, try_help)
            _, eq, value = body.partition("=")
            if option.arg == NO_ARG and eq:
                raise _error(command, f"option '--{option.long}' doesn't allow an argument",
                             try_help)
            if option.arg == REQUIRED and not eq:
                if i >= len(argv):
                    raise _error(command, f"option '--{option.long}' requires an argument",
                                 try_help)
                value, eq, i = argv[i], "=", i + 1
            given.append(Given(option.key, value if eq else None, word))
            continue
        j = 1
        while j < len(word):
            letter = word[j]
            option = shorts.get(letter)
            if option is None:
                raise _error(command, f"invalid option -- '{letter}'", try_help)
            rest = word[j + 1:]
            if option.arg == NO_ARG:
                given.append(Given(option.key, None, f"-{letter}"))
                j += 1
                continue
            if rest or option.arg == OPTIONAL:
                given.append(Given(option.key, rest or None, word))
            elif i < len(argv):
                given.append(Given(option.key, argv[i], f"-{letter} {argv[i]}"))
                i += 1
            else:
                raise _error(command, f"option requires an argument -- '{letter}'", try_help)
            break
    return given, operands
