"""Platform pitfalls in a batch script's body: the mistakes behind most failed multi-node
jobs on GPU platforms (``reference/platforms.md``: AI Hub's list of NCCL/CUDA variables,
AIStation's rendezvous id, the task-training platform's ranks, ModelArts' shell).

:data:`RULES` is the one table: each rule reads the script (:class:`Script`: its logical
lines, continuation lines joined, with what each line sets and expands) and yields
:class:`Finding` s — the line, what was found, why it breaks, the fix. ``sbatch --k8s-lint``
prints them (``sbatch_k8s/cli/lint.py``). Nothing here runs the script: a variable set in a
file the script sources is not seen (the finding says so).
"""

from __future__ import annotations

import re
from typing import Callable, Dict, FrozenSet, Iterable, List, NamedTuple, Optional, \
    Sequence, Tuple

from parsers.platforms.platform_names import PLATFORM_VARIABLES, SHELL_VARIABLES, SLURM_SET


class Finding(NamedTuple):
    """One pitfall: the script's line, the rule, what was found, why it breaks, the fix."""

    line: int
    rule: str
    found: str
    why: str
    fix: str


class Line(NamedTuple):
    """A logical line: its first physical line's number, its text, and whether it is part
    of a heredoc's body (``expands``: whether the shell expands ``$`` there)."""

    number: int
    text: str
    heredoc: bool = False
    expands: bool = True


class Script(NamedTuple):
    """What the rules read."""

    lines: Tuple[Line, ...]
    shebang: str
    #: ``--nodes=min-max`` when min < max, else None.
    node_range: Optional[Tuple[int, int]]
    #: Variables the job's environment has at start (the exported submission environment).
    environment: FrozenSet[str]


_HEREDOC = re.compile(r"<<-?\s*(['\"]?)\\?([A-Za-z_]\w*)\1")
_COMMENT = re.compile(r"^\s*#(?!SBATCH)")
_SINGLE_QUOTED = re.compile(r"'[^']*'")
_USE = re.compile(r"\$(?:\{([A-Za-z_]\w*)([^}]*)\}|([A-Za-z_]\w*))")
_ASSIGN = re.compile(r"(?:^|[\s;&|(])(?:export\s+|local\s+|readonly\s+|declare\s+(?:-\w+\s+)*)?"
                     r"([A-Za-z_]\w*)\+?=")
_READ_FOR = re.compile(r"(?:^|[\s;&|(])(?:read(?:\s+-\w+)*|for|select)\s+((?:[A-Za-z_]\w*\s*)+)")
_SOURCES = re.compile(r"(?:^|[\s;&|(])(?:source|\.|eval|module\s+load|ml|spack\s+load|"
                      r"conda\s+activate|source\s+activate)\s")


def read_script(text: str, node_range: Optional[Tuple[int, int]] = None,
                environment: Iterable[str] = ()) -> Script:
    """The script's logical lines (comments dropped, ``\\`` continuations joined)."""
    physical = text.splitlines()
    shebang = physical[0] if physical and physical[0].startswith("#!") else ""
    lines: List[Line] = []
    pending: List[str] = []
    start = 0
    heredoc: Optional[Tuple[str, bool]] = None
    for number, raw in enumerate(physical, 1):
        if heredoc is not None:
            if raw.strip() == heredoc[0]:
                heredoc = None
            else:
                lines.append(Line(number, raw, True, heredoc[1]))
            continue
        if not pending and (_COMMENT.match(raw) or not raw.strip()):
            continue
        if not pending:
            start = number
        if raw.endswith("\\") and not raw.endswith("\\\\"):
            pending.append(raw[:-1])
            continue
        logical = " ".join(pending + [raw])
        pending = []
        lines.append(Line(start, logical))
        opened = _HEREDOC.search(logical)
        if opened:
            heredoc = (opened.group(2), not opened.group(1))
    if pending:
        lines.append(Line(start, " ".join(pending)))
    return Script(tuple(lines), shebang, node_range, frozenset(environment))


def _shell_text(line: Line) -> str:
    """The part of a line the shell itself expands (single-quoted strings removed)."""
    if line.heredoc:
        return line.text if line.expands else ""
    return _SINGLE_QUOTED.sub("''", line.text)


# --- rules -------------------------------------------------------------------------------

