"""``scontrol``: ``show job|node|partition|hostnames|hostlist|hostlistsorted``, ``hold``,
``uhold``, ``release``, ``requeue``, ``requeuehold`` on the configured backend, in Slurm's
formats. Other scontrol commands are administrative and answer with one line saying they are
not available here."""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, Dict, List, Mapping, Optional, Sequence

from parsers.input_errors import SlurmInputError
from parsers.formats.messages import BareError
from sbatch_k8s.cli.common import exit_with, run_command, say_backend

if TYPE_CHECKING:
    from parsers.job_records import JobRecord
    from parsers.report_options.scontrol_options import ScontrolRequest
    from sbatch_k8s.backends.base import Backend

COMMAND = "scontrol"
PROMPT = "scontrol: "
HOLD_COMMANDS = ("hold", "uhold", "release")


def _show_jobs(value: Optional[str], environ: Mapping[str, str], oneliner: bool,
               details: bool = False) -> str:
    from parsers.formats.messages import invalid_job_id_error
    from parsers.formats.scontrol_show import format_show_jobs
    from parsers.report_options.scontrol_options import show_job_id
    from sbatch_k8s.backends import open_backend

    now = int(time.time())
    backend = open_backend(environ)
    records = backend.job_records(True, now)
    wanted = show_job_id(value) if value else None
    if wanted is not None:
        records = _shown(records, wanted.job_id, wanted.array_task_id)
        if not records:
            raise invalid_job_id_error()  # a valid id the controller does not know
    if not records:
        return "No jobs in the system\n"
    if not details:
        return format_show_jobs(records, now, oneliner)
    from sbatch_k8s.cli.job_details import detail_lines

    return format_show_jobs(records, now, oneliner,
                            details=lambda record: detail_lines(backend, record))


def _shown(records: List["JobRecord"], job_id: int, task: Optional[int]
           ) -> List["JobRecord"]:
    """The records ``scontrol show job <job_id>[_<task>]`` shows: a task still waiting on
    its array's line is shown on its own, as slurmctld shows it (the array's id, that task)."""
    from parsers.formats.array_fold import pending_element

    shown = []
    for record in records:
        if job_id not in (record.job_id, record.array_job_id):
            continue
        if task is None or task == record.array_task_id:
            shown.append(record)
        elif record.array_pending is not None:
            element = pending_element(record, task)
            if element is not None:
                shown.append(element)
    return shown


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
    partitions = partition_infos(backend.config, backend.cluster.partition_nodes())
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
    from parsers.job_records import PENDING
    from sbatch_k8s.backends import open_backend
    from sbatch_k8s.backends.base import REFUSED

    backend = open_backend(environ)
    active = backend.lookup.active_elements()
    code = 0
    for word in " ".join(words).replace(",", " ").split():
        value = word.split("=", 1)[-1]
        job_id = int(value) if value.isascii() and value.isdigit() else None
        elements = [] if job_id is None else [r for r in active
                                              if job_id in (r.job_id, r.array_job_id)]
        if not elements and (job_id is None or not backend.lookup.known(job_id)):
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
            "JobHeldUser" if command == "uhold" or not backend.identity.caller_is_operator()
            else "JobHeldAdmin")
        outcomes = [backend.set_hold(record.job_id, reason) for record in pending]
        if REFUSED in outcomes:   # another user's job: slurmctld's answer, as 22.05 prints it
            sys.stderr.write(f"Invalid user id for job {word}\n"
                             "slurm_suspend error: Invalid user id\n")
            code = 1
    return code


#: scontrol's words for what a requeue of one job came to (``slurm_strerror``).
REQUEUE_MESSAGES = {"done": "No error", "pending": "Job is pending execution",
                    "disabled": "Requested operation is presently disabled",
                    "batch only": "Only batch jobs are accepted or processed",
                    "refused": "Access/permission denied",
                    "unknown": "Invalid job id specified"}


def _requeue_array(backend: "Backend", elements: Sequence["JobRecord"], task: Optional[int],
                   hold: bool) -> Dict[str, List[int]]:
    """Requeue the elements of an array (``task``: only that one): the task ids per outcome.
    Elements never started (squeue's folded line) are pending execution."""
    from parsers.values.array import parse_array
    from sbatch_k8s.backends.base import NOT_STARTED

    outcomes: Dict[str, List[int]] = {}
    for record in elements:
        if record.array_pending is not None:
            tasks = [t for t in parse_array(record.array_pending).indices()
                     if task in (None, t)]
            outcomes.setdefault(NOT_STARTED, []).extend(tasks)
        elif task in (None, record.array_task_id):
            outcome = backend.requeue(record.job_id, hold)
            outcomes.setdefault(outcome, []).append(int(record.array_task_id or 0))
    return {k: sorted(v) for k, v in outcomes.items() if v}


