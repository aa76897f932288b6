"""Whether a job's ``--dependency`` is satisfied: ``ok``, ``wait`` or ``never``.

Pure: the caller says what it knows of the jobs a dependency names (their state and start
time) through a lookup, so every backend decides the same way — the local scheduler over its
database, the Kubernetes side (a command's reconcile pass, node 0's runtime of the job that
ended, the controller) over job records. Follows slurmctld's ``test_job_dependency``
(``src/slurmctld/job_scheduler.c``):

* ``after:job[+min]`` — the job has started (or ended) at least ``min`` minutes ago;
* ``afterany`` — the job has ended; ``afterok`` / ``aftercorr`` — ended COMPLETED (else the
  dependency can never be met); ``afternotok`` — ended in any other state;
* ``aftercorr`` on a whole array — the element with the dependent's own task id;
* ``singleton`` — no earlier job of the same name and user is pending or running;
* a job the lookup does not know can never satisfy the clause;
* clauses joined by ``,`` must all be met (one ``never`` fails them all); joined by ``?``,
  one met clause is enough, and only all of them failing fails the whole.

:func:`shown_dependency` gives what squeue ``%E`` and ``scontrol show job``'s
``Dependency=`` print for a job that has not started: each item not yet met with its state,
as slurmctld's ``_depend_state_str`` names it (``afterok:17_*(unfulfilled)``,
``afterok:16(failed)``, ``singleton(unfulfilled)``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable, List, Optional, Sequence, Tuple

from parsers.job_records import CANCELLED, COMPLETED, PENDING, JobRecord
from parsers.values.dependency import DependencyClause, DependencySpec, parse_dependency

OK, WAIT, NEVER = "ok", "wait", "never"
#: States a job never leaves: a dependency on it is decided.
TERMINAL = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
            "PREEMPTED", "BOOT_FAIL", "DEADLINE")
#: States of a job a ``singleton`` waits for.
UNFINISHED = frozenset({"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED",
                        "REQUEUED"})

#: ``_depend_state_str``: a verdict as squeue prints it after an item.
SHOWN_STATES = {WAIT: "unfulfilled", NEVER: "failed", OK: "fulfilled"}

#: What the caller knows of one job a target names: its state and start time (epoch s).
TargetFacts = Tuple[str, Optional[float]]
#: ``(job id, array task id or None)`` → the jobs it names: one job, the elements of an array
#: (task None on an array id), or one array element; empty when unknown.
TargetLookup = Callable[[int, Optional[int]], Sequence[TargetFacts]]


@lru_cache(maxsize=4096)
def parsed_dependency(expression: str) -> DependencySpec:
    """A stored ``--dependency`` expression, parsed once per process (they repeat)."""
    return parse_dependency(expression)


def target_verdict(kind: str, state: str, start_time: Optional[float], delay_min: int,
                   now: float) -> str:
    """One job's verdict for one clause type."""
    done = state in TERMINAL
    if kind == "after":
        started = start_time if start_time else (now if done else None)
        if started is None:
            return WAIT
        return OK if now >= started + 60 * delay_min else WAIT
    if not done:
        return WAIT
    if kind in ("afterok", "aftercorr"):
        return OK if state == COMPLETED else NEVER
    if kind == "afternotok":
        return NEVER if state == COMPLETED else OK
    return OK


def all_of(verdicts: Sequence[str]) -> str:
    """``never`` if any is, else ``wait`` if any is, else ``ok``."""
    if NEVER in verdicts:
        return NEVER
    return WAIT if WAIT in verdicts else OK


