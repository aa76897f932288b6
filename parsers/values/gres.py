"""Generic resources: ``--gres=gpu:a100:2,nic`` and ``--gpus[-per-*]=[type:]count``.

Follows ``arg_set_gres``/``gres_prepend_tres_type`` (the client) and ``slurm_get_next_tres``
(how slurmctld reads each item): in ``name[:type][:count]`` the last field is a count if it
is a number (with an optional suffix ``k``/``m``/``g``/``t``/``p`` = 1024^n, ``kib``… the same,
``kb``/``mb``… = 1000^n, any case), otherwise it is the type and the count is 1 — so
``gpu:x`` is type ``x``, count 1 (slurmctld then refuses the unknown type); ``name=count`` and
``name:type=count`` also work; a type may itself contain ``:`` (``gpu:a:b:2`` is type ``a:b``),
``gpu:a:b`` is an error; items with count 0 are dropped; a leading ``gres/`` is allowed.
``--gpus`` values are read the same way after Slurm prefixes each item with ``gpu:``, so
``--gpus=gpu:a100:2`` asks for type ``gpu:a100`` (refused later as an unknown type).
``none`` (``--gres=none``) is the empty tuple; ``help``/``list`` are the caller's business.

Deviations: an empty field (``gpu::2``) and a count beyond 2**64 are errors here (Slurm
makes an empty type, or wraps the count).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

from parsers.input_errors import ValueSyntaxError
from parsers.values.grammar import parse_value

#: Count suffixes (``suffix_mult``), lower case: ``k``/``kib`` 1024, ``kb`` 1000, up to ``p``.
COUNT_MULTIPLIERS = dict(
    [("", 1)]
    + [(unit + tail, 1024**power) for power, unit in enumerate("kmgtp", 1) for tail in ("", "ib")]
    + [(unit + "b", 1000**power) for power, unit in enumerate("kmgtp", 1)]
)
MAX_COUNT = 2**64 - 1
_COUNT = re.compile(r"([0-9]+)([a-z]*)\Z", re.IGNORECASE)


@dataclass(frozen=True)
class GresRequest:
    """One ``--gres`` item: ``count`` of resource ``name`` of ``type`` (None: any type)."""

    name: str
    type: Optional[str]
    count: int


@dataclass(frozen=True)
class GpuCount:
    """One ``--gpus*`` item: ``count`` GPUs of ``type`` (None: any type)."""

    type: Optional[str]
    count: int


def _count(text: str) -> Optional[int]:
    """The count a field denotes, or None if it is not a number (``_is_valid_number``)."""
    match = _COUNT.match(text)
    if match is None or match.group(2).lower() not in COUNT_MULTIPLIERS:
        return None
    digits = int(match.group(1))
    if digits >= MAX_COUNT:  # strtoull saturates: not a number
        return None
    count = digits * COUNT_MULTIPLIERS[match.group(2).lower()]
    if count > MAX_COUNT:
        raise ValueSyntaxError("count out of range")
    return count


class GresTransformer:
    """Rules of ``gres.lark``: items become :class:`GresRequest` (or None to skip)."""

    def item(self, children: List[Any]) -> Optional[GresRequest]:
        *words, equals = [None if c is None else str(c) for c in children]
        name, fields = words[0], words[1:]
        if name.startswith("gres/"):
            name = name[len("gres/") :]
        kind: Optional[str] = None
        if equals is not None:
            count = _count(equals)
            if count is None:
                raise ValueSyntaxError(f"invalid count {equals!r}")
        elif fields:
            count = _count(fields[-1])
            if count is None:
                count, kind = 1, fields[-1]
                if len(fields) > 1:
                    raise ValueSyntaxError(f"invalid GRES item {':'.join(words)!r}")
            fields = fields[:-1]
        else:
            count = 1
        if fields:
            kind = ":".join(fields)
        if not name or count == 0:
            return None
        return GresRequest(name, kind, count)

    def start(self, children: List[Optional[GresRequest]]) -> Tuple[GresRequest, ...]:
        return tuple(c for c in children if c is not None)


def parse_gres(text: str) -> Tuple[GresRequest, ...]:
    """Parse ``--gres``: ``gpu:2``, ``gpu:a100:2``, ``gpu``, ``gpu:kepler:2,nic:1``, ``none``."""
    if text.lower() == "none":
        return ()
    requests: Tuple[GresRequest, ...] = parse_value("gres", text, GresTransformer)
    return requests


def parse_gpu_counts(text: str) -> Tuple[GpuCount, ...]:
    """Parse ``--gpus`` and ``--gpus-per-{node,task,socket}``: ``2``, ``a100:2,v100:1``."""
    items = ",".join(f"gpu:{item}" for item in text.split(",") if item)
    requests: Tuple[GresRequest, ...] = parse_value("gres", items, GresTransformer)
    return tuple(GpuCount(r.type, r.count) for r in requests)
