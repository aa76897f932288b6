"""sbatch's cross-option checks, with Slurm's messages: which options exclude each other,
which one wins when the command line and the environment disagree, and the count checks of
``_opt_verify``.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from parsers.input_errors import EXIT_SUBMIT_ERROR, SlurmInputError, fatal

#: The warning for a --gpus-per-node and --gres=gpu pair that asks for the same GPUs.
SAME_GPUS_TWICE = ("--gpus-per-node and --gres=gpu ask for the same GPUs: accepted as Slurm "
                   "before 26.05 accepts it (26.05 refuses the pair); give only one of them")


def check_options(values: Dict[str, object], set_by: Dict[str, str]) -> Tuple[str, ...]:
    """Slurm's mutually-exclusive option checks, in the order of 26.05's
    ``validate_options_salloc_sbatch_srun`` (``slurm_opt.c``), then sbatch's count checks.
    ``set_by`` says where each field came from: ``cli`` (``#SBATCH`` lines count as the
    command line there: set_by_env is false for them) or ``env``. May clear fields.
    Returns the warnings of the pairs accepted although 26.05 refuses them."""
    notes: List[str] = []
    same_gpus = _check_gres_vs_gpus_per_node(values)
    if same_gpus:
        notes.append(same_gpus)
    _check_ntasks_per_gpu(values, set_by)
    _check_memory(values, set_by)
    if set_by.get("exclusive") == "cli" and set_by.get("oversubscribe") == "cli":
        raise fatal("--exclusive and --oversubscribe options are mutually exclusive")
    _check_tres_per_task(values, set_by)
    _check_cpus_per_tres(values, set_by)
    _check_counts(values)
    return tuple(notes)


def _check_tres_per_task(values: Dict[str, object], set_by: Dict[str, str]) -> None:
    """``_validate_tres_per_task`` (its refusal of TRES that make no sense per task is in the
    value reader): ``gres:`` is spelled ``gres/``; then its siblings: ``cpu=N`` is ``-c N``
    and ``gres/gpu[:type]=N`` is ``--gpus-per-task=[type:]N``. The same sibling given both
    ways as options is fatal; an option beats the environment's ``--tres-per-task`` entry."""
    tres = values.get("tres_per_task")
    if not tres:
        return
    items: List[Tuple[str, int]] = [
        ("gres/" + name[5:] if name.startswith("gres:") else name, count)
        for name, count in tres]  # type: ignore[attr-defined]
    tres_by = set_by.get("tres_per_task")
    cpus = [count for name, count in items if "cpu" in name]
    if cpus:
        if set_by.get("cpus_per_task") == "cli" and tres_by == "cli":
            raise fatal("You can not have --tres-per-task=cpu= and --cpus-per-task please "
                        "use one or the other")
        if set_by.get("cpus_per_task") == "cli":
            items = [(n, values["cpus_per_task"] if "cpu" in n else c)  # type: ignore[misc]
                     for n, c in items]
        else:
            values["cpus_per_task"] = cpus[0]
            set_by["cpus_per_task"] = tres_by or "cli"
    gpus = [(name[len("gres/gpu"):].lstrip(":"), count) for name, count in items
            if name == "gres/gpu" or name.startswith("gres/gpu:")]
    if gpus:
        if set_by.get("gpus_per_task") == "cli" and tres_by == "cli":
            raise fatal("You can not have --tres-per-task=gres/gpu= and --gpus-per-task please "
                        "use one or the other")
        if set_by.get("gpus_per_task") != "cli":
            from parsers.values.gres import GpuCount

            values["gpus_per_task"] = tuple(GpuCount(kind or None, count)
                                            for kind, count in gpus)
            set_by["gpus_per_task"] = tres_by or "cli"
    values["tres_per_task"] = tuple(items)


def _gpu_counts(items: object) -> List[Tuple[str, int]]:
    """``(type, count)`` of each GPU item (``--gres`` items named gpu, ``--gpus*`` items),
    sorted: two requests are the same when these are equal."""
    found = [(item.type or "", item.count) for item in items  # type: ignore[attr-defined]
             if getattr(item, "name", "gpu") == "gpu"]
    return sorted(found)


def _check_gres_vs_gpus_per_node(values: Dict[str, object]) -> Optional[str]:
    """26.05's ``_validate_gres_vs_gpus_per_node`` refuses --gpus-per-node next to
    --gres=gpu. Slurm before 26.05 accepts the pair (older submitit generates it), and then
    allocates what --gres says while SLURM_GPUS_PER_NODE shows --gpus-per-node (22.05,
    observed): so the same GPUs asked for twice are accepted with a warning, and a pair
    that disagrees is refused in 26.05's words."""
    gres = _gpu_counts(values.get("gres") or ())
    if not gres or "gpus_per_node" not in values:
        return None
    if gres != _gpu_counts(values["gpus_per_node"]):
        raise fatal("--gpus-per-node and --gres=gpu are mutually exclusive.")
    return SAME_GPUS_TWICE