#: Variables that break or slow a job when set outside debugging (seed 000's table).
DEBUG_SETTINGS: Dict[str, Tuple[str, str, str]] = {
    "NCCL_DEBUG": (r"(?i:info|trace)", "floods every rank's log for the whole run and hides "
                   "the lines that matter", "remove it (set it only while debugging NCCL "
                   "start-up, or use NCCL_DEBUG=WARN)"),
    "NCCL_IB_DISABLE": ("1", "makes NCCL use RDMA (IB/RoCE) NICs as plain Ethernet: about a "
                        "third of the bandwidth (30 vs 100 Gbps measured)",
                        "remove it; where the platform has no IB it sets NCCL_IB_DISABLE "
                        "itself"),
    "NCCL_P2P_DISABLE": ("1", "sends GPU-to-GPU traffic through the CPU and PCIe instead of "
                         "peer-to-peer", "remove it, unless the GPUs have no P2P (e.g. "
                         "RTX 4090)"),
    "CUDA_LAUNCH_BLOCKING": ("1", "serialises every kernel launch with the CPU: a debugging "
                             "aid that slows training severalfold", "remove it outside "
                             "debugging"),
    "PYTORCH_NO_CUDA_MEMORY_CACHING": ("1", "disables PyTorch's GPU memory pool: every "
                                       "allocation becomes a driver call", "remove it "
                                       "outside debugging out-of-memory errors"),
}
_SETTING = re.compile(r"(?:^|[\s;&|(\"'=,])(" + "|".join(DEBUG_SETTINGS) + r")=(\"?)([\w.-]+)")


def debug_settings(script: Script) -> Iterable[Finding]:
    for line in script.lines:
        for match in _SETTING.finditer(line.text):
            name, value = match.group(1), match.group(3)
            bad, why, fix = DEBUG_SETTINGS[name]
            if re.fullmatch(bad, value):
                yield Finding(line.number, "debug-setting", f"{name}={value}", why, fix)


_RDZV_ID = re.compile(r"--rdzv[_-]id(?:=|\s+)([^\s;|&]+)")
_RDZV_ASSIGN = re.compile(r"(?:^|[\s;&|(])(?:export\s+)?(RDZV_ID)=([^\s;|&]*)")
_FIXED_WHY = ("two runs of this script at the same time (or one still ending) join one "
              "rendezvous: their gradients mix or both hang")
_FIXED_FIX = "use the job's own id: --rdzv_id=$SLURM_JOB_ID"


def fixed_rendezvous_id(script: Script) -> Iterable[Finding]:
    for line in script.lines:
        text = _shell_text(line)
        for match in _RDZV_ID.finditer(text):
            if "$" not in match.group(1):
                yield Finding(line.number, "fixed-rendezvous-id", match.group(0), _FIXED_WHY,
                              _FIXED_FIX)
        for match in _RDZV_ASSIGN.finditer(text):
            if "$" not in match.group(2):
                yield Finding(line.number, "fixed-rendezvous-id", match.group(0).strip(),
                              _FIXED_WHY, "RDZV_ID=$SLURM_JOB_ID")


