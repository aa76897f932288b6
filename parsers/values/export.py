"""``--export`` values and the job environment they produce.

Follows sbatch (``src/sbatch/sbatch.c`` and ``env_merge_filter`` in ``src/common/env.c``) and
srun (``_build_user_env`` in ``src/srun/launch.c``):

* ``ALL`` (alone): the whole submission environment.
* ``NIL`` / ``NONE`` (alone): only ``SLURM*`` and SPANK option variables; ``NONE`` also makes
  the node load the user's login environment (``--get-user-env``).
* otherwise a list of ``VAR`` (copy the caller's value, if any), ``VAR=value`` (set; the value
  may contain ``=``; it keeps any quotes inside it) and ``ALL``; ``SLURM*`` variables are always
  added from the caller. The list form also loads the user's login environment.

Precedence differs between the two commands, and :func:`apply_export` reproduces both. sbatch
applies the items left to right, so in ``ALL,EDITOR=vi`` the explicit value wins over the
caller's ``EDITOR`` (and in ``EDITOR=vi,ALL`` the caller's wins); srun merges the caller's
environment after the items whenever ``ALL`` appears, so the caller's value wins — which is
what the man pages describe for both.

Quotes: an item wholly in matching quotes loses them (``'A=1,2'``). Deviation: an unbalanced
quote is an error here; Slurm logs "Improperly formed environment variable" and carries on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Tuple

from parsers.input_errors import ValueSyntaxError
from parsers.values.grammar import parse_value

#: Prefixes of caller variables that every mode propagates.
ALWAYS_EXPORTED_PREFIXES = ("SLURM", "_SLURM_SPANK_OPTION_")
EXPORT_MODES = ("ALL", "NONE", "NIL")


@dataclass(frozen=True)
class ExportSpec:
    """A parsed ``--export``: ``mode`` ALL/NONE/NIL (a list without ``ALL`` is NONE-like),
    names to copy, explicit assignments, the items in order, and whether the node should load
    the user's login environment."""

    mode: str
    names: Tuple[str, ...]
    assignments: Tuple[Tuple[str, str], ...]
    items: Tuple[str, ...] = ()
    get_user_env: bool = False


def _always_exported(caller_env: Mapping[str, str]) -> Dict[str, str]:
    return {k: v for k, v in caller_env.items() if k.startswith(ALWAYS_EXPORTED_PREFIXES)}


class ExportTransformer:
    """Rules of ``export.lark``: ``start`` returns the unquoted items."""

    def item(self, children: List[str]) -> str:
        text = "".join(children)
        if len(text) >= 2 and text[0] in "'\"" and text[-1] == text[0]:
            text = text[1:-1]
        return text

    def start(self, children: List[Optional[str]]) -> List[str]:
        return [c for c in children if c]


def parse_export(text: str) -> ExportSpec:
    """Parse ``--export``: ``ALL``, ``NONE``, ``NIL``, ``EDITOR,ARG1=test``, ``ALL,X=1``."""
    if text.upper() in EXPORT_MODES:
        mode = text.upper()
        return ExportSpec(mode, (), (), (mode,), mode == "NONE")
    items: List[str] = parse_value("export", text, ExportTransformer)
    names: List[str] = []
    assignments: List[Tuple[str, str]] = []
    for item in items:
        if "=" in item:
            name, value = item.split("=", 1)
            if not name:
                raise ValueSyntaxError(f"no variable name in {item!r}")
            assignments.append((name, value))
        elif item.upper() != "ALL":
            names.append(item)
    mode = "ALL" if any(i.upper() == "ALL" for i in items) else "NONE"
    return ExportSpec(mode, tuple(names), tuple(assignments), tuple(items), True)


def apply_export(
    spec: ExportSpec, caller_env: Mapping[str, str], launcher: str = "sbatch"
) -> Dict[str, str]:
    """The environment a job (``launcher="sbatch"``) or step (``"srun"``) receives."""
    if launcher != "srun" and spec.items == (spec.mode,) and not spec.names:
        return dict(caller_env) if spec.mode == "ALL" else _always_exported(caller_env)
    env: Dict[str, str] = {}
    everything = False
    for item in spec.items:
        if launcher == "srun" and item.upper() == "NONE":
            break
        if item.upper() == "ALL":
            if launcher == "srun":
                everything = True
            else:
                env.update(caller_env)
                continue
        if "=" in item:
            name, value = item.split("=", 1)
            env[name] = value
        elif item in caller_env:
            env[item] = caller_env[item]
    env.update(caller_env if everything else _always_exported(caller_env))
    return env
