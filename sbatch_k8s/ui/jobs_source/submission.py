"""Submitting from the console: ``sbatch --k8s-lint`` as the user types, ``sbatch`` itself to
submit, and "submit again" from what a job's record keeps.

The lint runs here (:func:`sbatch_k8s.cli.lint.lint_report`, the report ``sbatch
--k8s-lint`` prints). A submission runs the ``sbatch`` command, through the user's command
server as from a shell (:mod:`sbatch_k8s.fastpath`), in the working directory the page
names and with the console's environment: what the page submits is exactly what ``sbatch``
would, with its messages, warnings and exit status — and nothing half-created when it
refuses. The script goes in a private temporary file of the script's name (so the job is
named after it, as from a shell) that sbatch reads before it returns.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
from typing import Callable, List, Mapping, Sequence, Tuple

from parsers.input_errors import SlurmInputError
from parsers.job_records import JobRecord
from sbatch_k8s.ui.views import LintResult, Submission, SubmitResult

#: How long a submission may take before the console gives up waiting for sbatch.
SUBMIT_TIMEOUT_S = 120.0
SUBMITTED = re.compile(r"^Submitted batch job (\d+)", re.M)


def options_argv(options: str) -> List[str]:
    """The sbatch options typed in the page, split as a shell would (SlurmInputError in
    sbatch's words for unbalanced quotes)."""
    try:
        return shlex.split(options)
    except ValueError as e:
        raise SlurmInputError(f"options: {e}") from e


def lint(script: str, argv: Sequence[str], environ: Mapping[str, str]) -> LintResult:
    """``sbatch ARGV --k8s-lint`` of ``script``: the report, and whether nothing was
    refused; an error sbatch stops at is the report, in its words."""
    from parsers.sbatch_input import first_pass, load_script
    from sbatch_k8s.cli.lint import lint_report
    from sbatch_k8s.operation_errors import SbatchK8sError

    try:
        command_line = first_pass([*argv, "--k8s-lint"], environ)
        loaded = load_script(command_line, script, None)
        report, ok = lint_report(command_line, dict(environ), loaded)
    except SlurmInputError as e:
        return LintResult(False, e.render("sbatch"))
    except SbatchK8sError as e:
        return LintResult(False, f"sbatch: error: {e}\n")
    return LintResult(ok, report)


def sbatch_command() -> List[str]:
    """``sbatch`` as the user's shell runs it: this installation's, through the command
    server."""
    return [sys.executable, "-c", "from sbatch_k8s.fastpath import sbatch; sbatch()"]


def submit(script: str, script_name: str, argv: Sequence[str], work_dir: str,
           environ: Mapping[str, str],
           command: Callable[[], List[str]] = sbatch_command) -> SubmitResult:
    """``sbatch ARGV SCRIPT`` in ``work_dir``: what it printed and the job id."""
    if not os.path.isdir(work_dir):
        return SubmitResult(False, None, "", f"sbatch: error: {work_dir}: no such directory\n")
    name = os.path.basename(script_name.strip()) or "script"
    with tempfile.TemporaryDirectory(prefix="sbatch-k8s-ui-") as private:
        path = os.path.join(private, name)
        with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
            f.write(script)
        try:
            done = subprocess.run([*command(), *argv, path], cwd=work_dir, env=dict(environ),
                                  stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=SUBMIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return SubmitResult(False, None, "", f"sbatch: error: no answer within "
                                                 f"{int(SUBMIT_TIMEOUT_S)} s\n")
    stdout = done.stdout.decode("utf-8", "replace")
    stderr = done.stderr.decode("utf-8", "replace").replace(path, name)
    found = SUBMITTED.search(stdout)
    return SubmitResult(done.returncode == 0, int(found.group(1)) if found else None,
                        stdout, stderr)


def _memory_option(record: JobRecord) -> List[str]:
    if not record.min_memory_mb:
        return []
    option = "--mem-per-cpu" if record.memory_per_cpu else "--mem"
    return [f"{option}={record.min_memory_mb}M"]


#: A record's field → the sbatch option that asks for it again (None: not asked).
RESUBMIT_OPTIONS: Tuple[Tuple[str, Callable[[JobRecord], List[str]]], ...] = (
    ("name", lambda r: [f"--job-name={r.name}"]),
    ("partition", lambda r: [f"--partition={r.partition}"] if r.partition else []),
    ("node_count", lambda r: [f"--nodes={r.node_count}"]),
    ("ntasks", lambda r: [f"--ntasks={r.ntasks}"] if r.ntasks else []),
    ("ntasks_per_node", lambda r: [f"--ntasks-per-node={r.ntasks_per_node}"]
     if r.ntasks_per_node else []),
    ("cpus_per_task", lambda r: [f"--cpus-per-task={r.cpus_per_task}"]
     if r.cpus_per_task > 1 else []),
    ("min_memory_mb", _memory_option),
    ("time_limit_min", lambda r: [f"--time={r.time_limit_min}"] if r.time_limit_min else []),
    ("gres", lambda r: [f"--gres={r.gres}"] if r.gres else []),
    ("features", lambda r: [f"--constraint={r.features}"] if r.features else []),
    ("exclusive", lambda r: ["--exclusive"] if r.exclusive else []),
    ("requeue", lambda r: [] if r.requeue else ["--no-requeue"]),
    ("stdout", lambda r: [f"--output={r.stdout}"] if r.stdout else []),
    ("stderr", lambda r: [f"--error={r.stderr}"] if r.stderr else []),
)


def resubmission(record: JobRecord, script: str) -> Submission:
    """What "submit again" runs: the kept script, with the options the record shows the
    job had (command-line options beyond those are not recorded), in its directory."""
    argv = tuple(word for _, option in RESUBMIT_OPTIONS for word in option(record))
    name = os.path.basename(record.command) if record.command else "script"
    return Submission(script, name, argv, record.work_dir)


def command_text(submission: Submission) -> str:
    """The command the confirmation shows: ``cd DIR && sbatch OPTIONS NAME``."""
    words = ["sbatch", *submission.argv, submission.script_name]
    return f"cd {shlex.quote(submission.work_dir)} && {shlex.join(words)}"

