"""Memory sizes (``--mem=16G``) in MiB, as Slurm's ``str_to_mbytes`` computes them.

``K`` rounds up to a whole MiB, ``G`` and ``T`` multiply by 1024 and 1024², no unit (or ``M``)
is MiB; a trailing ``B`` is allowed (``16GB``). ``0`` is valid (``--mem=0`` = all memory of a
node). Results that do not fit in a signed 64-bit integer are rejected, as strtoll does for the
number itself.
"""

from __future__ import annotations

from typing import List, Optional

from parsers.input_errors import ValueSyntaxError
from parsers.values.grammar import parse_value

#: MiB per unit letter (``K`` is handled apart: it rounds up).
MIB_PER_UNIT = {"m": 1, "g": 1024, "t": 1024 * 1024}
MAX_MB = 2**63 - 1


class MemoryTransformer:
    """Rules of ``memory.lark``: ``start`` returns the size in MiB."""

    def start(self, children: List[Optional[str]]) -> int:
        _space, sign, digits, unit = children
        number = int(str(digits))
        if sign == "-" and number != 0:
            raise ValueSyntaxError("negative memory size")
        letter = str(unit)[0].lower() if unit else "m"
        mem_mb = -(-number // 1024) if letter == "k" else number * MIB_PER_UNIT[letter]
        if number > MAX_MB or mem_mb > MAX_MB:
            raise ValueSyntaxError("memory size out of range")
        return mem_mb


def parse_memory_mb(text: str) -> int:
    """MiB in a Slurm memory size: ``4096``, ``4G``, ``512k`` (→ 1), ``1TB``."""
    mem_mb: int = parse_value("memory", text, MemoryTransformer)
    return mem_mb
