"""Job dependencies (``--dependency=afterok:20:21,afterany:23``).

Parsing follows slurmctld's ``_parse_dependency_str`` and ``_xlate_array_dep``
(``src/slurmctld/job_scheduler.c``); :meth:`DependencySpec.format` prints the way slurmctld
rebuilds ``Dependency=``/squeue ``%E`` (one ``type:job`` per target, without the
``(unfulfilled)`` state).

Quirks kept: a bare job id is ``afterany`` and may not be followed by a typed clause
(``123,afterok:5`` is refused while ``afterok:5,123`` is fine) nor by ``?``; in
``afterok:7_[1-3]+10`` the delay belongs to the last expanded task only; ``job_[a-b:s]`` leaves
``b`` out, as Slurm's ``bitfmt2int`` does. Deviations: type names must be spelled out (Slurm
accepts anything starting ``afterburstb``), the legacy ``expand`` type is refused, and mixing
``,`` with ``?`` is always an error (Slurm lets a bare id switch the separator).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

from parsers.input_errors import ValueSyntaxError
from parsers.values.bitfmt import parse_bitfmt
from parsers.values.grammar import parse_value

#: Clause types; a bare job id means ``afterany``.
DEPENDENCY_KINDS = (
    "after", "afterany", "afterburstbuffer", "aftercorr", "afternotok", "afterok", "singleton",
)
MAX_JOB_ID = 2**32 - 1
MAX_TASK_ID = 2**31 - 1


@dataclass(frozen=True)
class DependencyTarget:
    """One job (or array task) a clause waits for; ``all_tasks`` is ``job_*`` (the whole array)."""

    job_id: int
    array_task_id: Optional[int]
    delay_min: int
    all_tasks: bool = False

    def format(self) -> str:
        """``123``, ``123_4``, ``123_*``, with ``+minutes`` when delayed."""
        text = str(self.job_id)
        if self.all_tasks:
            text += "_*"
        elif self.array_task_id is not None:
            text += f"_{self.array_task_id}"
        return text + (f"+{self.delay_min}" if self.delay_min else "")


@dataclass(frozen=True)
class DependencyClause:
    """``kind:target[:target...]``; ``singleton`` has no targets."""

    kind: str
    targets: Tuple[DependencyTarget, ...]


@dataclass(frozen=True)
class DependencySpec:
    """A whole ``--dependency`` value; ``require_all`` is False for ``?``-joined clauses."""

    clauses: Tuple[DependencyClause, ...]
    require_all: bool

    def format(self) -> str:
        """Canonical text as slurmctld prints it: ``afterok:20,afterok:21,afterany:23``."""
        parts: List[str] = []
        for clause in self.clauses:
            if clause.kind == "singleton":
                parts.append("singleton")
            parts.extend(f"{clause.kind}:{t.format()}" for t in clause.targets)
        return ("," if self.require_all else "?").join(parts)

    def __str__(self) -> str:
        return self.format()


class DependencyTransformer:
    """Rules of ``dependency.lark``."""

    def INT(self, token: str) -> int:
        return int(token)

    # The task rules give the task ids a target names; None stands for "_*" (all tasks).

    def task_id(self, children: List[int]) -> Tuple[Optional[int], ...]:
        if children[0] > MAX_TASK_ID:
            raise ValueSyntaxError("array task id out of range")
        return (children[0],)

    def all_tasks(self, children: List[Any]) -> Tuple[Optional[int], ...]:
        return (None,)

    def task_set(self, children: List[Any]) -> Tuple[Optional[int], ...]:
        return parse_bitfmt(str(children[0]), MAX_TASK_ID)

    def delay(self, children: List[int]) -> int:
        if children[0] <= 0:
            raise ValueSyntaxError("dependency delay must be positive")
        return children[0]

    def target(self, children: List[Any]) -> List[DependencyTarget]:
        job_id, tasks, delay_min, _state = children
        _check_job_id(job_id)
        if tasks is None:
            return [DependencyTarget(job_id, None, delay_min or 0)]
        last = len(tasks) - 1
        return [
            DependencyTarget(job_id, task, (delay_min or 0) if i == last else 0, task is None)
            for i, task in enumerate(tasks)
        ]

    def typed(self, children: List[Any]) -> Tuple[str, DependencyClause]:
        kind, *targets = children
        flat = tuple(t for group in targets for t in group)
        return "typed", DependencyClause(str(kind).lower(), flat)

    def singleton(self, children: List[Any]) -> Tuple[str, DependencyClause]:
        return "singleton", DependencyClause("singleton", ())

    def bare(self, children: List[Any]) -> Tuple[str, DependencyClause]:
        job_id, task = children
        _check_job_id(job_id)
        task_id = task[0] if task is not None else None
        target = DependencyTarget(job_id, task_id, 0, task is not None and task_id is None)
        return "bare", DependencyClause("afterany", (target,))

    def all_of(self, children: List[Any]) -> str:
        return ","

    def any_of(self, children: List[Any]) -> str:
        return "?"

    def start(self, children: List[Any]) -> DependencySpec:
        clauses = children[0::2]
        seps = children[1::2]
        if len(set(seps)) > 1:
            raise ValueSyntaxError("dependencies mix ',' and '?'")
        for i, (form, _clause) in enumerate(clauses[:-1]):
            if form == "bare" and (seps[i] == "?" or clauses[i + 1][0] == "typed"):
                raise ValueSyntaxError("a bare job id must come after typed dependencies")
        return DependencySpec(tuple(c for _, c in clauses), seps[:1] != ["?"])


def _check_job_id(job_id: int) -> None:
    if job_id == 0 or job_id > MAX_JOB_ID:
        raise ValueSyntaxError("invalid job id in dependency")


def parse_dependency(text: str) -> DependencySpec:
    """Parse ``--dependency``; ``""`` and ``"0"`` mean no dependency (empty spec)."""
    if text in ("", "0"):
        return DependencySpec((), True)
    spec: DependencySpec = parse_value("dependency", text, DependencyTransformer)
    return spec
