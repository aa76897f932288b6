"""``sattach <jobid.stepid>``: a job's output, from its start and then as it comes.

Slurm's sattach attaches to a running step's I/O. Here the output that can be given back is
the batch output files (where a step's tasks write unless ``srun -o``/``-e`` sends them
elsewhere): the stdout file on stdout, a separate ``--error`` file on stderr, from their start,
followed until the job ends; a job that has ended is printed whole while its output is still
there. On the local backend and on a partition whose volumes hold the working directory the
files are read in place; otherwise from node 0's pod log (:mod:`sbatch_k8s.backends.kubernetes.
attach`). ``--k8s-output <jobid>`` writes the job's output files into its working directory
(from node 0's pod log, while its pods exist; in place already, it says so).

Slurm's messages for the argument and for jobs with nothing to attach to (pending, unknown,
ended). Not available (an error, never silently ignored): ``--input-filter``,
``--output-filter``, ``--error-filter``, ``-l``/``--label`` and ``--layout`` (the output
files carry no task numbers).
"""

from __future__ import annotations

import getopt
import os
import re
import sys
from typing import List, Mapping, Optional, Tuple

from sbatch_k8s.cli.common import exit_with, run_command

COMMAND = "sattach"
USAGE = "Usage: sattach [options] <jobid.stepid>\n"
#: Why the task options are refused (in ``--help`` and in the refusal).
NO_TASKS = "the output comes from the job's output files, which carry no task numbers"
HELP = USAGE + f"""\
      --input-filter=taskid  send stdin to only the specified task [not supported: {NO_TASKS}]
      --output-filter=taskid only print stdout from the specified task [not supported: {NO_TASKS}]
      --error-filter=taskid  only print stderr from the specified task [not supported: {NO_TASKS}]
  -l, --label        prepend task number to lines of stdout & stderr [not supported: {NO_TASKS}]
      --layout       print task layout info and exit (does not attach to tasks)
                     [not supported: {NO_TASKS}]
  -Q, --quiet        quiet mode (suppress informational messages)
  -v, --verbose      verbose mode (multiple -v's increase verbosity)
  -V, --version      print the Slurm version and exit
      --k8s-output   write the job's output files into its working directory
                     (argument: <jobid>) and exit

Help options:
  -h, --help         print this help message
  -u, --usage        print a brief usage message
"""
LONG_OPTIONS = ["input-filter=", "output-filter=", "error-filter=", "label", "layout", "quiet",
                "verbose", "version", "help", "usage", "k8s-output"]
UNAVAILABLE = ("--input-filter", "--output-filter", "--error-filter", "-l", "--label",
               "--layout")
STEP_ID = re.compile(r"^(\d+)\.(\d+|batch|extern)$")


class UsageError(Exception):
    """A command line sattach refuses: the lines to print."""


def parse_args(argv: List[str]) -> Tuple[Optional[str], int, bool, bool]:
    """``(action, job id, write files, quiet)``; action is help/usage/version or None."""
    try:
        options, words = getopt.gnu_getopt(argv, "lQvVhu", LONG_OPTIONS)
    except getopt.GetoptError as e:
        name = f"--{e.opt}" if len(e.opt) > 1 else f"-{e.opt}"
        wording = ("unrecognized option" if "not recognized" in e.msg
                   else "option requires an argument")
        raise UsageError(f"{COMMAND}: {wording} '{name}'\n"
                         f'Try "{COMMAND} --help" for more information\n') from None
    given = [name for name, _ in options]
    for name, action in (("--help", "help"), ("-h", "help"), ("--usage", "usage"),
                         ("-u", "usage"), ("--version", "version"), ("-V", "version")):
        if name in given:
            return action, 0, False, False
    for name in given:
        if name in UNAVAILABLE:
            raise UsageError(f"{COMMAND}: error: {name} is not available here: {NO_TASKS}\n")
    write_files = "--k8s-output" in given
    quiet = "-Q" in given or "--quiet" in given
    if len(words) != 1:
        raise UsageError(f"{COMMAND}: error: too many parameters\n{USAGE}")
    if write_files and words[0].isdigit():
        return None, int(words[0]), True, quiet
    match = STEP_ID.match(words[0])
    if match is None:
        raise UsageError(f"{COMMAND}: error: Failed to parse stepid from command line "
                         f"options\n{USAGE}")
    return None, int(match.group(1)), write_files, quiet


def _main(argv: List[str], environ: Mapping[str, str]) -> int:
    from sbatch_k8s.backends.attach_files import AttachError
    from sbatch_k8s.backends import open_backend
    from sbatch_k8s.backends.base import OutputSink
    from sbatch_k8s.cli.help_text import version_text

    try:
        action, job_id, write_files, quiet = parse_args(argv)
    except UsageError as e:
        sys.stderr.write(str(e))
        return 1
    if action is not None:
        sys.stdout.write(HELP if action == "help" else USAGE if action == "usage"
                         else version_text())
        return 0
    try:
        sys.stdout.flush()
        return open_backend(environ).attach(job_id, write_files, quiet, OutputSink())
    except AttachError as e:
        sys.stderr.write(f"{COMMAND}: error: Could not get job step info: {e}\n")
        return 1


def main(argv: Optional[List[str]] = None) -> None:
    """Entry point."""
    exit_with(run_command(COMMAND, lambda args: _main(args, os.environ), argv))
