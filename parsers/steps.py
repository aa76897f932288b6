"""srun inside an allocation: the step request and where its tasks go.

* :func:`parse_srun` — srun's option processing: the job's ``SLURM_*`` variables are srun's
  input environment (that is how a step inherits ``-N``, ``-n``, ``--ntasks-per-node``…), the
  command line overrides them, then srun's task-count rules (``src/srun/opt.c``).
* :func:`layout_step` — the step's nodes and each node's task ranks. The nodes are picked as
  slurmctld's step manager picks them (``-r`` and ``-x`` applied, ``-w`` nodes first, then
  more in job order until the minimum node count and the step's CPUs are met, up to the
  maximum), always in job order; the ranks as ``slurm_step_layout.c`` lays them: ``block``
  (counts from a cyclic pass over each node's capacity, ranks consecutive), ``cyclic``,
  ``plane``, and ``arbitrary`` (``-w`` order).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from parsers.errors import SlurmInputError, fatal
from parsers.getopt import GivenOption, parse_args
from parsers.option_values import read_value
from parsers.options import SRUN
from parsers.sbatch import RESET, env_options

#: ``srun`` reports its own errors with exit status 1.
EXIT_SRUN_ERROR = 1


@dataclass(frozen=True)
class StepRequest:
    """What an ``srun`` asks for, after its environment and command line are merged.

    ``nodes_from_cli`` is Slurm's "-N set by the command line" (srun's own lowering of the
    node count counts, a node count inherited from the job does not). ``ntasks`` is None when
    srun derives it from the step's nodes (``--ntasks-per-node`` or one task per node).
    """

    command: Tuple[str, ...]
    nodes: Optional[object] = None
    nodes_from_cli: bool = False
    ntasks: Optional[int] = None
    ntasks_per_node: Optional[int] = None
    cpus_per_task: Optional[int] = None
    nodelist: Tuple[str, ...] = ()
    exclude: Tuple[str, ...] = ()
    relative: Optional[int] = None
    distribution: Optional[object] = None
    label: bool = False
    unbuffered: bool = False
    output: Optional[str] = None
    error: Optional[str] = None
    input: Optional[str] = None
    open_mode: Optional[str] = None
    kill_on_bad_exit: Optional[int] = None
    wait_s: Optional[int] = None
    export: Optional[object] = None
    chdir: Optional[str] = None
    overlap: bool = False
    exact: bool = False
    overcommit: bool = False
    exclusive: Optional[str] = None
    gpus_per_task: Tuple[object, ...] = ()
    gpus_per_node: Tuple[object, ...] = ()
    gpus: Tuple[object, ...] = ()
    gres: Tuple[object, ...] = ()
    job_name: Optional[str] = None
    multi_prog: bool = False
    quit_on_interrupt: bool = False
    disable_status: bool = False
    preserve_env: bool = False
    time_limit_min: Optional[int] = None
    immediate_s: Optional[int] = None
    jobid: Optional[str] = None
    prolog: Optional[str] = None
    epilog: Optional[str] = None
    task_prolog: Optional[str] = None
    task_epilog: Optional[str] = None
    container_image: Optional[str] = None
    container_mounts: Tuple[Tuple[str, str, str], ...] = ()
    container_workdir: Optional[str] = None
    container_name: Optional[str] = None
    quiet: bool = False
    verbose: int = 0
    warnings: Tuple[str, ...] = field(default=(), compare=False)
    other_options: Tuple[Tuple[str, object], ...] = ()


_STEP_FIELDS = frozenset(StepRequest.__dataclass_fields__)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class StepLayout:
    """Where a step's tasks run: job node indices, and the ranks on each of them."""

    node_indices: Tuple[int, ...]
    ranks: Tuple[Tuple[int, ...], ...]
    distribution: str

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