def clause_verdict(clause: DependencyClause, own_task: Optional[int], lookup: TargetLookup,
                   singleton_waits: Callable[[], bool], now: float) -> str:
    """One clause's verdict; ``own_task`` is the dependent's array task id (``aftercorr``),
    ``singleton_waits`` whether an earlier job of its name and user is unfinished."""
    if clause.kind == "singleton":
        return WAIT if singleton_waits() else OK
    verdicts: List[str] = []
    for target in clause.targets:
        task = target.array_task_id
        if clause.kind == "aftercorr" and task is None and own_task is not None:
            task = own_task
        jobs = lookup(target.job_id, task)
        if not jobs:
            verdicts.append(NEVER)
        for state, start_time in jobs:
            verdicts.append(target_verdict(clause.kind, state, start_time, target.delay_min,
                                           now))
    return all_of(verdicts)


def spec_verdict(spec: DependencySpec, own_task: Optional[int], lookup: TargetLookup,
                 singleton_waits: Callable[[], bool], now: float) -> str:
    """The whole expression's verdict (``,``: all clauses; ``?``: any)."""
    states = [clause_verdict(c, own_task, lookup, singleton_waits, now) for c in spec.clauses]
    if spec.require_all:
        return all_of(states)
    if OK in states:
        return OK
    return NEVER if states and all(s == NEVER for s in states) else WAIT


def dependency_targets(spec: DependencySpec) -> List[int]:
    """The job ids the expression names (array ids as written), sorted, without repeats."""
    return sorted({t.job_id for clause in spec.clauses for t in clause.targets})


def _target_verdict(kind: str, target_job: int, task: Optional[int], delay_min: int,
                    lookup: TargetLookup, now: float) -> str:
    jobs = lookup(target_job, task)
    if not jobs:
        return NEVER
    return all_of([target_verdict(kind, state, start, delay_min, now) for state, start in jobs])


def shown_dependency(spec: DependencySpec, own_task: Optional[int], lookup: TargetLookup,
                     singleton_waits: Callable[[], bool], names_array: Callable[[int], bool],
                     now: float) -> str:
    """The items of ``spec`` not yet met, each followed by its state in parentheses, joined
    as written; "" when nothing is left (squeue then prints ``(null)``). As slurmctld's
    ``test_job_dependency``: with ``,`` met items are dropped and, after the first failed
    one, the rest are no longer looked at (shown ``unfulfilled``); with ``?`` one met item
    clears the whole. A target naming a whole array (``names_array``) prints ``_*``."""
    items: List[Tuple[str, str]] = []
    stopped = False
    for clause in spec.clauses:
        if clause.kind == "singleton":
            verdict = WAIT if stopped or singleton_waits() else OK
            items.append(("singleton", verdict))
            stopped = stopped or (spec.require_all and verdict == NEVER)
            continue
        for target in clause.targets:
            task = target.array_task_id
            if clause.kind == "aftercorr" and task is None and own_task is not None:
                task = own_task
            verdict = WAIT if stopped else _target_verdict(
                clause.kind, target.job_id, task, target.delay_min, lookup, now)
            text = target.format()
            if target.array_task_id is None and not target.all_tasks and \
                    names_array(target.job_id):
                text = f"{target.job_id}_*" + (f"+{target.delay_min}" if target.delay_min
                                               else "")
            items.append((f"{clause.kind}:{text}", verdict))
            stopped = stopped or (spec.require_all and verdict == NEVER)
    if not spec.require_all and any(verdict == OK for _, verdict in items):
        return ""
    kept = [f"{text}({SHOWN_STATES[verdict]})" for text, verdict in items if verdict != OK]
    return ("," if spec.require_all else "?").join(kept)


def record_dependency(record: JobRecord, lookup: TargetLookup,
                      singleton_waits: Callable[[], bool], names_array: Callable[[int], bool],
                      now: float) -> str:
    """What a report prints as the job's dependency: :func:`shown_dependency` while it has
    not started (pending, or cancelled before it ran: ``--kill-on-invalid-dep``, scancel),
    "" once it did (slurmctld clears a job's dependencies when it starts)."""
    if not record.dependency:
        return ""
    if record.state != PENDING and not (record.state == CANCELLED and not record.node_list):
        return ""
    return shown_dependency(parsed_dependency(record.dependency), record.array_task_id,
                            lookup, singleton_waits, names_array, now)
