"""``scontrol``: ``show job|node|partition|hostnames|hostlist|hostlistsorted``, ``hold``,
``uhold``, ``release``, ``requeue`` on the configured backend, in Slurm's formats. Other
scontrol commands are administrative and answer with one line saying they are not available
here."""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, List, Mapping, Optional, Sequence

from parsers.errors import SlurmInputError
from sbatch_k8s.cli.common import exit_with, run_command

if TYPE_CHECKING:
    from parsers.report_options.scontrol import ScontrolRequest

COMMAND = "scontrol"
PROMPT = "scontrol: "
HOLD_COMMANDS = ("hold", "uhold", "release")


def _show_jobs(value: Optional[str], environ: Mapping[str, str], oneliner: bool) -> str:
    from parsers.formats.messages import invalid_job_id_error
    from parsers.formats.scontrol import format_show_jobs
    from parsers.report_options.scontrol import show_job_id
    from sbatch_k8s.backends import open_backend

    now = int(time.time())
    records = open_backend(environ).job_records(True, now)
    wanted = show_job_id(value) if value else None
    if wanted is not None:
        records = [r for r in records if wanted.job_id in (r.job_id, r.array_job_id) and
                   wanted.array_task_id in (None, r.array_task_id)]
        if not records:
            raise invalid_job_id_error()  # a valid id the controller does not know
    if not records:
        return "No jobs in the system\n"
    return format_show_jobs(records, now, oneliner)


def _show_nodes_or_partitions(entity: str, value: Optional[str], environ: Mapping[str, str],
                              oneliner: bool) -> int:
    """``show node [NAMES]`` (a host list, each name in turn, ``Node X not found`` for a name
    no partition has) or ``show partition [NAME]``; the exit status."""
    from parsers.formats.scontrol_nodes import (
        format_show_nodes,
        format_show_partitions,
        nodes_of,
    )
    from parsers.values.hostlist import expand_hostlist
    from sbatch_k8s.backends import open_backend
    from sbatch_k8s.cli.sinfo import partition_infos

    backend = open_backend(environ)
    partitions = partition_infos(backend.config, backend.partition_nodes())
    if entity == "partitions":
        chosen = [p for p in partitions if value is None or p.name == value]
        if not chosen:
            sys.stdout.write(f"Partition {value} not found\n")
            return 1
        sys.stdout.write(format_show_partitions(chosen, oneliner))
        return 0
    nodes = nodes_of(partitions)
    now = int(time.time())
    if value is None:
        sys.stdout.write(format_show_nodes(nodes, now, oneliner))
        return 0
    by_name = {node.name: (node, names) for node, names in nodes}
    code = 0
    for name in expand_hostlist(value):
        if name in by_name:
            sys.stdout.write(format_show_nodes([by_name[name]], now, oneliner))
        else:
            sys.stdout.write(f"Node {name} not found\n")
            code = 1
    return code


def _hold(command: str, words: Sequence[str], environ: Mapping[str, str]) -> int:
    from parsers.records import PENDING
    from sbatch_k8s.backends import open_backend

    backend = open_backend(environ)
    active = backend.active_elements()
    code = 0
    for word in " ".join(words).replace(",", " ").split():
        value = word.split("=", 1)[-1]
        job_id = int(value) if value.isascii() and value.isdigit() else None
        elements = [] if job_id is None else [r for r in active
                                              if job_id in (r.job_id, r.array_job_id)]
        if not elements and (job_id is None or not backend.known(job_id)):
            sys.stderr.write(f"Invalid job id specified for job {word}\n")
            code = 1
            continue
        pending = [r for r in elements if r.state == PENDING]
        if not pending:
            sys.stderr.write(f"Job has already finished for job {word}\n"
                             f"slurm_suspend error: Job has already finished\n")
            code = 1
            continue
        reason = None if command == "release" else (
            "JobHeldUser" if command == "uhold" or os.getuid() != 0 else "JobHeldAdmin")
        for record in pending:
            backend.set_hold(record.job_id, reason, os.getuid())
    return code


