"""Hostlist expressions (``node[001-004],login1``), exactly as Slurm's ``src/common/hostlist.c``.

:func:`expand_hostlist` is ``hostlist_create`` followed by printing every host
(``scontrol show hostnames``); :func:`compress_hostlist` is ``hostlist_ranged_string``
(``scontrol show hostlist``: no sorting, no de-duplication); :func:`compress_hostlist_sorted`
adds ``hostlist_sort`` (``scontrol show hostlistsorted``); :func:`compress_hostlist_unique`
is what slurmctld puts in ``SLURM_JOB_NODELIST`` (a node set, sorted).

The bracket body grammar is ``hostlist.lark``; splitting at top-level separators and the
handling of prefix brackets port Slurm's procedure, quirks included: ``a[1-2]-b[3-4]`` is a
cartesian product with ``a`` varying slowest, but with three brackets Slurm recurses from the
last prefix bracket (``a[1-2]b[3-4]c[5-6]`` varies ``b`` slowest); ``a[1, 2]`` is ``a1,a02``
(the pad width counts the blank); errors two brackets down are ignored.

Out of scope: multi-dimensional clusters (Cray/BlueGene ``[000x333]`` boxes and base-36
coordinates; on a one-dimensional cluster, which is every ordinary one, an ``x`` in a range is
an error and so it is here), and ``{...}`` expressions that ``scontrol`` sends to the controller
for expansion. Deliberate limits: an expression expanding to more than
:data:`MAX_EXPANDED_HOSTS` hosts is refused (Slurm would try to print them all); names are
compared per code point, where C compares signed bytes (differs only for non-ASCII names);
sorting is stable (glibc's ``qsort`` need not be, which only matters for equal-comparing
ranges).
"""

from __future__ import annotations

from typing import Any, List, Sequence, Tuple

from parsers.input_errors import ValueSyntaxError
from parsers.values.grammar import parse_value
from parsers.values.hostranges import (
    C_SPACE,
    ULONG_MAX,
    ranged_string,
    ranges_of,
    sort_ranges,
    split_host,
)

SEPARATORS = "\t, \n"
#: Hosts one range may hold (``MAX_RANGE`` = ``MAX_SLURM_NODES``).
MAX_RANGE = 65536
#: Hosts the prefix brackets of one token may produce (``MAX_PREFIX_CNT``).
MAX_PREFIX_CNT = 65536
#: Ranges one bracket may list (``MAX_RANGES``).
MAX_RANGES = 256 * 1024
#: Our own bound on the size of an expansion.
MAX_EXPANDED_HOSTS = 1 << 20

Span = Tuple[int, int, int]  # lo, hi, zero-padding width


def _strtoul(text: str) -> int:
    """C ``strtoul`` of a text the grammar accepted: blanks, optional sign, digits."""
    body = text.lstrip(C_SPACE)
    negative = body.startswith("-")
    value = min(int(body.lstrip("+-")), ULONG_MAX)
    return (-value) % 2**64 if negative else value


class HostlistTransformer:
    """Rules of ``hostlist.lark``: ``start`` returns the ``(lo, hi, width)`` spans."""

    def range(self, children: List[Any]) -> Span:
        lo_text, hi_text = children
        lo = _strtoul(lo_text)
        hi = _strtoul(hi_text) if hi_text is not None else lo
        if lo > hi or hi - lo + 1 > MAX_RANGE:
            raise ValueSyntaxError(f"Invalid range: {lo_text}-{hi_text}")
        return lo, hi, len(lo_text)

    def start(self, children: List[Span]) -> List[Span]:
        if len(children) > MAX_RANGES:
            raise ValueSyntaxError("too many ranges")
        return children


def _spans(body: str) -> List[Span]:
    spans: List[Span] = parse_value("hostlist", body, HostlistTransformer)
    return spans


