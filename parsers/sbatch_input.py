"""sbatch's option processing: command line, ``SBATCH_*`` environment and ``#SBATCH`` header
become one :class:`JobSpec` (plus the :class:`SubmitOptions` that steer sbatch itself).

Order (sbatch's second pass): script directives, then environment, then command line; a later
setting of the same option wins. Then Slurm's cross-option checks, with Slurm's messages.
"""

from __future__ import annotations

import posixpath
from typing import Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from parsers.input_errors import EXIT_SUBMIT_ERROR, SlurmInputError
from parsers.getopt import GivenOption, parse_args
from parsers.jobspec import (
    SCRIPT_FROM_STDIN,
    SCRIPT_FROM_WRAP,
    BatchScript,
    Diagnostic,
    JobSpec,
    OptionRecord,
    SubmitOptions,
    field_names,
)
from parsers.option_values import env_flag_is_set, read_value
from parsers.sbatch_checks import check_options
from parsers.options import (
    APPROXIMATED,
    IGNORED,
    NO_ARG,
    OPTIONAL,
    REJECTED,
    SBATCH,
    Option,
    env_sources,
)
from parsers.script import (
    FOREIGN_NOTE,
    check_script,
    directive_words,
    find_steps,
    shown_before,
    wrap_command,
)

COMMAND_LINE = "command line"
#: The raw value of an option its input environment variable resets (a flag variable set to
#: a false value, e.g. ``SBATCH_REQUEUE=no``): readers drop what earlier sources set.
RESET = "\0reset"
_JOB_FIELDS = field_names(JobSpec)
_SUBMIT_FIELDS = field_names(SubmitOptions)


class CommandLine(NamedTuple):
    """sbatch's argv split by getopt: options, then the script path and its arguments."""

    options: Tuple[GivenOption, ...]
    script_path: Optional[str]
    script_args: Tuple[str, ...]

    def value_of(self, long: str) -> Optional[str]:
        """Last raw value given for ``--long`` on the command line ("" for a flag)."""
        for given in reversed(self.options):
            if given.option.long == long:
                return given.raw if given.raw is not None else ""
        return None


def split_command_line(
    argv: Sequence[str], on_option: Optional[Callable[[GivenOption], None]] = None
) -> CommandLine:
    """getopt over sbatch's arguments (without the program name). A ``:`` where the script
    would be separates the option sets of a heterogeneous job, which is refused.
    ``on_option`` sees each option as getopt returns it."""
    parsed = parse_args(SBATCH, argv, on_option=on_option)
    script = parsed.operands[0] if parsed.operands else None
    if script == ":":
        raise SlurmInputError("heterogeneous jobs (':' between sets of options) are not "
                              "supported by sbatch-k8s")
    return CommandLine(parsed.options, script, tuple(parsed.operands[1:]))


#: Options sbatch's first pass answers at once and exits 0; nothing after them is read.
ANSWER_AT_ONCE = ("help", "usage", "version", "autocomplete")
#: Options whose variables sbatch reads before the command line (``_opt_early_env``:
#: SBATCH_IGNORE_PBS, SBATCH_DEBUG), so the script and the command line come after them.
EARLY_ENV = ("ignore-pbs", "verbose")
#: Options only sbatch's early pass sets (``sbatch_early_pass`` in ``slurm_opt.c``): in
#: ``#SBATCH`` lines they are ignored (real 22.05: ``#SBATCH -Q`` still prints the job id).
EARLY_PASS_ONLY = ("help", "quiet", "usage", "verbose", "version", "wrap")


def first_pass(argv: Sequence[str], environ: Optional[Mapping[str, str]] = None
               ) -> CommandLine:
    """sbatch's ``process_options_first_pass``: getopt over the command line, every option's
    value read as getopt returns it (``slurm_process_option`` as if set by the environment).

    So a bad value is reported before a later getopt error, before the script is read or
    checked, and before the ``#SLURM`` notice; ``--help`` and its kind end the pass. The
    cross-option checks wait for the whole job (:func:`build_job`). ``--k8s-lint`` reports
    bad values instead, so with it only getopt's errors stop the pass.
    """
    if environ is not None:
        for given in early_env_options(environ):
            if given.raw != RESET:
                read_value(given.option, given.raw)
    seen: List[GivenOption] = []
    try:
        command_line = split_command_line(argv, on_option=seen.append)
    except SlurmInputError:
        _read_first_pass_values(seen)
        raise
    if command_line.value_of("k8s-lint") is None:
        _read_first_pass_values(command_line.options)
    return command_line