#: What ``_validate_ntasks_per_gpu`` refuses next to --ntasks-per-gpu/--ntasks-per-tres: the
#: field, and how the message names it when given as an option or by the environment.
_NOT_WITH_NTASKS_PER_GPU = (
    ("tres_per_task", "--tres-per-task", "SLURM_TRES_PER_TASK"),
    ("gpus_per_task", "--gpus-per-task", "SLURM_GPUS_PER_TASK"),
    ("gpus_per_socket", "--gpus-per-socket", "SLURM_GPUS_PER_SOCKET"),
    ("ntasks_per_node", "--ntasks-per-node", "SLURM_NTASKS_PER_NODE"),
)


def _reset(values: Dict[str, object], set_by: Dict[str, str], field: str) -> None:
    """``slurm_option_reset``: the option is unset again."""
    values.pop(field, None)
    set_by.pop(field, None)


def _check_ntasks_per_gpu(values: Dict[str, object], set_by: Dict[str, str]) -> None:
    """``_validate_ntasks_per_gpu``: --ntasks-per-gpu and --ntasks-per-tres against each
    other, then the options that also say how tasks and GPUs relate."""
    gpu, tres = set_by.get("ntasks_per_gpu"), set_by.get("ntasks_per_tres")
    if not gpu and not tres:
        return
    if gpu == tres == "cli" and values["ntasks_per_gpu"] != values["ntasks_per_tres"]:
        raise fatal(f"Inconsistent values set to --ntasks-per-gpu={values['ntasks_per_gpu']} "
                    f"and --ntasks-per-tres={values['ntasks_per_tres']} ")
    if gpu == "cli" and tres == "env":
        _reset(values, set_by, "ntasks_per_tres")
    elif tres == "cli" and gpu == "env":
        _reset(values, set_by, "ntasks_per_gpu")
    elif gpu == tres == "env" and values["ntasks_per_gpu"] != values["ntasks_per_tres"]:
        raise fatal("Inconsistent values set by environment variables SLURM_NTASKS_PER_GPU="
                    f"{values['ntasks_per_gpu']} and SLURM_NTASKS_PER_TRES="
                    f"{values['ntasks_per_tres']} ")
    for field, as_option, as_variable in _NOT_WITH_NTASKS_PER_GPU:
        spelled = {"cli": as_option, "env": as_variable}.get(set_by.get(field, ""))
        if spelled == "SLURM_TRES_PER_TASK" and not any(
                "gres/gpu" in name for name, _ in values[field]):  # type: ignore[attr-defined]
            continue  # only a GPU in the variable conflicts; it may hold cpu=# alone
        if spelled:
            raise fatal(f"{spelled} is mutually exclusive with --ntasks-per-gpu and "
                        "SLURM_NTASKS_PER_GPU")


def _check_memory(values: Dict[str, object], set_by: Dict[str, str]) -> None:
    """``_validate_memory_options``: one memory option given as an option clears the
    environment's others; two as options, or two from the environment, are fatal."""
    mem_fields = ("mem_per_node_mb", "mem_per_cpu_mb", "mem_per_gpu_mb")
    by_cli = [f for f in mem_fields if set_by.get(f) == "cli"]
    if len(by_cli) > 1:
        raise fatal("--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.")
    if by_cli:
        for other in mem_fields:
            if other != by_cli[0]:
                _reset(values, set_by, other)
    elif sum(1 for f in mem_fields if f in values) > 1:
        raise fatal("SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are "
                    "mutually exclusive.")


def _check_cpus_per_tres(values: Dict[str, object], set_by: Dict[str, str]) -> None:
    """``_validate_cpus_per_tres``: -c (or --tres-per-task=cpu:#) and --cpus-per-gpu from the
    same kind of source are fatal; given as an option, either clears the environment's
    other."""
    tres = values.get("tres_per_task") or ()
    cpu_fields = ["cpus_per_task"]
    if any("cpu" in name for name, _ in tres):  # type: ignore[attr-defined]
        cpu_fields.append("tres_per_task")
    cpt_cli = any(set_by.get(f) == "cli" for f in cpu_fields)
    cpt_env = any(set_by.get(f) == "env" for f in cpu_fields)
    cpg = set_by.get("cpus_per_gpu")
    if (cpt_cli and cpg == "cli") or (cpt_env and cpg == "env"):
        raise fatal("--cpus-per-task, --tres-per-task=cpu:#, and --cpus-per-gpu are mutually "
                    "exclusive")
    if cpt_cli and cpg == "env":
        _reset(values, set_by, "cpus_per_gpu")
    elif cpg == "cli" and cpt_env:
        _reset(values, set_by, "cpus_per_task")
        if tres:  # slurm_option_update_tres_per_task(0, "cpu", …) drops the cpu count
            values["tres_per_task"] = tuple(
                (n, c) for n, c in tres if n != "cpu")  # type: ignore[attr-defined]


def _check_counts(values: Dict[str, object]) -> None:
    """sbatch's ``_opt_verify`` checks of task and node counts."""
    nodes = values.get("nodes")
    if nodes is not None:
        low, high = nodes.min_nodes, nodes.max_nodes  # type: ignore[attr-defined]
        if low < 0 or high < 0 or (high and low > high):
            raise SlurmInputError(f"invalid number of nodes (-N {low}-{high})",
                                  exit_code=EXIT_SUBMIT_ERROR)
