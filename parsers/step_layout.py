"""Where a step's tasks go: its nodes, and each node's task ranks.

The nodes are picked as slurmctld's step manager picks them (``-r`` and ``-x`` applied, ``-w``
nodes first, then more in job order until the minimum node count and the step's CPUs are met,
up to the maximum), always in job order; the ranks as ``slurm_step_layout.c`` lays them:
``block`` (counts from a cyclic pass over each node's capacity, ranks consecutive),
``cyclic``, ``plane``, and ``arbitrary`` (``-w`` order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple

from parsers.input_errors import SlurmInputError
from parsers.steps import EXIT_SRUN_ERROR, StepRequest


@dataclass(frozen=True)
class StepLayout:
    """Where a step's tasks run: job node indices, and the ranks on each of them."""

    node_indices: Tuple[int, ...]
    ranks: Tuple[Tuple[int, ...], ...]
    distribution: str
    #: The GPU ids the step holds on each of its nodes, once node 0 has bound them (empty
    #: before: see :mod:`parsers.step_gpus`).
    gpu_ids: Tuple[Tuple[int, ...], ...] = ()

    @property
    def ntasks(self) -> int:
        """Tasks in the step."""
        return sum(len(r) for r in self.ranks)

    def node_of(self, rank: int) -> int:
        """Position (within the step's nodes) of the node running ``rank``."""
        for position, ranks in enumerate(self.ranks):
            if rank in ranks:
                return position
        raise KeyError(rank)


def _counts_cyclic(ntasks: int, capacity: Sequence[int]) -> List[int]:
    """Tasks per node from a cyclic pass over capacities, oversubscribing when all are full."""
    return [len(ranks) for ranks in _ranks_cyclic(ntasks, capacity)]


def _ranks_block(counts: Sequence[int]) -> Tuple[Tuple[int, ...], ...]:
    ranks, next_rank = [], 0
    for count in counts:
        ranks.append(tuple(range(next_rank, next_rank + count)))
        next_rank += count
    return tuple(ranks)


def _ranks_cyclic(ntasks: int, capacity: Sequence[int]) -> Tuple[Tuple[int, ...], ...]:
    per_node: List[List[int]] = [[] for _ in capacity]
    rank, j, over = 0, 0, False
    while rank < ntasks:
        room = False
        for i, cap in enumerate(capacity):
            if rank >= ntasks:
                break
            if j < cap or over:
                per_node[i].append(rank)
                rank += 1
                if j + 1 < cap:
                    room = True
        if not room:
            over = True
        j += 1
    return tuple(tuple(r) for r in per_node)


def _ranks_plane(ntasks: int, nodes: int, size: int) -> Tuple[Tuple[int, ...], ...]:
    per_node: List[List[int]] = [[] for _ in range(nodes)]
    rank = 0
    while rank < ntasks:
        for i in range(nodes):
            take = min(size, ntasks - rank)
            per_node[i].extend(range(rank, rank + take))
            rank += take
            if rank >= ntasks:
                break
    return tuple(tuple(r) for r in per_node)


def _check_relative(request: StepRequest, job_nodes: int) -> None:
    """srun's ``_validate_relative``: ``-r`` plus the step's minimum node count must fit in
    the job's nodes."""
    if request.relative is None:
        return
    low = request.nodes.min_nodes if request.nodes is not None else 1  # type: ignore
    if request.relative + low > job_nodes:
        source = "--nodes" if request.nodes_from_cli else "SLURM_JOB_NUM_NODES"
        raise SlurmInputError(f"--relative and {source} option incompatible with count of "
                              f"allocated nodes ({request.relative}+{low}>{job_nodes})",
                              exit_code=EXIT_SRUN_ERROR)


def _usable_nodes(request: StepRequest, names: Sequence[str],
                  job_id: int) -> Tuple[List[int], List[int]]:
    """The ``-w`` nodes, and the other job nodes the step may use (``-r``, ``-x`` applied),
    as job node indices in job order."""
    excluded = set(request.exclude)
    others = [i for i in range(request.relative or 0, len(names)) if names[i] not in excluded]
    if excluded and not others and not request.nodelist:
        raise SlurmInputError("Hostlist is empty!  Can't run job.", exit_code=EXIT_SRUN_ERROR)
    if not request.nodelist:
        return [], others
    wanted = list(dict.fromkeys(request.nodelist))
    if any(n not in names for n in wanted):
        raise SlurmInputError(f"Unable to create step for job {job_id}: Requested node "
                              "configuration is not available", exit_code=EXIT_SRUN_ERROR)
    required = sorted(names.index(n) for n in wanted)
    return required, [i for i in others if i not in required]


