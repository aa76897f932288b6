"""Errors in Slurm input: raised while reading what the user typed (errors of operations,
past the input, are :mod:`sbatch_k8s.operation_errors`).

One hierarchy for the whole ``parsers`` layer:

* :class:`SlurmInputError` — anything the user typed that Slurm itself would refuse. It carries
  the message in Slurm's words (without the ``sbatch: error:`` prefix, which the command adds),
  the exit code real Slurm uses for that class of failure, and where the text came from (for
  ``sbatch --k8s-lint``; the commands print Slurm's message alone).
* :class:`ValueSyntaxError` — a value language (time, memory, hostlist …) could not parse a
  string. Value parsers do not know which option they serve; the option layer turns this into a
  :class:`SlurmInputError` worded for the option (``Invalid --time specification``).

Exit codes follow real Slurm: errors found by the client's option parsing exit 255
(``SLURM_ERROR`` as a process status), requests the controller refuses exit 1 and read
``Batch job submission failed: …``.
"""

from __future__ import annotations

from typing import Optional, Tuple

#: Exit status of sbatch/srun when the client's own option parsing fails.
EXIT_OPTION_ERROR = 255
#: Exit status when the controller (here: our validation of the request) refuses the job.
EXIT_SUBMIT_ERROR = 1


class ValueSyntaxError(ValueError):
    """A value string does not belong to its value language."""


class SlurmInputError(Exception):
    """User input that Slurm would refuse, worded as Slurm words it.

    ``lines`` are the message lines without the ``<command>: error:`` prefix; ``plain`` marks
    messages that Slurm prints without that prefix (getopt's ``unrecognized option``).
    ``fatal`` selects Slurm's ``fatal:`` prefix (those paths exit 1).
    ``earlier`` are complete lines Slurm has printed before it gives up, as they appear
    (``parse_time``'s unprefixed ``Invalid time specification (pos=0): bogus``, the
    ``#SLURM`` notice).
    ``location`` (``job.sh:3: #SBATCH --time=abc``) names where the input came from for
    ``sbatch --k8s-lint``; it is not printed: bad input gets one message, in Slurm's words.
    """

    def __init__(
        self,
        *lines: str,
        exit_code: int = EXIT_OPTION_ERROR,
        location: Optional[str] = None,
        plain: bool = False,
        hint: Optional[str] = None,
        fatal: bool = False,
        earlier: Tuple[str, ...] = (),
    ) -> None:
        super().__init__(lines[0] if lines else "")
        self.lines: Tuple[str, ...] = tuple(lines)
        self.exit_code = exit_code
        self.location = location
        self.plain = plain
        self.hint = hint
        self.fatal = fatal
        self.earlier = earlier

    def render(self, command: str) -> str:
        """The text to print on stderr: the ``earlier`` lines, then one ``<command>: error: …``
        line per message line."""
        severity = "fatal" if self.fatal else "error"
        prefix = f"{command}: " if self.plain else f"{command}: {severity}: "
        out = list(self.earlier) + [f"{prefix}{line}" for line in self.lines]
        if self.hint:
            out.append(self.hint)
        return "\n".join(out) + "\n"

    def after(self, *earlier: str) -> SlurmInputError:
        """This error, with ``earlier`` printed before the lines it already has there."""
        self.earlier = tuple(earlier) + self.earlier
        return self


def fatal(message: str) -> SlurmInputError:
    """Slurm's ``fatal()``: ``<command>: fatal: <message>``, exit 1."""
    return SlurmInputError(message, exit_code=EXIT_SUBMIT_ERROR, fatal=True)


def submission_failed(reason: str) -> SlurmInputError:
    """The controller's refusal: ``Batch job submission failed: <reason>``, exit 1."""
    return SlurmInputError(f"Batch job submission failed: {reason}", exit_code=EXIT_SUBMIT_ERROR)
