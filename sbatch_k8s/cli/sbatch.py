"""``sbatch``: submit a batch script (or print/lint what it becomes on Kubernetes).

Flow, as Slurm's sbatch: getopt over the command line, each value read as it comes (a bad
one fails before the script is read); ``--help``/``--usage``/``--version`` answer at once;
the script comes from ``--wrap``, the named file (looked up in the working
directory, then ``PATH``) or stdin; ``#SBATCH`` < ``SBATCH_*`` < command line; Slurm's checks.
Then one of: ``--k8s-lint`` (report), ``--k8s-print`` (manifests, nothing contacted), or a
real submission through the configured backend.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, List, Mapping, Optional, Sequence, Tuple

from parsers.input_errors import EXIT_SUBMIT_ERROR, SlurmInputError
from parsers.jobspec import JobSpec, SubmitOptions
from parsers.sbatch_input import CommandLine, build_job, first_pass, load_script
from sbatch_k8s.cli.common import exit_with, run_command
from sbatch_k8s.user_messages import print_error, print_warning

if TYPE_CHECKING:
    from sbatch_k8s.backends.base import Backend
    from sbatch_k8s.submission_plan import SubmissionPlan

COMMAND = "sbatch"


def resolve_script_path(name: str, chdir: Optional[str], environ: Mapping[str, str]) -> str:
    """sbatch's search: a path with ``/`` as given; else the working directory (``--chdir``
    if given), then ``PATH``; an unreadable name is returned as is (opening it fails)."""
    if "/" in name:
        return name
    base = chdir or os.getcwd()
    candidates = [os.path.join(base, name)]
    candidates += [os.path.join(d, name) for d in environ.get("PATH", "").split(os.pathsep) if d]
    for candidate in candidates:
        if os.path.isfile(candidate) and os.access(candidate, os.R_OK):
            return candidate
    return name


def read_script(command_line: CommandLine, environ: Mapping[str, str]) -> Tuple[
        Optional[str], Optional[str]]:
    """The script text and its name as given (None when read from stdin; both None with
    --wrap). Read as bytes, line breaks untouched (sbatch refuses ``\\r\\n``)."""
    if command_line.value_of("wrap") is not None:
        return None, None
    if command_line.script_path is None:
        stdin = getattr(sys.stdin, "buffer", None)
        if stdin is None:  # a text-only stream put in place by a caller
            return sys.stdin.read(), None
        return stdin.read().decode("utf-8", "surrogateescape"), None
    path = resolve_script_path(command_line.script_path, command_line.value_of("chdir"),
                               environ)
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "surrogateescape"), command_line.script_path
    except OSError as e:
        raise SlurmInputError(f"Unable to open file {command_line.script_path}",
                              exit_code=EXIT_SUBMIT_ERROR) from e


def _answer_at_once(command_line: CommandLine) -> Optional[int]:
    """``--help``, ``--usage``, ``--version``, ``--autocomplete``: print and exit 0."""
    names = {g.option.long: g.raw for g in command_line.options}
    if "help" in names or "usage" in names or "version" in names or "autocomplete" in names:
        from sbatch_k8s.cli.help_text import answer

        sys.stdout.write(answer(COMMAND, names))
        return 0
    return None


def _print_warnings(job: JobSpec, submit: SubmitOptions) -> None:
    """The job's notes: Slurm's own ``error()`` lines always, our warnings unless ``-Q``."""
    for note in job.warnings:
        if note.severity == "error":
            print_error(COMMAND, note.message)
        elif not submit.quiet:
            print_warning(COMMAND, note.message, note.location)


def _check_clusters(text: str, environ: Mapping[str, str]) -> None:
    """``-M``: the configured cluster must be among those named (Slurm's refusal names
    ``--cluster`` whether the list came from it or from the environment)."""
    from parsers.report_options.clusters import FROM_OPTION, choose_clusters
    from sbatch_k8s.config_file import load_config

    for line in choose_clusters(text, load_config(environ)[0].cluster_name,
                                FROM_OPTION).skipped:
        print_error(COMMAND, line)


def _submit(plan: "SubmissionPlan", backend: "Backend") -> int:
    """A real submission through ``backend``, and what sbatch prints of it: sbatch's exit
    code (the job's with ``--wait``)."""
    from parsers.formats.messages import submitted_line, test_only_line

    submit = plan.submit
    if submit.verbose > 0:
        sys.stderr.write(f"{COMMAND}: {backend.cluster.describe()}\n")
    submitted = backend.submit(plan)
    estimate = submitted.estimate
    if estimate is not None:
        if not submit.quiet:
            sys.stderr.write(test_only_line(estimate.job_id, estimate.start,
                                            estimate.processors, estimate.nodes,
                                            estimate.partition))
        return 0
    if not submit.quiet:
        sys.stdout.write(submitted_line(submitted.job_ids[0], submit.parsable,
                                        plan.config.cluster_name
                                        if submit.clusters is not None else ""))
        sys.stdout.flush()
    return backend.wait(submitted) if submit.wait else 0


def _main(argv: List[str]) -> int:
    environ = os.environ
    command_line = first_pass(argv, environ)
    early = _answer_at_once(command_line)
    if early is not None:
        return early
    if command_line.value_of("k8s-lint") is not None:
        from sbatch_k8s.cli.lint import lint_report

        text, path = read_script(command_line, environ)
        script = load_script(command_line, text, path)
        report, ok = lint_report(command_line, environ, script)
        sys.stdout.write(report)
        return 0 if ok else 1
    text, path = read_script(command_line, environ)
    script = load_script(command_line, text, path)
    job, submit = build_job(command_line, environ, script)
    if submit.clusters is not None:
        _check_clusters(submit.clusters, environ)
    _print_warnings(job, submit)
    from sbatch_k8s.config_file import load_config
    from sbatch_k8s.submission_plan import plan_submission

    if submit.k8s_export or submit.k8s_print:  # nothing contacted: the partition's node size
        plan = plan_submission(job, submit, load_config(environ)[0], environ)
        if submit.k8s_export:
            from sbatch_k8s.cli.platform_export import export_job

            return export_job(plan, sys.stdout)
        from sbatch_k8s.cli.k8s_print import print_manifests

        sys.stdout.write(print_manifests(plan))
        return 0
    from sbatch_k8s.backends import open_backend

    backend = open_backend(environ)
    return _submit(plan_submission(job, submit, backend.config, environ,
                                   backend.cluster.node_shape(), COMMAND), backend)


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Console entry point."""
    exit_with(run_command(COMMAND, _main, argv))