def _requeue_one(backend: "Backend", value: str, hold: bool, now: int) -> List[str]:
    """Requeue what one id names (a job, an array, an element); scontrol's error lines."""
    from parsers.values.array import format_indices
    from sbatch_k8s.backends.base import DONE, UNKNOWN

    number, _, task_text = value.partition("_")
    if not (number.isascii() and number.isdigit() and int(number) > 0) or (
            task_text and not (task_text.isascii() and task_text.isdigit())):
        return [f"{REQUEUE_MESSAGES[UNKNOWN]} for job {value}"]
    job_id, task = int(number), int(task_text) if task_text else None
    elements = [r for r in backend.job_records(True, now, job_ids=[job_id])
                if r.array_job_id == job_id]
    if not elements:  # not an array: the controller answers for the one job
        if task is not None:
            return [f"{value}: {REQUEUE_MESSAGES[UNKNOWN]}" if backend.lookup.known(job_id)
                    else f"{REQUEUE_MESSAGES[UNKNOWN]} for job {value}"]
        outcome = backend.requeue(job_id, hold)
        return [] if outcome == DONE else [f"{REQUEUE_MESSAGES[outcome]} for job {value}"]
    outcomes = _requeue_array(backend, elements, task, hold)
    if not outcomes:
        return [f"{REQUEUE_MESSAGES[UNKNOWN]} for job {value}"]
    if list(outcomes) == [DONE]:
        return []
    groups = sorted(outcomes.items(), key=lambda item: item[1][0])
    return [f"{job_id}_{format_indices(tasks, None)}: {REQUEUE_MESSAGES[outcome]}"
            for outcome, tasks in groups]


def _requeue(command: str, words: Sequence[str], environ: Mapping[str, str]) -> int:
    """``scontrol requeue|requeuehold [State=SpecialExit] ID[,ID…]``: each job runs again
    under its id (held, with ``requeuehold``); Slurm's lines for what it refuses, and exit
    status 1 after any."""
    from sbatch_k8s.backends import open_backend

    if not words:
        raise BareError(f"too few arguments for keyword:{command}")
    values = [w.split("=", 1)[-1] if w.lower().startswith("jobid=") else w
              for w in " ".join(words).replace(",", " ").split()]
    if command == "requeuehold" and values and values[0].lower() == "state=specialexit":
        raise SlurmInputError("requeuehold State=SpecialExit is not available with "
                              "sbatch-k8s (a requeued job is held as JobHeldUser)",
                              exit_code=1)
    backend = open_backend(environ)
    now = int(time.time())
    lines = [line for value in values
             for line in _requeue_one(backend, value, command == "requeuehold", now)]
    sys.stderr.writelines(f"{line}\n" for line in lines)
    return 1 if lines else 0


def _run(request: "ScontrolRequest", environ: Mapping[str, str]) -> int:
    """Run one scontrol command; its exit status."""
    if request.command == "show" and request.entity in ("hostnames", "hostlist",
                                                        "hostlistsorted"):
        from parsers.formats.scontrol_show import show_hosts

        sys.stdout.write(show_hosts(request.entity, request.value, environ))
        return 0
    if request.command == "show" and request.entity == "jobs":
        sys.stdout.write(_show_jobs(request.value, environ, request.oneliner,
                                    request.details))
        return 0
    if request.command == "show" and request.entity in ("nodes", "partitions"):
        return _show_nodes_or_partitions(request.entity, request.value, environ,
                                         request.oneliner)
    if request.command in ("details", "oneliner"):   # a mode of later commands: none follow
        if request.words:
            raise BareError(f"too many arguments for keyword:{request.command}")
        return 0
    if request.command in HOLD_COMMANDS:
        return _hold(request.command, request.words, environ)
    if request.command in ("requeue", "requeuehold"):
        return _requeue(request.command, request.words, environ)
    what = request.command if request.command != "show" else f"show {request.entity}"
    raise SlurmInputError(f"{what} is not available with sbatch-k8s (it administers a "
                          "Slurm controller)", exit_code=1)


def _interactive(argv: List[str], environ: Mapping[str, str]) -> int:
    """No command on the command line: read commands from stdin as scontrol does, each
    after the ``scontrol: `` prompt (echoed with the line when stdin is no terminal), until
    ``exit``, ``quit`` or the end of input. ``details`` (``oneliner``) makes the later
    ``show`` commands print as ``-d`` (``-o``) would. An error makes the final status 1."""
    import dataclasses

    from parsers.report_options.scontrol_options import parse_scontrol_args

    echo = not sys.stdin.isatty()
    code = 0
    modes: Dict[str, bool] = {}
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
            if request.command in ("details", "oneliner"):
                if request.words:
                    raise BareError(f"too many arguments for keyword:{words[0]}")
                modes[request.command] = True
                continue
            request = dataclasses.replace(
                request, details=request.details or modes.get("details", False),
                oneliner=request.oneliner or modes.get("oneliner", False))
            code = max(code, _run(request, environ))
        except SlurmInputError as e:
            sys.stderr.write(e.render(COMMAND))
            code = max(code, e.exit_code)


def _main(argv: List[str]) -> int:
    from parsers.report_options.scontrol_options import parse_scontrol_args
    from sbatch_k8s.cli.help_text import report_action

    environ = os.environ
    request = parse_scontrol_args(argv)
    if request.action:
        sys.stdout.write(report_action(COMMAND, request.action))
        return 0
    from sbatch_k8s.cli.listing import chosen_clusters

    chosen_clusters(COMMAND, request.clusters, environ)
    say_backend(COMMAND, environ, request.verbose)
    if request.command is None:
        return _interactive(argv, environ)
    if request.command in ("exit", "quit"):
        return 0
    return _run(request, environ)


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Console entry point."""
    exit_with(run_command(COMMAND, _main, argv))
