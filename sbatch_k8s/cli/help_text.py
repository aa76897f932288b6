"""``--help``, ``--usage``, ``--version`` and ``--autocomplete``, derived from the option table."""

from __future__ import annotations

from typing import Mapping, Optional

from parsers.options import HONOURED, NO_ARG, OPTIONAL, options_for

#: The Slurm release whose formats and messages sbatch-k8s reproduces.
SLURM_VERSION = "22.05.8"
VERSION = "0.1.0"

_SYNOPSIS = {
    "sbatch": "Usage: sbatch [OPTIONS(0)...] [ : [OPTIONS(N)...]] script(0) [args(0)...]",
    "srun": "Usage: srun [OPTIONS(0)... [executable(0) [args(0)...]]] "
            "[ : [OPTIONS(N)...]] executable(N) [args(N)...]",
}

#: What ``--help`` says after the options, per command.
_CLOSING = {
    "srun": "Outside a job, srun creates a job for the step and streams its output. On the\n"
            "Kubernetes backend that output is node 0's pod log, which merges stdout and\n"
            "stderr: the tasks' stderr arrives on srun's stdout. stdin is not forwarded there\n"
            "(the tasks read /dev/null).",
}


def usage_text(command: str) -> str:
    """The usage line."""
    return _SYNOPSIS[command] + "\n"


def help_text(command: str) -> str:
    """Every option valid for ``command``, with what it does here and its support level."""
    lines = [_SYNOPSIS[command], "", "Options (support level on sbatch-k8s in brackets):"]
    for option in options_for(command):
        if option.hidden:
            continue
        spelled = option.spelled()
        if option.arg != NO_ARG:
            spelled += "[=value]" if option.arg == OPTIONAL else "=value"
        level = option.level(command)
        tag = "" if level == HONOURED else f" [{level}]"
        lines.append(f"  {spelled:<34} {option.note}{tag}")
    if command in _CLOSING:
        lines += ["", _CLOSING[command]]
    return "\n".join(lines) + "\n"


def version_text() -> str:
    """Slurm's version line, with ours in brackets."""
    return f"slurm {SLURM_VERSION} (sbatch-k8s {VERSION})\n"


def autocomplete_text(command: str, prefix: str) -> str:
    """Option spellings starting with ``prefix``, one per line (shell completion)."""
    words = []
    for option in options_for(command):
        for name in (option.long,) + option.aliases:
            word = f"--{name}" + ("=" if option.arg != NO_ARG else "")
            if word.startswith(prefix):
                words.append(word)
    return "".join(f"{w}\n" for w in sorted(words))


def report_action(command: str, action: str) -> str:
    """``--help``/``--usage``/``--version`` (and sacct's ``--helpformat``) of the reporting
    commands (squeue, sacct, scancel, sinfo, scontrol), from their option tables."""
    from parsers.report_options.help import report_help, report_usage

    if action == "version":
        return version_text()
    if action == "usage":
        return report_usage(command)
    if action == "helpformat" and command == "sacct":
        from parsers.formats.sacct_fields import SACCT_FIELDS

        names = [f"{field.name:<19}" for field in SACCT_FIELDS]
        return "".join(" ".join(names[i:i + 4]) + "\n" for i in range(0, len(names), 4))
    return report_help(command)


def answer(command: str, given: Mapping[str, Optional[str]]) -> str:
    """The text for whichever of the early-answer options was given."""
    if "help" in given:
        return help_text(command)
    if "usage" in given:
        return usage_text(command)
    if "version" in given:
        return version_text()
    return autocomplete_text(command, given.get("autocomplete") or "")
