"""getopt_long as Slurm's commands use it (option string starting with ``+``).

* Parsing stops at the first non-option word (POSIX mode) and after ``--``; what follows is the
  script (or the step's command) and its arguments.
* ``--opt=value`` and ``--opt value`` for required arguments; ``-N2`` and ``-N 2``; short flags
  cluster (``-vvl``); optional arguments only with ``=`` (long) or glued (short: ``-K1``).
* Unambiguous prefixes of long options are accepted (``--part=gpu``); an exact name always wins.
* Errors are glibc's messages, followed by Slurm's ``Try "<cmd> --help" …`` line, exit 255,
  plus a "did you mean" hint for unknown options.
"""

from __future__ import annotations

from typing import List, NamedTuple, Optional, Sequence, Tuple

from parsers.errors import SlurmInputError
from parsers.options import NO_ARG, OPTIONAL, REQUIRED, Option, long_names, short_names


class GivenOption(NamedTuple):
    """One option occurrence: its row, the raw value (None for flags), and where it came from
    (``"command line"``, an environment variable name, or ``"<file>:<line>"``)."""

    option: Option
    raw: Optional[str]
    source: str
    spelled: str


class ParsedArgs(NamedTuple):
    """Options in the order given, and the words after them (script/command and arguments)."""

    options: Tuple[GivenOption, ...]
    operands: Tuple[str, ...]


def _usage_error(command: str, message: str, hint: Optional[str] = None) -> SlurmInputError:
    extra = f'Try "{command} --help" for more information'
    if hint:
        extra += f"\n{command}: {hint}"
    return SlurmInputError(message, plain=True, hint=extra)


def _did_you_mean(word: str, candidates: Sequence[str]) -> Optional[str]:
    import difflib

    close = difflib.get_close_matches(word, candidates, n=1, cutoff=0.75)
    return f"did you mean '--{close[0]}'?" if close else None


def _match_long(command: str, name: str, whole: str) -> Option:
    table = long_names(command)
    if name in table:
        return table[name]
    matches = sorted(n for n in table if n.startswith(name))
    rows = {id(table[n]): table[n] for n in matches}
    if len(rows) == 1:
        return next(iter(rows.values()))
    if not matches:
        raise _usage_error(command, f"unrecognized option '--{whole}'",
                           _did_you_mean(name, sorted(table)))
    listed = " ".join(f"'--{n}'" for n in matches)
    raise _usage_error(command, f"option '--{whole}' is ambiguous; possibilities: "
                                f"{listed}")


def parse_args(
    command: str,
    argv: Sequence[str],
    source: str = "command line",
    word_sources: Optional[Sequence[str]] = None,
) -> ParsedArgs:
    """Split ``argv`` (without the program name) into options and operands.

    ``word_sources`` (parallel to ``argv``) names where each word came from, for directives
    read from several script lines; otherwise every option's source is ``source``. Errors
    raised for a word read from a script carry that word's source as their location.
    """
    given: List[GivenOption] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            i += 1
            break
        if not word.startswith("-") or word == "-":
            break
        here = word_sources[i] if word_sources is not None else source
        try:
            if word.startswith("--"):
                i = _parse_long(command, argv, i, here, given)
            else:
                i = _parse_short_cluster(command, argv, i, here, given)
        except SlurmInputError as e:
            if word_sources is not None and e.location is None:
                e.location = here
            raise
    return ParsedArgs(tuple(given), tuple(argv[i:]))


def _parse_long(
    command: str, argv: Sequence[str], i: int, source: str, given: List[GivenOption]
) -> int:
    """Read one ``--name[=value]`` word (and its separate value); returns the next index."""
    word = argv[i]
    body = word[2:]
    name, eq, value = body.partition("=")
    option = _match_long(command, name, body)
    raw: Optional[str] = None
    if option.arg == NO_ARG:
        if eq:
            raise _usage_error(command, f"option '--{option.long}' "
                                        "doesn't allow an argument")
    elif eq:
        raw = value
    elif option.arg == REQUIRED:
        if i + 1 >= len(argv):
            raise _usage_error(command, f"option '--{option.long}' "
                                        "requires an argument")
        i += 1
        raw = argv[i]
    given.append(GivenOption(option, raw, source, word))
    return i + 1


def _parse_short_cluster(
    command: str, argv: Sequence[str], i: int, source: str, given: List[GivenOption]
) -> int:
    """Read one ``-abc`` word; returns the index of the next word to read."""
    word = argv[i]
    table = short_names(command)
    j = 1
    while j < len(word):
        letter = word[j]
        option = table.get(letter)
        if option is None:
            raise _usage_error(command, f"invalid option -- '{letter}'")
        rest = word[j + 1:]
        if option.arg == NO_ARG:
            given.append(GivenOption(option, None, source, f"-{letter}"))
            j += 1
            continue
        if rest:
            given.append(GivenOption(option, rest, source, f"-{letter}{rest}"))
            return i + 1
        if option.arg == OPTIONAL:
            given.append(GivenOption(option, None, source, f"-{letter}"))
            return i + 1
        if i + 1 >= len(argv):
            raise _usage_error(command, f"option requires an argument -- '{letter}'")
        given.append(GivenOption(option, argv[i + 1], source, f"-{letter} {argv[i + 1]}"))
        return i + 2
    return i + 1
