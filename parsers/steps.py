"""srun inside an allocation: the step request and where its tasks go.

* :func:`parse_srun` — srun's option processing: the job's ``SLURM_*`` variables are srun's
  input environment (that is how a step inherits ``-N``, ``-n``, ``--ntasks-per-node``…), the
  command line overrides them, then srun's task-count rules (``src/srun/opt.c``).
* :func:`layout_step` — the step's nodes and each node's task ranks: ``block`` (counts from a
  cyclic pass over each node's CPU capacity, ranks consecutive), ``cyclic``, ``plane``, and
  ``arbitrary`` (``-w`` order), as ``slurm_step_layout.c`` does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from parsers.errors import SlurmInputError
from parsers.getopt import GivenOption, parse_args
from parsers.option_values import read_value
from parsers.options import SRUN
from parsers.sbatch import env_options

#: ``srun`` reports its own errors with exit status 1.
EXIT_SRUN_ERROR = 1


@dataclass(frozen=True)
class StepRequest:
    """What an ``srun`` asks for, after its environment and command line are merged."""

    command: Tuple[str, ...]
    nodes: Optional[object] = None
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
        if item.raw == "\0reset":
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
        raise SlurmInputError("No command given to execute.", exit_code=EXIT_SRUN_ERROR)
    env = tuple(g for g in env_options(environ, SRUN)
                if not (g.option.long == "job-name" and "SLURM_JOB_ID" in environ))
    values, set_by, notes = _read_all(env + parsed.options)
    _apply_task_count_rules(values, set_by, notes)
    known = {k: v for k, v in values.items() if k in _STEP_FIELDS}
    other = tuple(sorted((k, v) for k, v in values.items() if k not in _STEP_FIELDS))
    return StepRequest(command=tuple(parsed.operands), warnings=tuple(notes),
                       other_options=other, **known)  # type: ignore[arg-type]


def _apply_task_count_rules(values: Dict[str, object], set_by: Dict[str, str],
                            notes: List[str]) -> None:
    """srun's ``_opt_verify`` (26.05): how -N, -n, -w and --ntasks-per-node settle each
    other. Values set from the environment are the job's (``SLURM_NTASKS`` …)."""
    from parsers.values.nodes import NodeRange

    nodes = values.get("nodes")
    nodelist = values.get("nodelist")
    if nodelist and nodes is None:
        count = len(dict.fromkeys(nodelist))  # type: ignore[arg-type]
        nodes = values["nodes"] = NodeRange(count, count)
        set_by["nodes"] = "cli"
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
    per_node = values.get("ntasks_per_node")
    if per_node is not None and values.get("ntasks") is None and nodes is not None:
        values["ntasks"] = values["nodes"].min_nodes * int(per_node)  # type: ignore


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


def _select_nodes(request: StepRequest, names: Sequence[str]) -> List[int]:
    """Job node indices the step may use, in job order (``-r``, ``-w``, ``-x`` applied)."""
    candidates = list(range(len(names)))
    if request.relative is not None:
        if request.relative >= len(names):
            raise SlurmInputError(f"--relative={request.relative} exceeds the number of nodes "
                                  f"in the job ({len(names)})", exit_code=EXIT_SRUN_ERROR)
        candidates = candidates[request.relative:]
    if request.exclude:
        excluded = set(request.exclude)
        candidates = [i for i in candidates if names[i] not in excluded]
    if request.nodelist:
        wanted = list(dict.fromkeys(request.nodelist))
        unknown = [n for n in wanted if n not in names]
        if unknown:
            raise SlurmInputError("Unable to create step for job: Requested node "
                                  "configuration is not available", exit_code=EXIT_SRUN_ERROR)
        chosen = [names.index(n) for n in wanted]
        rest = [i for i in candidates if i not in chosen]
        candidates = sorted(chosen) + rest
    return candidates


def layout_step(request: StepRequest, names: Sequence[str], cpus_per_node: Sequence[int],
                job_id: int, overcommit: bool = False) -> StepLayout:
    """Place the step's tasks on the job's nodes (``names``, with their CPU counts); raises
    srun's errors when the step cannot fit in the job."""
    candidates = _select_nodes(request, names)
    cpt = request.cpus_per_task or 1
    wanted_nodes = request.nodes.max_nodes if request.nodes is not None else None  # type: ignore
    if request.nodelist and wanted_nodes is None:
        wanted_nodes = len(dict.fromkeys(request.nodelist))
    ntasks = request.ntasks
    if wanted_nodes is None:
        wanted_nodes = len(candidates) if ntasks is None else min(len(candidates), ntasks)
    if wanted_nodes > len(candidates) or wanted_nodes < 1:
        lines = [f"Only allocated {len(candidates)} nodes asked for {wanted_nodes}"]
        if request.exclude:
            lines.append("Are required nodes explicitly excluded?")
        raise SlurmInputError(*lines, exit_code=EXIT_SRUN_ERROR)
    chosen = candidates[:wanted_nodes]
    if ntasks is None:
        ntasks = wanted_nodes * (request.ntasks_per_node or 1)
    capacity = [max(cpus_per_node[i] // cpt, 0) for i in chosen]
    if ntasks > sum(capacity) and not (overcommit or request.overcommit):
        raise SlurmInputError(f"Unable to create step for job {job_id}: More processors "
                              "requested than permitted", exit_code=EXIT_SRUN_ERROR)
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
