"""Reading a batch script exactly as sbatch does.

* :func:`check_script` — sbatch's sanity checks, with its messages (empty, whitespace only,
  no ``#!``, NUL byte, DOS line breaks).
* :func:`wrap_command` — the script ``--wrap`` builds.
* :func:`directive_words` — the words of the ``#SBATCH`` header: directives only before the
  first command, only at column 0, ``#`` ends a directive, quotes group, backslash escapes, no
  variable expansion, only C's blanks separate words. Each word remembers ``file:line``. A
  ``#SBATCH hetjob`` line (a heterogeneous job's next component) is refused.
* :func:`find_steps` — the ``srun`` lines of the script body, for reporting.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from parsers.input_errors import EXIT_SUBMIT_ERROR, SlurmInputError, fatal
from parsers.formats.cnumbers import C_BLANKS
from parsers.jobspec import Diagnostic, StepRecord
from parsers.options import SBATCH

MAGIC = "#SBATCH"
OLD_MAGIC = "#SLURM"
#: sbatch's ``error()`` for the first ``#SLURM`` directive of a script; sbatch goes on.
OLD_MAGIC_ERROR = ("Change from #SLURM to #SBATCH in your script and verify the options are "
                   "valid in sbatch")
_FOREIGN_MAGIC = ("#PBS", "#BSUB")
#: The end of the note on a ``#PBS``/``#BSUB`` line (dropped under ``--ignore-pbs``).
FOREIGN_NOTE = " directives are not translated; write them as #SBATCH"


def check_script(text: str) -> None:
    """Raise sbatch's error for a script the controller would not accept.

    ``_get_script_buffer``'s checks of a script file or stdin (not of ``--wrap``'s): only
    whitespace is C's ``isspace`` up to the first NUL (``xstring_is_whitespace`` stops at
    ``strlen``); a ``\\r\\n`` anywhere is a DOS line break, a lone ``\\r`` is not.
    """
    if text == "":
        raise SlurmInputError("Batch script is empty!", exit_code=EXIT_SUBMIT_ERROR)
    if text.split("\0", 1)[0].strip(C_BLANKS) == "":
        raise SlurmInputError("Batch script contains only whitespace!",
                              exit_code=EXIT_SUBMIT_ERROR)
    if not text.startswith("#!"):
        raise SlurmInputError(
            "This does not look like a batch script.  The first",
            "line must start with #! followed by the path to an interpreter.",
            "For instance: #!/bin/sh",
            exit_code=EXIT_SUBMIT_ERROR)
    if "\0" in text:
        raise SlurmInputError("The Slurm controller does not allow scripts that",
                              "contain a NULL character '\\0'.", exit_code=EXIT_SUBMIT_ERROR)
    if "\r\n" in text:
        raise SlurmInputError("Batch script contains DOS line breaks (\\r\\n)",
                              "instead of expected UNIX line breaks (\\n).",
                              exit_code=EXIT_SUBMIT_ERROR)


def wrap_command(command: str) -> str:
    """The script sbatch builds for ``--wrap=<command>``."""
    return f"#!/bin/sh\n# This script was created by sbatch --wrap.\n\n{command}\n"


def _is_het_separator(text: str, at: int) -> bool:
    """Whether ``hetjob`` (or the deprecated ``packjob``) starts at ``at``, as a word:
    ``xstrncasecmp`` (ASCII case only), then the end of the line or a C blank."""
    for word in ("hetjob", "packjob"):
        end = at + len(word)
        head, after = text[at:end], text[end:end + 1]
        if head.isascii() and head.lower() == word and (not after or after in C_BLANKS):
            return True
    return False


def _split_directive(file: str, line_no: int, rest: str) -> List[str]:
    """Tokenize the text after ``#SBATCH`` and its blanks like sbatch's ``get_argument``
    (26.05), called until it returns no argument.

    Only C's ``isspace`` separates words. A word that yields no text (``''``, a lone
    backslash at the end of the line or before a tab, a ``#``, a ``hetjob`` separator
    that Slurm blanks) makes ``get_argument`` return NULL, which ends the line. Its fatal
    errors show the text that call was given: the rest of the line from the end of the
    previous word (``[ --job-name="x]``).
    """
    words: List[str] = []
    i, n = 0, len(rest)
    while True:
        call_start = i
        while i < n and rest[i] in C_BLANKS:
            i += 1
        if _is_het_separator(rest, i):
            return words
        if i < n and rest[i] == ":":
            raise fatal(f"{file}: line {line_no}: Unexpected `:` in [{rest[call_start:]}]")
        word: List[str] = []
        quote = ""
        escaped = False
        while i < n and (quote or rest[i] not in C_BLANKS):
            ch = rest[i]
            if escaped:
                escaped = False
            elif ch == "\\":
                i += 1
                if rest[i:i + 1] == " ":
                    word.append(" ")
                    i += 1
                else:
                    escaped = True
                continue
            elif quote:
                if ch == quote:
                    quote = ""
                    i += 1
                    continue
            elif ch in "\"'":
                quote = ch
                i += 1
                continue
            elif ch == "#":
                break
            word.append(ch)
            i += 1
        if quote:
            raise fatal(f"{file}: line {line_no}: Unmatched `{quote}` in [{rest[call_start:]}]")
        if not word:
            return words
        words.append("".join(word))


def _is_command(line: str) -> bool:
    """A line that ends the directive header: its first non-blank character (C blanks
    only) is not ``#``."""
    stripped = line.lstrip(C_BLANKS)
    return bool(stripped) and not stripped.startswith("#")


def directive_words(
    text: str, file: str
) -> Tuple[Tuple[str, ...], Tuple[str, ...], Tuple[Diagnostic, ...]]:
    """Words of the ``#SBATCH`` header, the ``file:line`` of each, and notes.

    Notes cover ``#SLURM`` (Slurm's own error line, once per script, severity ``error``),
    ``#PBS``/``#BSUB`` lines (not translated), and ``#SBATCH`` lines after the first command
    (silently ignored by Slurm; we say so). An error raised here carries the ``#SLURM`` line
    if one came first, as Slurm has printed it by then.
    """
    words: List[str] = []
    sources: List[str] = []
    notes: List[Diagnostic] = []
    lines = text.split("\n")
    header_end = len(lines)
    for index, line in enumerate(lines):
        line_no = index + 1
        if line.startswith(MAGIC):
            rest = line[len(MAGIC):]
        elif line.startswith(OLD_MAGIC):
            rest = line[len(OLD_MAGIC):]
            if not any(n.message == OLD_MAGIC_ERROR for n in notes):
                notes.append(Diagnostic(OLD_MAGIC_ERROR, severity="error"))
        else:
            for magic in _FOREIGN_MAGIC:
                if line.startswith(magic):
                    notes.append(Diagnostic(magic + FOREIGN_NOTE, f"{file}:{line_no}"))
            if _is_command(line):
                header_end = index
                break
            continue
        rest = rest.lstrip(C_BLANKS)
        if _is_het_separator(rest, 0):
            raise shown_before(SlurmInputError(
                f"{file}:{line_no}: {line.strip(C_BLANKS)}: heterogeneous jobs are not "
                "supported by sbatch-k8s"), notes)
        try:
            line_words = _split_directive(file, line_no, rest)
        except SlurmInputError as e:
            shown_before(e, notes)
            raise
        for word in line_words:
            words.append(word)
            sources.append(f"{file}:{line_no}: {line.strip(C_BLANKS)}")
    for index in range(header_end + 1, len(lines)):
        if lines[index].startswith(MAGIC):
            notes.append(Diagnostic("#SBATCH after the first command is ignored (as by Slurm)",
                                    f"{file}:{index + 1}"))
    return tuple(words), tuple(sources), tuple(notes)


def shown_before(error: SlurmInputError, notes: Sequence[Diagnostic]) -> SlurmInputError:
    """``error`` after the ``error``-severity notes, which sbatch has printed by the time it
    fails (``sbatch: error: Change from #SLURM …`` before an option error)."""
    return error.after(*(f"{SBATCH}: error: {n.message}" for n in notes
                         if n.severity == "error"))


def _logical_lines(text: str) -> List[Tuple[int, str]]:
    """Script lines with backslash-newline continuations joined, with their first line no."""
    out: List[Tuple[int, str]] = []
    pending: Optional[Tuple[int, List[str]]] = None
    for index, line in enumerate(text.split("\n")):
        if pending is None:
            pending = (index + 1, [])
        if line.endswith("\\") and not line.endswith("\\\\"):
            pending[1].append(line[:-1])
            continue
        pending[1].append(line)
        out.append((pending[0], " ".join(pending[1])))
        pending = None
    if pending is not None:
        out.append((pending[0], " ".join(pending[1])))
    return out


_COMMAND_STARTERS = {";", "&&", "||", "|", "&", "(", "$(", "`", "then", "do", "else", "exec",
                     "time", "nohup", "command", "eval"}


def _shell_words(line: str) -> List[str]:
    """Approximate shell words of a line (quotes grouped, comments dropped); never raises."""
    import shlex

    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()`")
    lexer.whitespace_split = True
    lexer.commenters = ""
    words: List[str] = []
    try:
        for word in lexer:
            if word.startswith("#"):
                break
            words.append(word)
    except ValueError:
        return line.split()
    return words


def find_steps(text: str) -> Tuple[StepRecord, ...]:
    """Every ``srun`` invocation of the script, with its options as given (values unexpanded).

    Only reporting uses this (lint, the image a pyxis script asks for); the runtime runs the
    script as it is.
    """
    from parsers.getopt import parse_args

    steps: List[StepRecord] = []
    for line_no, line in _logical_lines(text):
        if "srun" not in line or line.lstrip().startswith("#"):
            continue
        words = _shell_words(line)
        for at, word in enumerate(words):
            if word != "srun" and not word.endswith("/srun"):
                continue
            before = words[at - 1] if at else ";"
            if before not in _COMMAND_STARTERS and "=" not in before and at != 0:
                continue
            tail = _until_operator(words[at + 1:])
            try:
                parsed = parse_args("srun", tail)
            except SlurmInputError:
                continue
            options = tuple((g.option.long, g.raw) for g in parsed.options)
            steps.append(StepRecord(line_no, line.strip(), options, parsed.operands))
    return tuple(steps)


def _until_operator(words: Sequence[str]) -> List[str]:
    out: List[str] = []
    for word in words:
        if word in (";", "&&", "||", "|", "&", ")", "`"):
            break
        out.append(word)
    return out
