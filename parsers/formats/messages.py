"""Messages the reporting commands print outside the ``<cmd>: error:`` convention.

Several of Slurm's reporting paths write to stderr with a bare ``fprintf`` or
``slurm_perror``: ``slurm_load_jobs error: Invalid job id specified``, ``Invalid time
specification (pos=0): bogus``, ``Unknown job signal: FOO``. :class:`BareError` carries such
lines verbatim; it is a :class:`~parsers.input_errors.SlurmInputError`, so callers handle all input
errors alike, but its :meth:`render` adds no prefix.
"""

from __future__ import annotations

from parsers.input_errors import EXIT_SUBMIT_ERROR, SlurmInputError


class BareError(SlurmInputError):
    """An error whose lines are printed exactly as given (no ``<cmd>:`` prefix)."""

    def __init__(self, *lines: str, exit_code: int = EXIT_SUBMIT_ERROR) -> None:
        super().__init__(*lines, exit_code=exit_code)

    def render(self, command: str) -> str:
        """The lines as Slurm prints them."""
        out = list(self.lines)
        if self.hint:
            out.append(self.hint)
        return "\n".join(out) + "\n"


def invalid_job_id_error(where: str = "slurm_load_jobs") -> BareError:
    """``slurm_load_jobs error: Invalid job id specified`` (exit 1): what ``squeue -j N`` and
    ``scontrol show job N`` print when the controller does not know job N (``squeue`` asks
    for a single job only when exactly one id was given)."""
    return BareError(f"{where} error: Invalid job id specified")


def kill_job_error(selected: str, step: bool = False, signalled: bool = False,
                   reason: str = "Invalid job id specified") -> SlurmInputError:
    """scancel's ``Kill job error on job id 12: Invalid job id specified``.

    ``reason`` may also be ``Job/step already completing or completed``. For a plain cancel
    of a whole job Slurm 22.05 prints this only with ``-v`` and exits 0; when signalling
    (``-s``) or cancelling a step it prints it always and exits 1 (:attr:`exit_code`).
    """
    what = "job step id" if step else "job id"
    return SlurmInputError(f"Kill job error on {what} {selected}: {reason}",
                           exit_code=EXIT_SUBMIT_ERROR if step or signalled else 0)


#: Slurm's error numbers for a refused kill (scancel exits with ``errno & 0xff``):
#: ESLURM_ACCESS_DENIED for a job, ESLURM_USER_ID_MISSING for one step's cancel.
ESLURM_ACCESS_DENIED = 2002
ESLURM_USER_ID_MISSING = 2010


def kill_refused_error(job_text: str, step_cancel: bool) -> SlurmInputError:
    """scancel of another user's job: ``Kill job error on job id 12: Access/permission
    denied`` (exit 210), printed for a cancel as for a signal; the cancel of one of its steps
    names the job alone: ``Kill job error on job step id 12: Invalid user id`` (exit 218), as
    Slurm 22.05 prints them. (Signalling another user's step is silent, exit 0, in 22.05.)"""
    if step_cancel:
        return SlurmInputError(f"Kill job error on job step id {job_text}: Invalid user id",
                               exit_code=ESLURM_USER_ID_MISSING & 0xFF)
    return SlurmInputError(f"Kill job error on job id {job_text}: Access/permission denied",
                           exit_code=ESLURM_ACCESS_DENIED & 0xFF)


def invalid_user_error(command: str, name: str) -> SlurmInputError:
    """An unknown user name: squeue warns ``Invalid user: x`` (and lists nothing for it,
    exit 0); scancel stops with ``Invalid user name: x`` (exit 1)."""
    if command == "scancel":
        return SlurmInputError(f"Invalid user name: {name}", exit_code=EXIT_SUBMIT_ERROR)
    return SlurmInputError(f"Invalid user: {name}\n", exit_code=0)


def submitted_line(job_id: int, parsable: bool, cluster: str = "") -> str:
    """What sbatch prints for a submitted job: ``Submitted batch job 7``, or ``7`` with
    ``--parsable``; with ``cluster`` (sbatch was given ``-M``) ``… on cluster <c>`` and
    ``7;<c>``, as Slurm names the cluster it chose."""
    if parsable:
        return f"{job_id};{cluster}\n" if cluster else f"{job_id}\n"
    return f"Submitted batch job {job_id}" + (f" on cluster {cluster}" if cluster else "") + "\n"


def test_only_line(job_id: int, start: str, processors: int, nodes: str,
                   partition: str) -> str:
    """What ``sbatch --test-only`` says on stderr: where and when the job would start."""
    return (f"sbatch: Job {job_id} to start at {start} using {processors} processors on "
            f"nodes {nodes} in partition {partition}\n")
