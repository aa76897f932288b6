"""The targets: which Kubernetes workload kind a job becomes, and what each kind implies.

One table (:data:`TARGETS`) says, per target, the module that renders it, the name of the main
container, the names Kubernetes or the operator derives from the workload's name (they bound
how long the name may be), and whether a single-node array runs as one Indexed Job
(``completions`` = array size) or as one workload per element. The renderers are imported only
when used. The names themselves, which the option reader, the configuration schema and the
pod-side runtime need too, are :data:`parsers.platforms.target_names.TARGET_NAMES`: the table has a
row for each, in that order.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

from parsers.platforms.target_names import INDEXED_JOB, JOBSET, MPIJOB, PYTORCHJOB

if TYPE_CHECKING:
    from translators.plan import JobPlan, Unit


@dataclass(frozen=True)
class TargetTraits:
    """What one target implies.

    ``derived_names`` are ``(pattern, back)`` pairs: ``pattern`` formats the workload name and,
    when ``back`` is not None, the index ``pods - back`` (skipped when negative: no such pod).
    """

    name: str
    module: str
    container: str
    derived_names: Tuple[Tuple[str, Optional[int]], ...]
    indexed_arrays: bool


TARGETS: Dict[str, TargetTraits] = {
    # Pod hostname <name>-<completion index> (Indexed Job rule).
    # Pods <job>-<index>-<5 random chars>: kept under the Job controller's 58 characters of
    # generated prefix, so it never cuts the job id off (translators.ownership).
    INDEXED_JOB: TargetTraits(INDEXED_JOB, "indexed_job", "main",
                              (("{name}-{index}", 1), ("{name}-{index}-abcde", 1)), True),
    # Pods <js>-<rjob>-<jobIdx>-<podIdx>-<5 random chars> (the JobSet webhook checks this).
    JOBSET: TargetTraits(JOBSET, "jobset", "main", (("{name}-node-0-{index}-abcde", 1),), True),
    # Pods and per-pod Services <job>-master-0, <job>-worker-<i> (i < nodes - 1).
    PYTORCHJOB: TargetTraits(PYTORCHJOB, "pytorchjob", "pytorch",
                             (("{name}-master-0", None), ("{name}-worker-{index}", 2)), False),
    # Launcher Job <job>-launcher, worker pods <job>-worker-<i> (i < nodes - 1).
    MPIJOB: TargetTraits(MPIJOB, "mpijob", "main",
                         (("{name}-launcher-abcde", None), ("{name}-worker-{index}", 2)),
                         False),
}


def target_traits(name: str) -> TargetTraits:
    """The traits of target ``name``; ValueError for an unknown target (a caller's bug: the
    option and config readers accept only these names)."""
    try:
        return TARGETS[name]
    except KeyError:
        raise ValueError(f"unknown target {name!r}; one of {', '.join(TARGETS)}") from None


def unit_renderer(name: str) -> Callable[["JobPlan", "Unit"], List[Dict[str, Any]]]:
    """The ``render_unit(plan, unit)`` function of target ``name``."""
    module = importlib.import_module(f"translators.targets.{target_traits(name).module}")
    renderer: Callable[["JobPlan", "Unit"], List[Dict[str, Any]]] = module.render_unit
    return renderer
