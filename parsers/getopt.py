"""getopt_long, as Slurm's commands call it — the one option-splitting engine of the project.

* ``--opt=value`` and ``--opt value`` for required arguments; ``-N2`` and ``-N 2``; short flags
  cluster (``-vvl``); optional arguments only with ``=`` (long) or glued (short: ``-K1``).
* Unambiguous prefixes of long options are accepted (``--part=gpu``); an exact name always
  wins; a prefix shared by several spellings of one option is not ambiguous.
* sbatch and srun use POSIX mode (option string starting with ``+``): parsing stops at the
  first non-option word — the script or the step's command — and after ``--``. The reporting
  commands let glibc *permute*: non-option words anywhere are handed back as operands.
* Errors are glibc's messages, then the command's ``Try "<cmd> --help" …`` line; sbatch and
  srun exit 255 and add a "did you mean" hint for unknown options, the others exit 1.

:func:`getopt_long` is the engine over any table; :func:`parse_args` applies it to the
sbatch/srun option table of :mod:`parsers.options`.
"""

from __future__ import annotations

from typing import Any, Callable, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from parsers.input_errors import EXIT_OPTION_ERROR, SlurmInputError
from parsers.options import NO_ARG, OPTIONAL, REQUIRED, Option, long_names, short_names


class Occurrence(NamedTuple):
    """One option as getopt_long returns it: the table row, its argument, how it was
    written, and the index of its first word in argv."""

    row: Any
    raw: Optional[str]
    spelled: str
    index: int


class Style(NamedTuple):
    """How a command calls getopt_long and reports its errors."""

    command: str
    permute: bool = False
    exit_code: int = EXIT_OPTION_ERROR
    try_help: bool = True
    suggest: bool = False


def _usage_error(style: Style, message: str, hint: Optional[str] = None) -> SlurmInputError:
    lines = []
    if style.try_help:
        lines.append(f'Try "{style.command} --help" for more information')
    if hint:
        lines.append(f"{style.command}: {hint}")
    return SlurmInputError(message, plain=True, hint="\n".join(lines) or None,
                           exit_code=style.exit_code)


def _did_you_mean(word: str, candidates: Sequence[str]) -> Optional[str]:
    import difflib

    close = difflib.get_close_matches(word, candidates, n=1, cutoff=0.75)
    return f"did you mean '--{close[0]}'?" if close else None


def _match_long(style: Style, longs: Mapping[str, Any], body: str,
                same: Callable[[Any, Any], bool]) -> Tuple[str, Any]:
    """The full long name ``body`` selects (exactly or as a prefix), and its row."""
    name = body.partition("=")[0]
    if name in longs:
        return name, longs[name]
    matches = [n for n in longs if n.startswith(name)]
    if not matches:
        hint = _did_you_mean(name, sorted(longs)) if style.suggest else None
        raise _usage_error(style, f"unrecognized option '--{body}'", hint)
    first = longs[matches[0]]
    if all(same(first, longs[other]) for other in matches[1:]):
        return matches[0], first
    listed = " ".join(f"'--{n}'" for n in matches)
    raise _usage_error(style, f"option '--{body}' is ambiguous; possibilities: {listed}")