def _tokens(text: str) -> List[str]:
    """Split at top-level separators; brackets group (``_next_tok``)."""
    tokens: List[str] = []
    end, pos = len(text), 0
    while True:
        while pos < end and text[pos] in SEPARATORS:
            pos += 1
        if pos >= end:
            return tokens
        start = parse = pos
        while True:
            while pos < end and text[pos] not in SEPARATORS:
                pos += 1
            extended = False
            while True:
                open_at = text.find("[", parse)
                if open_at < 0 or open_at > pos:
                    break
                close_at = text.find("]", parse)
                if close_at < 0 or close_at < open_at:
                    break
                if close_at < pos:
                    parse = close_at + 1
                    continue
                pos, extended = close_at, True
                break
            if not extended:
                break
        tokens.append(text[start:pos])


class _Expansion:
    """Hosts produced so far, with the size bound."""

    def __init__(self) -> None:
        self.hosts: List[str] = []

    def _reserve(self, count: int) -> None:
        if len(self.hosts) + count > MAX_EXPANDED_HOSTS:
            raise ValueSyntaxError("hostlist expands to too many hosts")

    def push_host(self, name: str) -> None:
        """A token without brackets: the host as ``hostname_create`` reprints it."""
        self._reserve(1)
        prefix, number, width = split_host(name)
        self.hosts.append(name if number is None else f"{prefix}{number:0{width}d}")

    def push(self, prefix: str, spans: Sequence[Span], suffix: str) -> None:
        for lo, hi, width in spans:
            self._reserve(hi - lo + 1)
            self.hosts.extend(f"{prefix}{n:0{width}d}{suffix}" for n in range(lo, hi + 1))

    def push_ranges(self, prefix: str, suffix: str, spans: Sequence[Span]) -> int:
        """``_push_range_list``: expand one bracket of the prefix; 0 on success, -1 on error."""
        open_at = prefix.rfind("[")
        close_at = prefix.rfind("]", open_at) if open_at >= 0 else -1
        if close_at < 0:
            self.push(prefix, spans, suffix)
            return 0
        head, body, tail = prefix[:open_at], prefix[open_at + 1 : close_at], prefix[close_at + 1 :]
        try:
            prefix_spans = _spans(body)
        except ValueSyntaxError:
            return -1
        rc, produced = 0, 0
        for lo, hi, width in prefix_spans:
            produced += hi - lo + 1
            if produced > MAX_PREFIX_CNT:
                return -1
            for n in range(lo, hi + 1):
                new_prefix = f"{head}{n:0{width}d}{tail}"
                if "[" in head:  # Slurm ignores failures one level down
                    rc = max(rc, self.push_ranges(new_prefix, suffix, spans))
                else:
                    self.push(new_prefix, spans, suffix)
        return rc


def expand_hostlist(text: str) -> List[str]:
    """Every host of a hostlist expression, in order, duplicates kept; ``""`` gives ``[]``."""
    expansion = _Expansion()
    for token in _tokens(text):
        open_at = token.rfind("[")
        if open_at < 0:
            expansion.push_host(token)
            continue
        close_at = token.find("]", open_at)
        if close_at < 0:
            raise ValueSyntaxError(f"Invalid hostlist: {text}")
        after = token[close_at + 1 :]
        suffix = after if after[:1] not in ("", ",") else ""
        spans = _spans(token[open_at + 1 : close_at])
        if expansion.push_ranges(token[:open_at], suffix, spans):
            raise ValueSyntaxError(f"Invalid hostlist: {text}")
    return expansion.hosts


def compress_hostlist(hosts: Sequence[str]) -> str:
    """``scontrol show hostlist``, order and duplicates kept.

    ``tux2,tux1,tux2`` → ``tux[2,1-2]``.
    """
    return ranged_string(ranges_of(hosts))


def compress_hostlist_sorted(hosts: Sequence[str]) -> str:
    """``scontrol show hostlistsorted``: natural sort, duplicates kept (``tux[1-2,2]``)."""
    ranges = ranges_of(hosts)
    sort_ranges(ranges)
    return ranged_string(ranges)


def compress_hostlist_unique(hosts: Sequence[str]) -> str:
    """``SLURM_JOB_NODELIST``: the distinct hosts, sorted (slurmctld's ``bitmap2node_name``)."""
    return compress_hostlist_sorted(list(dict.fromkeys(hosts)))
