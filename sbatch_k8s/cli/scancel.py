"""``scancel``: cancel or signal jobs, with Slurm's selection rules and messages.

Without ``--signal`` a job is cancelled (SIGTERM to its steps and batch shell, SIGKILL
after KillWait; state CANCELLED). With ``--signal`` only the steps get it, or the batch
shell with ``-b``, or both and the shell's children with ``-f``. ``<job>.<step>`` cancels
(SIGKILL) or signals one step.

Job ids alone go straight to the jobs (unknown or finished ones are silent unless ``-v``, as
in Slurm 22.05). With any filter (or ``-i``) scancel loads the jobs and acts only on those
that pass every filter (:func:`parsers.job_filters.scancel_selects`) — restricted to the
named jobs when ids are given, and then an id naming no active job is an error.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from sbatch_k8s.cli.common import exit_with, run_command

if TYPE_CHECKING:
    from parsers.job_records import JobRecord
    from sbatch_k8s.backends.base import Backend
    from parsers.report_options.scancel_options import ScancelRequest

COMMAND = "scancel"
#: Exit status of a cancel refused because the job is not federated (ESLURM 7103 & 0xff).
EXIT_NOT_FEDERATED = 191


def _cancel_one(backend: "Backend", request: "ScancelRequest", targets: List[int],
                text: str, step: Optional[str]) -> int:
    """Cancel or signal what one id means (the jobs ``targets``, or a step of them); print
    Slurm's error when it fails; its status."""
    from parsers.formats.messages import kill_job_error, kill_refused_error
    from parsers.report_options.scancel_options import verbose_line
    from sbatch_k8s.backends.base import REFUSED

    if request.verbose > 0:
        sys.stderr.write(verbose_line(request, text, step))
    if request.sibling is not None and any(backend.lookup.known(t) for t in targets):
        # slurmctld refuses a sibling cancel of any job it holds (no job is federated); an
        # id it does not know takes the usual path below
        sys.stderr.write(f"{COMMAND}: error: Kill job error on job id {text}: "
                         "Not a valid federated job\n")
        return EXIT_NOT_FEDERATED
    batch = request.batch or step == "batch"
    number = int(step) if step is not None and step.isdecimal() else None
    outcomes = [backend.cancel(target, request.signal, batch, request.full, number)
                for target in targets]
    if outcomes and all(o == "done" for o in outcomes):
        return 0
    if REFUSED in outcomes:
        if step is not None and request.signal is not None:
            return 0
        refused = kill_refused_error(text.split(".")[0], step is not None)
        sys.stderr.write(refused.render(COMMAND))
        return refused.exit_code
    reason = ("Invalid job id specified" if "unknown" in outcomes else
              "Job/step already completing or completed")
    error = kill_job_error(text, step is not None, request.signal is not None, reason)
    if error.exit_code or request.verbose > 0:
        sys.stderr.write(error.render(COMMAND))
    return error.exit_code


def _confirmed(record: "JobRecord", step: Optional[str]) -> bool:
    """``-i``: ask on stdout, read y/n from stdin. Slurm asks again at end of input for
    ever; here the end of input means no."""
    what = (f"job_id={record.job_id_text}" if step is None
            else f"step_id={record.job_id_text}.{step}")
    while True:
        sys.stdout.write(f"Cancel {what} name={record.name} partition={record.partition} "
                         "[y/n]? ")
        sys.stdout.flush()
        line = sys.stdin.readline()
        if not line or line[:1] in "nN":
            return False
        if line[:1] in "yY":
            return True


def _filtered(backend: "Backend", request: "ScancelRequest"
              ) -> Tuple[List[Tuple["JobRecord", Optional[str]]], int]:
    """``_verify_job_ids`` then ``_filter_job_records``: what to cancel (record, step) and
    the status so far."""
    from parsers.job_filters import id_names, no_match_line, scancel_selects
    from sbatch_k8s.cli.node_files import node_filter_hosts
    from sbatch_k8s.cli.user_ids import resolve_users

    records = backend.lookup.active_elements()
    code = 0
    for selected in request.jobs:
        if not any(id_names(selected, r) for r in records) and request.verbose >= 0:
            what = "job id" if selected.step is None else "job step id"
            sys.stderr.write(f"{COMMAND}: error: Kill job error on {what} {selected}: "
                             "Invalid job id specified\n")
            code = 1
    users = resolve_users(COMMAND, [request.user] if request.user is not None else None,
                          request.me, backend)
    uid = next(iter(users)) if users else None
    hosts = node_filter_hosts(request.nodelist) if request.nodelist is not None else None
    named = [r for r in records if not request.jobs or
             any(id_names(selected, r) for selected in request.jobs)]
    passing = [r for r in named if scancel_selects(r, request, uid, hosts)]
    if not passing and request.verbose > 0:
        sys.stderr.write(f"{COMMAND}: error: {no_match_line(request)}\n")
    chosen: List[Tuple["JobRecord", Optional[str]]] = []
    pending_first = sorted(passing, key=lambda r: r.state != "PENDING")
    if not request.jobs:
        return [(r, None) for r in pending_first], code
    for selected in request.jobs:
        chosen += [(r, selected.step) for r in pending_first if id_names(selected, r)]
    return chosen, code


def _main(argv: List[str]) -> int:
    from parsers.report_options.clusters import FROM_OPTION
    from parsers.report_options.scancel_options import parse_scancel_args
    from sbatch_k8s.backends import open_backend
    from sbatch_k8s.cli.help_text import report_action
    from sbatch_k8s.cli.listing import chosen_clusters

    environ = os.environ
    request = parse_scancel_args(argv, environ)
    if request.action:
        sys.stdout.write(report_action(COMMAND, request.action))
        return 0
    for line in request.warnings:
        sys.stderr.write(f"{COMMAND}: {line}\n")
    option = None if request.clusters == environ.get("SLURM_CLUSTERS") else request.clusters
    chosen_clusters(COMMAND, option, environ, env_source=FROM_OPTION)
    backend = open_backend(environ)
    if not request.has_filters:
        return max([_cancel_one(backend, request,
                                backend.lookup.expand_id(j.job_id, j.array_task_id),
                                str(j), j.step) for j in request.jobs] or [0])
    chosen, code = _filtered(backend, request)
    for record, step in chosen:
        if request.interactive and not _confirmed(record, step):
            continue
        code = max(code, _cancel_one(backend, request, [record.job_id], record.job_id_text,
                                     step))
    return code


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Console entry point."""
    exit_with(run_command(COMMAND, _main, argv))