def getopt_long(
    style: Style,
    argv: Sequence[str],
    longs: Mapping[str, Any],
    shorts: Mapping[str, Any],
    arg_of: Callable[[Any], str],
    same: Callable[[Any, Any], bool] = lambda a, b: a is b,
    on_found: Optional[Callable[[Occurrence], None]] = None,
) -> Tuple[List[Occurrence], List[str]]:
    """Options in order, and the operands. ``longs``/``shorts`` map spellings to rows (in the
    order glibc would list them), ``arg_of(row)`` is ``none``/``required``/``optional``.
    ``on_found`` sees each option as getopt_long returns it, before the next word is read
    (Slurm processes each option there, so its error comes before a later getopt error)."""
    found: List[Occurrence] = []
    operands: List[str] = []

    def add(occurrence: Occurrence) -> None:
        found.append(occurrence)
        if on_found is not None:
            on_found(occurrence)

    i = 0
    while i < len(argv):
        word = argv[i]
        start = i
        i += 1
        if word == "--":
            operands.extend(argv[i:])
            break
        if not word.startswith("-") or word == "-":
            if not style.permute:
                operands.extend(argv[start:])
                break
            operands.append(word)
            continue
        if word.startswith("--"):
            body = word[2:]
            long, row = _match_long(style, longs, body, same)
            _, eq, value = body.partition("=")
            kind = arg_of(row)
            if kind == NO_ARG and eq:
                raise _usage_error(style, f"option '--{long}' doesn't allow an argument")
            if kind == REQUIRED and not eq:
                if i >= len(argv):
                    raise _usage_error(style, f"option '--{long}' requires an argument")
                value, eq, i = argv[i], "=", i + 1
            add(Occurrence(row, value if eq else None, word, start))
            continue
        j = 1
        while j < len(word):
            letter = word[j]
            row = shorts.get(letter)
            if row is None:
                raise _usage_error(style, f"invalid option -- '{letter}'")
            rest = word[j + 1:]
            kind = arg_of(row)
            if kind == NO_ARG:
                add(Occurrence(row, None, f"-{letter}", start))
                j += 1
                continue
            if rest or kind == OPTIONAL:
                add(Occurrence(row, rest or None, f"-{letter}{rest}", start))
            elif i < len(argv):
                add(Occurrence(row, argv[i], f"-{letter} {argv[i]}", start))
                i += 1
            else:
                raise _usage_error(style, f"option requires an argument -- '{letter}'")
            break
    return found, operands


class GivenOption(NamedTuple):
    """One sbatch/srun option occurrence: its row, the raw value (None for flags), and where
    it came from (``"command line"``, an environment variable name, or ``"<file>:<line>"``)."""

    option: Option
    raw: Optional[str]
    source: str
    spelled: str


class ParsedArgs(NamedTuple):
    """Options in the order given, and the words after them (script/command and arguments)."""

    options: Tuple[GivenOption, ...]
    operands: Tuple[str, ...]


def parse_args(
    command: str,
    argv: Sequence[str],
    source: str = "command line",
    word_sources: Optional[Sequence[str]] = None,
    on_option: Optional[Callable[[GivenOption], None]] = None,
) -> ParsedArgs:
    """sbatch's or srun's options in ``argv`` (without the program name), POSIX mode.

    ``word_sources`` (parallel to ``argv``) names where each word came from, for directives
    read from several script lines; otherwise every option's source is ``source``. Errors
    raised for a word read from a script carry that word's source as their location.
    ``on_option`` sees each option as getopt returns it (see :func:`getopt_long`).
    """
    style = Style(command, suggest=True)

    def given(o: Occurrence) -> GivenOption:
        where = word_sources[o.index] if word_sources is not None else source
        return GivenOption(o.row, o.raw, where, o.spelled)

    def found_one(o: Occurrence) -> None:
        if on_option is not None:
            on_option(given(o))

    try:
        found, operands = getopt_long(style, argv, long_names(command), short_names(command),
                                      lambda row: row.arg, on_found=found_one)
    except SlurmInputError as e:
        if word_sources is not None and e.location is None:
            e.location = word_sources[_failing_word(argv)]
        raise
    return ParsedArgs(tuple(given(o) for o in found), tuple(operands))


def _failing_word(argv: Sequence[str]) -> int:
    """The word an option error is about: the last option word before the operands."""
    index = 0
    for i, word in enumerate(argv):
        if word.startswith("-") and word != "-":
            index = i
    return index


__all__ = ("getopt_long", "parse_args", "Style", "Occurrence", "GivenOption", "ParsedArgs")