def _read_first_pass_values(options: Sequence[GivenOption]) -> None:
    for given in options:
        if given.option.long in ANSWER_AT_ONCE:
            return
        read_value(given.option, given.raw)


def env_options(environ: Mapping[str, str], command: str = SBATCH) -> Tuple[GivenOption, ...]:
    """Options set through input environment variables, read as Slurm reads them."""
    found: List[GivenOption] = []
    for var, option in env_sources(command):
        if var not in environ:
            continue
        text = environ[var]
        raw: Optional[str] = text
        if option.arg == NO_ARG:
            # A flag's value only sets or resets it; -v's (SBATCH_DEBUG) is then its count.
            if not env_flag_is_set(text):
                raw = RESET
            elif option.kind != "count":
                raw = None
        elif option.arg == OPTIONAL and text == "":
            raw = None
        found.append(GivenOption(option, raw, var, f"{var}={text}"))
    return tuple(found)


def early_env_options(environ: Mapping[str, str]) -> Tuple[GivenOption, ...]:
    """The options set by the variables sbatch reads before everything else."""
    return tuple(g for g in env_options(environ) if g.option.long in EARLY_ENV)


def script_options(script: BatchScript) -> Tuple[Tuple[GivenOption, ...], Tuple[Diagnostic, ...]]:
    """The ``#SBATCH`` header of ``script`` as options, and the header's notes."""
    words, sources, notes = directive_words(script.text, script.display_name)
    try:
        parsed = parse_args(SBATCH, words, word_sources=sources)
        if parsed.operands:
            at = len(words) - len(parsed.operands)
            raise SlurmInputError(
                f"Invalid directive found in batch script: {parsed.operands[0]}",
                location=sources[at])
    except SlurmInputError as e:
        shown_before(e, notes)
        raise
    return parsed.options, notes


def load_script(
    command_line: CommandLine, text: Optional[str], display_path: Optional[str]
) -> BatchScript:
    """The script sbatch will submit: ``--wrap``'s, or ``text`` read by the caller from the
    file (``display_path``) or from stdin (``display_path`` None). Checks it as sbatch does."""
    wrap = command_line.value_of("wrap")
    if wrap is not None:
        if command_line.script_path is not None:
            raise SlurmInputError("Script arguments not permitted with --wrap option",
                                  exit_code=EXIT_SUBMIT_ERROR)
        return BatchScript(wrap_command(wrap), None, (), SCRIPT_FROM_WRAP)
    assert text is not None, "caller reads the script when there is no --wrap"
    check_script(text)
    if display_path is None:
        return BatchScript(text, None, command_line.script_args, SCRIPT_FROM_STDIN)
    return BatchScript(text, display_path, command_line.script_args)


#: Job fields that are names and labels, kept as text (unlike paths, which keep their bytes).
TEXT_FIELDS = ("job_name", "comment")


def stored_text(value: str) -> str:
    """``value`` as Slurm's accounting keeps it: a byte that is not UTF-8 (an argument
    decoded with ``surrogateescape``: ``-J $'caf\\xe9'``) becomes ``?``, as sacct prints it,
    so that the name can be stored, labelled and printed anywhere."""
    return "".join("?" if "\udc80" <= c <= "\udcff" else c for c in value)


def default_job_name(script: BatchScript) -> str:
    """Slurm's default: the script's file name, ``wrap`` for --wrap, ``sbatch`` for stdin."""
    if script.origin == SCRIPT_FROM_WRAP:
        return "wrap"
    if script.path is None:
        return "sbatch"
    return posixpath.basename(script.path)


class _Merged(NamedTuple):
    values: Dict[str, object]
    set_by: Dict[str, str]
    records: Tuple[OptionRecord, ...]
    notes: Tuple[Diagnostic, ...]


