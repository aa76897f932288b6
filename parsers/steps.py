"""srun inside an allocation: the step request.

:func:`parse_srun` is srun's option processing: the job's ``SLURM_*`` variables are srun's
input environment (that is how a step inherits ``-N``, ``-n``, ``--ntasks-per-node``…), the
command line overrides them, then srun's checks (``_opt_verify`` in ``src/srun/opt.c``): the
task-count rules, and a ``-w`` list cut to ``-N``'s maximum. Where the tasks then go is
:mod:`parsers.step_layout`'s business; which GPUs they get, :mod:`parsers.step_gpus`'.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from parsers.input_errors import SlurmInputError, fatal
from parsers.getopt import GivenOption, parse_args
from parsers.option_values import read_value
from parsers.options import SRUN
from parsers.sbatch_input import RESET, env_options

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
    #: ``--acctg-freq`` as given; the job's applies when the step gives none.
    acctg_freq: Optional[str] = None
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
    #: srun's ``error()`` lines about a request it still runs (``srun: error: …``).
    errors: Tuple[str, ...] = field(default=(), compare=False)
    other_options: Tuple[Tuple[str, object], ...] = ()


_STEP_FIELDS = frozenset(StepRequest.__dataclass_fields__)  # type: ignore[attr-defined]


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
                option.long == "cpu-bind" and binds_nothing(str(value))):
            verb = "is approximated" if level == "approximated" else "has no effect"
            notes.append(f"--{option.long} {verb}: {option.note}")
    return values, set_by, notes


#: ``--cpu-bind`` words that only say how much srun reports (``q``: what a job-step
#: executor passes), and the bindings pods have anyway.
CPU_BIND_REPORTING = ("q", "quiet", "v", "verbose")
CPU_BIND_NONE = ("none", "no")


def binds_nothing(cpu_bind: str) -> bool:
    """Whether a ``--cpu-bind`` value asks for no binding beyond what pods do (none): only
    reporting words and ``none`` (``q``, ``quiet,none``, ``none``)."""
    words = [w for w in cpu_bind.lower().split(",") if w and w not in CPU_BIND_REPORTING]
    return all(w in CPU_BIND_NONE for w in words)


def parse_srun(argv: Sequence[str], environ: Mapping[str, str]) -> StepRequest:
    """Merge srun's input environment and ``argv`` into a :class:`StepRequest`."""
    parsed = parse_args(SRUN, argv)
    if not parsed.operands:
        raise fatal("No command given to execute.")
    env = tuple(g for g in env_options(environ, SRUN)
                if not (g.option.long == "job-name" and "SLURM_JOB_ID" in environ))
    values, set_by, notes = _read_all(env + parsed.options)
    _apply_task_count_rules(values, set_by, notes)
    errors = _cut_nodelist(values)
    known = {k: v for k, v in values.items() if k in _STEP_FIELDS}
    other = tuple(sorted((k, v) for k, v in values.items() if k not in _STEP_FIELDS))
    return StepRequest(command=tuple(parsed.operands), warnings=tuple(notes),
                       errors=tuple(errors),
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


def _cut_nodelist(values: Dict[str, object]) -> List[str]:
    """srun's ``_opt_verify``: a ``-w`` list longer than the maximum node count loses its last
    names (``hostlist_pop``), with srun's error line; not for ``-m arbitrary``, whose list
    is the task layout."""
    nodes, nodelist = values.get("nodes"), values.get("nodelist")
    limit = getattr(nodes, "max_nodes", 0)
    if not nodelist or not limit or getattr(values.get("distribution"), "nodes", None) == \
            "arbitrary":
        return []
    names = list(nodelist)  # type: ignore[call-overload]
    if len(names) <= limit:
        return []
    values["nodelist"] = tuple(names[:limit])
    return [f"Required nodelist includes more nodes than permitted by max-node count "
            f"({len(names)} > {limit}). Eliminating nodes from the nodelist."]