def _pick_nodes(required: List[int], others: List[int], low: int, limit: int, cpus: int,
                cpus_per_node: Sequence[int]) -> List[int]:
    """The step manager's pick: the required nodes, then others in job order up to the
    minimum count, then more while the step's CPUs are not met and the maximum allows."""
    take = max(low - len(required), 0)
    chosen, rest = required + others[:take], others[take:]
    while rest and (not chosen or sum(cpus_per_node[i] for i in chosen) < cpus) and \
            len(chosen) < limit:
        chosen.append(rest.pop(0))
    return sorted(chosen)


def layout_step(request: StepRequest, names: Sequence[str], cpus_per_node: Sequence[int],
                job_id: int, overcommit: bool = False) -> StepLayout:
    """Place the step's tasks on the job's nodes (``names``, with their CPU counts); raises
    srun's errors when the step cannot fit in the job."""
    _check_relative(request, len(names))
    required, others = _usable_nodes(request, names, job_id)
    # srun's view (job_step_create_allocation): the job's nodes minus -x, at most -N's max.
    hosts = len(names) - len(set(request.exclude) & set(names))
    low = request.nodes.min_nodes if request.nodes is not None else None  # type: ignore
    high = request.nodes.max_nodes if request.nodes is not None else 0  # type: ignore
    if high and high < hosts:
        hosts = high
    if low is None:
        low = min(request.ntasks, hosts) if request.ntasks else hosts
    if low > hosts:
        lines = [f"Only allocated {hosts} nodes asked for {low}"]
        if request.exclude:
            lines.append("Are required nodes explicitly excluded?")
        raise SlurmInputError(*lines, exit_code=EXIT_SRUN_ERROR)
    per_node = request.ntasks_per_node
    ntasks = request.ntasks if request.ntasks is not None else hosts * (per_node or 1)
    cpt = request.cpus_per_task or 1
    overcommit = overcommit or request.overcommit
    chosen = _pick_nodes(required, others, low, high or hosts,
                         0 if overcommit else ntasks * cpt, cpus_per_node)
    if not overcommit and ntasks * cpt > sum(cpus_per_node[i] for i in chosen):
        raise SlurmInputError(f"Unable to create step for job {job_id}: More processors "
                              "requested than permitted", exit_code=EXIT_SRUN_ERROR)
    # slurm_step_layout.c: a node holds at least one task; --ntasks-per-node caps it.
    capacity = [max(cpus_per_node[i] // cpt, 1) for i in chosen]
    if per_node:
        capacity = [min(c, per_node * cpt) for c in capacity]
    dist = request.distribution
    kind = getattr(dist, "nodes", None) or ("block" if ntasks > len(chosen) else "cyclic")
    if kind == "cyclic":
        ranks = _ranks_cyclic(ntasks, capacity)
    elif kind == "plane":
        ranks = _ranks_plane(ntasks, len(chosen), getattr(dist, "plane_size", None) or 1)
    elif kind == "arbitrary" and request.nodelist:
        return _layout_arbitrary(request.nodelist, names)
    else:
        ranks = _ranks_block(_counts_cyclic(ntasks, capacity))
    used = [(node, r) for node, r in zip(chosen, ranks) if r]
    return StepLayout(tuple(n for n, _ in used), tuple(r for _, r in used), kind)


def _layout_arbitrary(nodelist: Sequence[str], names: Sequence[str]) -> StepLayout:
    """``-m arbitrary``: task *i* runs on the *i*-th name of ``-w``."""
    order: List[int] = []
    per_node: Dict[int, List[int]] = {}
    for rank, name in enumerate(nodelist):
        index = names.index(name)
        if index not in per_node:
            order.append(index)
            per_node[index] = []
        per_node[index].append(rank)
    return StepLayout(tuple(order), tuple(tuple(per_node[i]) for i in order), "arbitrary")