NODE_LEVEL = ("SLURM_NODEID", "PET_NODE_RANK", "NODE_RANK", "GROUP_RANK", "VC_TASK_INDEX")
PROCESS_LEVEL = ("SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "RANK_ID")
_INIT_RANK = re.compile(r"\b(rank|world_size)\s*=\s*[^,)]*?\b(" + "|".join(
    NODE_LEVEL + ("SLURM_NNODES", "PET_NNODES", "NNODES")) + r")\b")
_NODE_RANK_OPTION = re.compile(r"--node[_-]rank(?:=|\s+)[\"']?\$\{?(\w+)")


def rank_levels(script: Script) -> Iterable[Finding]:
    for line in script.lines:
        if "init_process_group" in line.text:
            for match in _INIT_RANK.finditer(line.text):
                yield Finding(
                    line.number, "node-rank-as-process-rank", match.group(0),
                    f"init_process_group's {match.group(1)} counts processes, ${match.group(2)}"
                    " counts nodes: with several processes per node two processes claim one "
                    "rank and the group never forms",
                    "leave rank and world_size out (torchrun sets RANK and WORLD_SIZE per "
                    "process), or use $SLURM_PROCID and $SLURM_NTASKS inside srun")
        for match in _NODE_RANK_OPTION.finditer(line.text):
            name = match.group(1)
            shell = _shell_text(line)
            if name in PROCESS_LEVEL:
                yield Finding(line.number, "process-rank-as-node-rank", match.group(0),
                              f"--node_rank is the node's index; ${name} counts processes "
                              "and passes the node count with several tasks per node",
                              "--node_rank=$SLURM_NODEID, or a c10d rendezvous without "
                              "--node_rank")
            elif re.match(r"\s*srun\b", line.text) and match.group(0) in shell and \
                    name.startswith("SLURM_"):
                yield Finding(line.number, "rank-expanded-once", match.group(0),
                              f"the batch shell expands ${name} once, on node 0, before srun "
                              "starts: every node gets node 0's value",
                              f"srun bash -c 'torchrun --node_rank=${name} …' (expanded in "
                              "each task), or a c10d rendezvous without --node_rank")


def unset_variables(script: Script) -> Iterable[Finding]:
    assigned = set(script.environment) | SHELL_VARIABLES
    sources = False
    for line in script.lines:
        text = _shell_text(line) if not line.heredoc else ""
        assigned.update(m.group(1) for m in _ASSIGN.finditer(text))
        for match in _READ_FOR.finditer(text):
            assigned.update(match.group(1).split())
        sources = sources or bool(_SOURCES.search(text))
    reported = set()
    for line in script.lines:
        for match in _USE.finditer(_shell_text(line)):
            name = match.group(1) or match.group(3)
            operator = (match.group(2) or "")[:2]
            if name in assigned or name in reported or SLURM_SET.match(name) or \
                    operator.lstrip(":")[:1] in ("-", "=", "+", "?"):
                continue
            reported.add(name)
            equivalent = PLATFORM_VARIABLES.get(name)
            whose = f" (a platform's: {equivalent[0]})" if equivalent else ""
            why = f"nothing sets ${name}{whose}: not Slurm, not the script, not the " \
                  "submission environment; it expands to an empty string"
            if equivalent:
                fix = f"use {equivalent[1]}"
            else:
                if sources:
                    why += " (unless a file the script sources or evaluates sets it)"
                fix = f"set it in the script (export {name}=…) or before sbatch " \
                      "(--export carries it)"
            yield Finding(line.number, "unset-variable", f"${name}", why, fix)


_CONDA = re.compile(r"(?:^|[\s;&|(])(?:conda|source)\s+activate\b")
_CONDA_HOOK = re.compile(r"conda\.sh|conda\s+shell\.|\.bashrc|\.bash_profile|\.profile")


def conda_without_login_shell(script: Script) -> Iterable[Finding]:
    if re.search(r"\s(-l|--login)\b", script.shebang):
        return
    hooked = False
    for line in script.lines:
        if _CONDA_HOOK.search(line.text):
            hooked = True
        elif _CONDA.search(line.text) and not hooked:
            yield Finding(line.number, "conda-activate", "conda activate",
                          "the batch script runs in a non-login shell: conda's shell "
                          "function is not defined there, so conda activate fails or "
                          "activates nothing",
                          "start the script with #!/bin/bash -l, or eval \"$(conda shell.bash "
                          "hook)\" first, or use conda run -n ENV or the env's python")
            return


_ANGLE = re.compile(r"(?<![<\w])<([A-Za-z][\w-]*)>(?!>)")
_YOUR = re.compile(r"\b(?:your|YOUR|Your)_?[A-Za-z0-9_]*[A-Za-z0-9]")


def placeholders(script: Script) -> Iterable[Finding]:
    for line in script.lines:
        for match in list(_ANGLE.finditer(line.text)) + list(_YOUR.finditer(line.text)):
            yield Finding(line.number, "placeholder", match.group(0),
                          "a template's placeholder was never filled in: the value is taken "
                          "literally", "replace it with the real value")


_NNODES = re.compile(r"--nnodes(?:=|\s+)([^\s;|&]+)")


def fixed_size_in_elastic_job(script: Script) -> Iterable[Finding]:
    if script.node_range is None:
        return
    low, high = script.node_range
    for line in script.lines:
        for match in _NNODES.finditer(_shell_text(line)):
            value = match.group(1).strip("\"'")
            if "$" not in value and ":" not in value:
                yield Finding(line.number, "fixed-size-rendezvous", match.group(0),
                              f"--nodes={low}-{high} lets Slurm start the job on {low} to "
                              f"{high} nodes, but the rendezvous waits for exactly {value}",
                              "--nnodes=$SLURM_NNODES (the count Slurm chose), or an "
                              f"elastic --nnodes={low}:{high} with a c10d rendezvous")


class Rule(NamedTuple):
    """One pitfall rule."""

    name: str
    check: Callable[[Script], Iterable[Finding]]


RULES: Tuple[Rule, ...] = (
    Rule("debug-setting", debug_settings),
    Rule("fixed-rendezvous-id", fixed_rendezvous_id),
    Rule("rank-levels", rank_levels),
    Rule("unset-variable", unset_variables),
    Rule("conda-activate", conda_without_login_shell),
    Rule("placeholder", placeholders),
    Rule("fixed-size-rendezvous", fixed_size_in_elastic_job),
)


def find_pitfalls(text: str, node_range: Optional[Tuple[int, int]] = None,
                  environment: Sequence[str] = ()) -> List[Finding]:
    """Every rule's findings, by line."""
    script = read_script(text, node_range, environment)
    found = [f for rule in RULES for f in rule.check(script)]
    return sorted(found, key=lambda f: f.line)
