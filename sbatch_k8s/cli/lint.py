"""``sbatch --k8s-lint``: how each option of a script maps to Kubernetes.

One line per option occurrence (``#SBATCH`` directives, ``SBATCH_*`` variables, command-line
options): where it came from, the option as written, its support level on the backend
``sbatch`` would use (the option table's level there; the other backend's in brackets where it
differs), and what it becomes.
Values that Slurm would refuse are reported as ``invalid`` with Slurm's message.

When every option is usable, the report ends with what submission would say: the same checks
``sbatch`` runs (cross-option rules, the partition, the allocation on the partition's nodes
and, for the Kubernetes backend, rendering the manifests, which checks the image), their
warnings as ``warning:`` lines and a refusal as sbatch's own ``sbatch: error: …`` lines. The
exit status is 0 when nothing is rejected, invalid or refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Mapping, Optional, Tuple

from parsers.input_errors import SlurmInputError
from parsers.getopt import GivenOption
from parsers.jobspec import BatchScript, JobSpec
from parsers.option_values import read_value
from parsers.options import BACKENDS, REJECTED, SBATCH
from parsers.sbatch_input import COMMAND_LINE, RESET, CommandLine, build_job, env_options, \
    script_options

if TYPE_CHECKING:
    from sbatch_k8s.submission_plan import SubmissionPlan

INVALID = "invalid"


def _where(source: str) -> str:
    """``job.sh:3`` for a directive, the variable name, or ``command line``."""
    return source.split(": ", 1)[0] if source != COMMAND_LINE else source


def _backend_of(environ: Mapping[str, str]) -> Optional[str]:
    """The backend ``sbatch`` would submit to, or None when the configuration cannot tell
    (its error is then the report's last line)."""
    from sbatch_k8s.config_file import choose_backend, load_config
    from sbatch_k8s.operation_errors import SbatchK8sError

    try:
        config, path = load_config(environ)
        return choose_backend(environ, config, path)
    except SbatchK8sError:
        return None


def _row(given: GivenOption, backend: Optional[str]) -> Tuple[str, str, str, str]:
    """One line of the report: where, the option as written, its level on ``backend`` (the
    row's own level when None) and what it becomes there, with the other backend's level
    where it differs."""
    option = given.option
    written = given.spelled
    if given.raw is not None and given.source != COMMAND_LINE and "=" not in written:
        written = f"--{option.long}={given.raw}"
    level = option.level(SBATCH, backend) or REJECTED
    note = option.note_on(backend)
    others = [f"{b}: {option.level(SBATCH, b)}" for b in BACKENDS
              if b != backend and option.level(SBATCH, b) != level]
    if others:
        note = f"{note} [{'; '.join(others)}]"
    try:
        if given.raw != RESET:
            read_value(option, given.raw)
    except SlurmInputError as e:
        level, note = INVALID, " ".join(e.lines)
    return _where(given.source), written, level, note


def _table(rows: List[Tuple[str, str, str, str]]) -> List[str]:
    """The rows under their titles, columns two spaces apart."""
    from tabulate import tabulate

    titles = ("WHERE", "OPTION", "SUPPORT", "WHAT IT BECOMES")
    # Titles as the first row: tabulate pads header cells by two more characters.
    return tabulate([titles] + rows, tablefmt="plain", disable_numparse=True).splitlines()


def lint_report(command_line: CommandLine, environ: Mapping[str, str],
                script: BatchScript) -> Tuple[str, bool]:
    """The report text and whether the job could be submitted as is, by the levels of the
    backend ``sbatch`` would use."""
    backend = _backend_of(environ)
    rows: List[Tuple[str, str, str, str]] = []
    notes: List[str] = []
    try:
        from_script, header = script_options(script)
        notes = [f"{n.location + ': ' if n.location else ''}{n.message}" for n in header]
    except SlurmInputError as e:
        from_script = ()
        rows.append((e.location.split(": ", 1)[0] if e.location else script.display_name,
                     "", INVALID, " ".join(e.lines)))
    for given in from_script + env_options(environ) + command_line.options:
        if not given.option.long.startswith("k8s-"):
            rows.append(_row(given, backend))
    lines = _table(rows)
    if backend is not None:
        lines.append(f"note: support levels of the {backend} backend, the one sbatch would "
                     "use")
    lines += [f"note: {n}" for n in notes]
    ok = not any(r[2] in (REJECTED, INVALID) for r in rows)
    if ok:
        outcome, ok = submission_outcome(command_line, environ, script)
        lines += outcome
    lines += pitfall_lines(command_line, environ, script)
    return "\n".join(lines) + "\n", ok


#: Widths the pitfall table wraps its columns at (WHERE, FOUND, WHY IT BREAKS, FIX).
PITFALL_WIDTHS = (None, 28, 56, 44)


def pitfall_lines(command_line: CommandLine, environ: Mapping[str, str],
                  script: BatchScript) -> List[str]:
    """The script body's platform pitfalls (:mod:`parsers.pitfalls`) as a table after the
    options': where, what was found, why it breaks, the fix. Warnings only: they do not
    change the exit status."""
    from tabulate import tabulate

    from parsers.pitfalls import find_pitfalls

    node_range, environment = None, list(environ)
    try:
        job = build_job(command_line, environ, script)[0]
    except SlurmInputError:
        job = None
    if job is not None:
        if job.nodes is not None and job.nodes.min_nodes < job.nodes.max_nodes:
            node_range = (job.nodes.min_nodes, job.nodes.max_nodes)
        export = job.export
        if export is not None and export.mode != "ALL":
            environment = [n for n in environ if n.startswith("SLURM_") or n in export.names]
        if export is not None:
            environment += [name for name, _ in export.assignments]
        environment += _profile_variables(job, environ)
    findings = find_pitfalls(script.text, node_range, environment)
    if not findings:
        return []
    rows = [("WHERE", "FOUND", "WHY IT BREAKS", "FIX")] + [
        (f"{script.display_name}:{f.line}", f.found, f.why, f.fix) for f in findings]
    table = tabulate(rows, tablefmt="plain", disable_numparse=True,
                     maxcolwidths=list(PITFALL_WIDTHS))
    return ["", f"pitfalls: {len(findings)} in the script's body (warnings; the job can "
            "still be submitted)"] + table.splitlines()


def _profile_variables(job: JobSpec, environ: Mapping[str, str]) -> List[str]:
    """What the job's contract profile (``--k8s-contract``, else the partition's) sets."""
    from parsers.platforms.contract_profiles import profile_variable_names
    from sbatch_k8s.config_file import load_config
    from sbatch_k8s.operation_errors import SbatchK8sError
    from sbatch_k8s.submission_plan import choose_partition

    profile = job.k8s_contract
    if profile is None:
        try:
            profile = choose_partition(job, load_config(environ)[0]).contract
        except (SlurmInputError, SbatchK8sError):
            return []  # the options' part of the report says why
    return list(profile_variable_names(profile))


#: slurmctld's refusal of a job no node could hold.
CAPACITY_REFUSAL = "Requested node configuration is not available"


def submission_outcome(command_line: CommandLine, environ: Mapping[str, str],
                       script: BatchScript) -> Tuple[List[str], bool]:
    """What ``sbatch`` would say after reading the options (its warnings about the
    partition, the allocation and the manifests, or its refusal), and whether it would
    submit. Nothing is contacted or created."""
    from sbatch_k8s.operation_errors import SbatchK8sError

    try:
        warnings = _submission_warnings(command_line, environ, script)
    except SlurmInputError as e:
        if any(CAPACITY_REFUSAL in line for line in e.lines):
            # where it would run now lacks the resources: a finding about the machine or
            # the partition's nodes, not about the script (lint submits nothing)
            return [f"capacity: {line}" for line in e.render("sbatch").splitlines()], True
        return e.render("sbatch").splitlines(), False
    except SbatchK8sError as e:
        return [f"sbatch: error: {e}"], False
    return [f"warning: {w}" for w in warnings], True


def _submission_warnings(command_line: CommandLine, environ: Mapping[str, str],
                         script: BatchScript) -> List[str]:
    from sbatch_k8s.backends import open_backend
    from sbatch_k8s.config_file import LOCAL
    from sbatch_k8s.submission_plan import plan_submission

    job, submit = build_job(command_line, environ, script)
    backend = open_backend(environ)
    plan = plan_submission(job, submit, backend.config, environ, backend.cluster.node_shape())
    backend.cluster.check_plan(plan)
    if backend.name == LOCAL:
        return list(plan.warnings)
    # the rendered plan's warnings start with the allocation's own
    return list(_rendered_warnings(plan))


def _rendered_warnings(plan: "SubmissionPlan") -> Tuple[str, ...]:
    """Render the manifests as ``sbatch --k8s-print`` would (raising its refusals)."""
    from parsers.option_values import kubernetes_minor
    from sbatch_k8s.cli.k8s_print import PRINT_KUBERNETES_MINOR
    from translators import RenderInputs, render

    submit, partition = plan.submit, plan.partition
    version = submit.k8s_kubernetes_version
    inputs = RenderInputs(
        job=plan.job, allocation=plan.allocation, context=plan.context, partition=partition,
        cluster_name=plan.config.cluster_name, job_id=1, token="lint", runtime_hash="lint",
        submit_time="1970-01-01T00:00:00", target=submit.k8s_target or partition.target,
        kubernetes_minor=kubernetes_minor(version) if version else PRINT_KUBERNETES_MINOR)
    return render(inputs).warnings