def _read_all(given: Sequence[GivenOption]) -> Tuple[Dict[str, object], Dict[str, str],
                                                      List[str]]:
    values: Dict[str, object] = {}
    set_by: Dict[str, str] = {}
    notes: List[str] = []
    for item in given:
        option = item.option
        name = option.field or option.long
        if item.raw == RESET:
            values.pop(name, None)
            continue
        value = read_value(option, item.raw)
        values[name] = value
        set_by[name] = "cli" if item.source == "command line" else "env"
        level = option.level(SRUN)
        if level == "rejected":
            raise SlurmInputError(f"--{option.long} is not supported by sbatch-k8s: "
                                  f"{option.note}", exit_code=EXIT_SRUN_ERROR)
        if level in ("approximated", "ignored") and not (
                option.long == "cpu-bind" and str(value).endswith("none")):
            verb = "is approximated" if level == "approximated" else "has no effect"
            notes.append(f"--{option.long} {verb}: {option.note}")
    return values, set_by, notes


def parse_srun(argv: Sequence[str], environ: Mapping[str, str]) -> StepRequest:
    """Merge srun's input environment and ``argv`` into a :class:`StepRequest`."""
    parsed = parse_args(SRUN, argv)
    if not parsed.operands:
        raise fatal("No command given to execute.")
    env = tuple(g for g in env_options(environ, SRUN)
                if not (g.option.long == "job-name" and "SLURM_JOB_ID" in environ))
    values, set_by, notes = _read_all(env + parsed.options)
    _apply_task_count_rules(values, set_by, notes)
    known = {k: v for k, v in values.items() if k in _STEP_FIELDS}
    other = tuple(sorted((k, v) for k, v in values.items() if k not in _STEP_FIELDS))
    return StepRequest(command=tuple(parsed.operands), warnings=tuple(notes),
                       other_options=other, nodes_from_cli=set_by.get("nodes") == "cli",
                       **known)  # type: ignore[arg-type]


def _apply_task_count_rules(values: Dict[str, object], set_by: Dict[str, str],
                            notes: List[str]) -> None:
    """srun's ``_opt_verify`` (26.05): how -N, -n, -w and --ntasks-per-node settle each
    other. Values set from the environment are the job's (``SLURM_NTASKS`` …). A task count
    implied by ``--ntasks-per-node`` is left to :func:`layout_step`, which knows the step's
    nodes (``_set_ntasks``)."""
    from parsers.values.nodes import NodeRange

    nodes = values.get("nodes")
    nodelist = values.get("nodelist")
    if nodelist and nodes is None:
        count = len(dict.fromkeys(nodelist))  # type: ignore[arg-type]
        nodes = values["nodes"] = NodeRange(count, count)
        set_by["nodes"] = "nodelist"
    per_node = values.get("ntasks_per_node")
    ntasks = values.get("ntasks")
    if nodes is not None and ntasks is None and per_node is None:
        if nodes.min_nodes == nodes.max_nodes or not nodes.max_nodes:  # type: ignore
            values["ntasks"] = nodes.min_nodes  # type: ignore[attr-defined]
    elif nodes is not None and ntasks is not None:
        low, high = nodes.min_nodes, nodes.max_nodes  # type: ignore[attr-defined]
        high = min(high, int(ntasks)) if high else high  # type: ignore[call-overload]
        if 0 < int(ntasks) < low:  # type: ignore[call-overload]
            notes.append(f"can't run {ntasks} processes on {low} nodes, "
                         f"setting nnodes to {ntasks}")
            low = int(ntasks)  # type: ignore[call-overload]
            high = max(high, low)
            set_by["nodes"] = "cli"
        values["nodes"] = NodeRange(low, high)
        if per_node is not None and set_by.get("ntasks") == "env" and \
                set_by.get("nodes") != "env":
            values.pop("ntasks", None)
        elif per_node is not None and high and int(ntasks) > high * int(per_node):  # type: ignore
            notes.append(f"can't honor --ntasks-per-node set to {per_node} which doesn't match "
                         f"the requested tasks {ntasks} with the maximum number of requested "
                         f"nodes {high}. Ignoring --ntasks-per-node.")
            values.pop("ntasks_per_node", None)


def _counts_cyclic(ntasks: int, capacity: Sequence[int]) -> List[int]:
    """Tasks per node from a cyclic pass over capacities, oversubscribing when all are full."""
    counts = [0] * len(capacity)
    placed, over, j = 0, False, 0
    while placed < ntasks:
        room = False
        for i, cap in enumerate(capacity):
            if placed >= ntasks:
                break
            if j < cap or over:
                counts[i] += 1
                placed += 1
                if j + 1 < cap:
                    room = True
        if not room:
            over = True
        j += 1
    return counts


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