def _merge(ordered: Sequence[GivenOption]) -> _Merged:
    values: Dict[str, object] = {}
    set_by: Dict[str, str] = {}
    records: List[OptionRecord] = []
    notes: List[Diagnostic] = []
    warned = set()
    for given in ordered:
        option = given.option
        field = option.field or option.long
        from_env = given.source.isupper() and "." not in given.source and ":" not in given.source
        records.append(OptionRecord(option.long, given.raw, given.source))
        if given.raw == RESET:
            values.pop(field, None)
            set_by.pop(field, None)
            continue
        try:
            value = read_value(option, given.raw)
        except SlurmInputError as e:
            if e.location is None and given.source != COMMAND_LINE:
                e.location = given.source
            raise
        if option.kind == "count" and given.raw is None:
            # arg_set_verbose: the first -v after a count from the environment starts over.
            base = 0 if set_by.get(field) == "env" else values.get(field, 0)
            values[field] = int(base) + int(value)  # type: ignore[call-overload]
        else:
            values[field] = value
        set_by[field] = "env" if from_env else "cli"
        note = _support_note(option, given, warned)
        if note:
            notes.append(note)
    return _Merged(values, set_by, tuple(records), tuple(notes))


def rejection(option: Option, source: str) -> SlurmInputError:
    """The error for an option the table rejects: our own words, in one line that names
    where the option came from unless it is the command line."""
    where = "" if source == COMMAND_LINE else f"{source}: "
    return SlurmInputError(f"{where}--{option.long} is not supported by sbatch-k8s: "
                           f"{option.note}")


def _support_note(option: Option, given: GivenOption, warned: set) -> Optional[Diagnostic]:
    """The warning (or, for rejected options, the error) that the option table asks for."""
    level = option.level(SBATCH)
    where = None if given.source == COMMAND_LINE else given.source
    if level == REJECTED:
        raise rejection(option, given.source)
    if level not in (APPROXIMATED, IGNORED) or option.long in warned:
        return None
    warned.add(option.long)
    verb = "is approximated" if level == APPROXIMATED else "has no effect"
    return Diagnostic(f"--{option.long} {verb}: {option.note}", where)


def build_job(
    command_line: CommandLine,
    environ: Mapping[str, str],
    script: BatchScript,
) -> Tuple[JobSpec, SubmitOptions]:
    """Merge every source of options into the job and sbatch's own settings."""
    from_script, header_notes = script_options(script)
    from_script = tuple(g for g in from_script if g.option.long not in EARLY_PASS_ONLY)
    late_env = tuple(g for g in env_options(environ) if g.option.long not in EARLY_ENV)
    ordered = (early_env_options(environ) + from_script + late_env
               + command_line.options)
    try:
        merged = _merge(ordered)
        checked = tuple(Diagnostic(note) for note in check_options(merged.values,
                                                                    merged.set_by))
    except SlurmInputError as e:
        shown_before(e, header_notes)
        raise
    if merged.values.get("ignore_pbs"):
        header_notes = tuple(n for n in header_notes if not n.message.endswith(FOREIGN_NOTE))
    job_values: Dict[str, object] = {}
    submit_values: Dict[str, object] = {}
    other: List[Tuple[str, object]] = []
    for field, value in merged.values.items():
        if field in _JOB_FIELDS:
            job_values[field] = value
        elif field in _SUBMIT_FIELDS:
            submit_values[field] = value
        else:
            other.append((field, value))
    if "wrap" in merged.values:
        other = [(k, v) for k, v in other if k != "wrap"]
    job_values.setdefault("job_name", default_job_name(script))
    for field in TEXT_FIELDS:
        if isinstance(job_values.get(field), str):
            job_values[field] = stored_text(str(job_values[field]))
    job = JobSpec(
        script=script,
        steps=find_steps(script.text),
        given=merged.records,
        other_options=tuple(sorted(other, key=lambda kv: kv[0])),
        warnings=header_notes + merged.notes + checked,
        **job_values,  # type: ignore[arg-type]
    )
    return job, SubmitOptions(**submit_values)  # type: ignore[arg-type]
