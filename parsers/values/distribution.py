"""Task distribution (``-m/--distribution=block:cyclic,pack``) and ``SLURM_DISTRIBUTION``.

Follows ``verify_dist_type`` and ``set_distribution`` (``src/common/proc_args.c``): ``*``
means the default of its level (block for nodes, cyclic for sockets, the socket method for
cores); ``hostfile`` is ``arbitrary``; ``pack``/``nopack`` may stand alone (``nodes`` is then
``*``: Slurm's default applies). ``plane`` without ``=size`` takes the size from
``SLURM_DIST_PLANESIZE`` in Slurm: :attr:`Distribution.plane_size` is None then and the caller
must supply it (or fail with "Invalid plane size or size not specified").

Deviation: Slurm accepts anything that starts with ``plane`` (``planets=4``); here the word
must be ``plane``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional

from parsers.input_errors import ValueSyntaxError
from parsers.values.grammar import parse_value

MAX_PLANE_SIZE = 2**31 - 1
#: What ``*`` stands for at each level (cores inherit the socket method).
DEFAULT_LEVELS = ("block", "cyclic")


@dataclass(frozen=True)
class Distribution:
    """``nodes`` is ``block``, ``cyclic``, ``plane``, ``arbitrary`` or ``*`` (not given)."""

    nodes: str
    sockets: Optional[str] = None
    cores: Optional[str] = None
    plane_size: Optional[int] = None
    pack: Optional[bool] = None

    def format(self) -> str:
        """What Slurm exports as ``SLURM_DISTRIBUTION``: ``block:cyclic``, ``plane``, ``pack``."""
        levels = [lvl for lvl in (self.nodes, self.sockets, self.cores) if lvl and lvl != "*"]
        text = ":".join(levels)
        if self.pack is not None:
            flag = "pack" if self.pack else "nopack"
            text = f"{text},{flag}" if text else flag
        return text

    def __str__(self) -> str:
        return self.format()


class DistributionTransformer:
    """Rules of ``distribution.lark``."""

    def plane(self, children: List[Any]) -> Distribution:
        _word, size = children
        if size is not None and not 0 < int(size) <= MAX_PLANE_SIZE:
            raise ValueSyntaxError("Invalid plane size or size not specified")
        return Distribution("plane", plane_size=None if size is None else int(size))

    def levels(self, children: List[Any]) -> List[str]:
        words = [str(c).lower() for c in children]
        if len(words) > 3:
            raise ValueSyntaxError("too many distribution levels")
        resolved: List[str] = []
        for depth, word in enumerate(words):
            if word == "*":
                word = DEFAULT_LEVELS[depth] if depth < 2 else resolved[1]
            resolved.append("arbitrary" if word == "hostfile" else word)
        first, rest = resolved[0], resolved[1:]
        if first == "fcyclic" or (first == "arbitrary" and rest):
            raise ValueSyntaxError("invalid distribution")
        if any(word == "arbitrary" for word in rest):
            raise ValueSyntaxError("invalid distribution")
        return resolved

    def layout(self, children: List[Any]) -> Distribution:
        levels, flag = children
        levels += [None] * (3 - len(levels))
        pack = None if flag is None else str(flag).lower() == "pack"
        return Distribution(levels[0], levels[1], levels[2], None, pack)

    def flag_only(self, children: List[Any]) -> Distribution:
        return Distribution("*", pack=str(children[0]).lower() == "pack")


def parse_distribution(text: str) -> Distribution:
    """Parse ``-m``: ``block``, ``cyclic:cyclic``, ``plane=4``, ``arbitrary``, ``*:block,pack``."""
    dist: Distribution = parse_value("distribution", text, DistributionTransformer)
    return dist