def _requeue(words: Sequence[str], environ: Mapping[str, str]) -> int:
    """``scontrol requeue ID[,ID…]``: each job runs again under its id; Slurm's line per
    job it refuses, and exit status 1 after any."""
    from sbatch_k8s.backends import open_backend
    from sbatch_k8s.backends.base import DISABLED, DONE, NOT_STARTED, REFUSED

    backend = open_backend(environ)
    code = 0
    messages = {NOT_STARTED: "Job is pending execution",
                DISABLED: "Requested operation is presently disabled",
                REFUSED: "Access/permission denied"}
    for word in " ".join(words).replace(",", " ").split():
        value = word.split("=", 1)[-1]
        outcome = "unknown"
        if value.isascii() and value.isdigit():
            outcome = backend.requeue(int(value), os.getuid())
        if outcome != DONE:
            sys.stderr.write(f"{messages.get(outcome, 'Invalid job id specified')} "
                             f"for job {word}\n")
            code = 1
    return code


def _run(request: "ScontrolRequest", environ: Mapping[str, str]) -> int:
    """Run one scontrol command; its exit status."""
    if request.command == "show" and request.entity in ("hostnames", "hostlist",
                                                        "hostlistsorted"):
        from parsers.formats.scontrol import show_hosts

        sys.stdout.write(show_hosts(request.entity, request.value, environ))
        return 0
    if request.command == "show" and request.entity == "jobs":
        sys.stdout.write(_show_jobs(request.value, environ, request.oneliner))
        return 0
    if request.command == "show" and request.entity in ("nodes", "partitions"):
        return _show_nodes_or_partitions(request.entity, request.value, environ,
                                         request.oneliner)
    if request.command in HOLD_COMMANDS:
        return _hold(request.command, request.words, environ)
    if request.command == "requeue":
        return _requeue(request.words, environ)
    what = request.command if request.command != "show" else f"show {request.entity}"
    raise SlurmInputError(f"{what} is not available with sbatch-k8s (it administers a "
                          "Slurm controller)", exit_code=1)


def _interactive(argv: List[str], environ: Mapping[str, str]) -> int:
    """No command on the command line: read commands from stdin as scontrol does, each
    after the ``scontrol: `` prompt (echoed with the line when stdin is no terminal), until
    ``exit``, ``quit`` or the end of input. An error makes the final status 1."""
    from parsers.report_options.scontrol import parse_scontrol_args

    echo = not sys.stdin.isatty()
    code = 0
    while True:
        sys.stdout.write(PROMPT)
        sys.stdout.flush()
        line = sys.stdin.readline()
        if not line:
            sys.stdout.write("\n")
            return code
        if echo:
            sys.stdout.write(line if line.endswith("\n") else line + "\n")
        words = line.split()
        if not words:
            continue
        try:
            request = parse_scontrol_args(argv + words)
            if request.command in ("exit", "quit"):
                return code
            code = max(code, _run(request, environ))
        except SlurmInputError as e:
            sys.stderr.write(e.render(COMMAND))
            code = max(code, e.exit_code)


def _main(argv: List[str]) -> int:
    from parsers.report_options.scontrol import parse_scontrol_args
    from sbatch_k8s.cli.help_text import report_action

    environ = os.environ
    request = parse_scontrol_args(argv)
    if request.action:
        sys.stdout.write(report_action(COMMAND, request.action))
        return 0
    if request.clusters is not None:
        from parsers.report_options.clusters import check_clusters
        from sbatch_k8s.config import load_config

        check_clusters(COMMAND, request.clusters, load_config(environ)[0].cluster_name)
    if request.command is None:
        return _interactive(argv, environ)
    if request.command in ("exit", "quit"):
        return 0
    return _run(request, environ)


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Console entry point."""
    exit_with(run_command(COMMAND, _main, argv))
