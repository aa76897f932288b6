"""Normalisation: what legitimately differs between the two sides becomes a placeholder.

* job ids → the placeholders a case names (``<job>``; arrays ``<array>``/``<A>`` for the
  array's id and ``<job>``/``<job_i>`` for an element's own id). Only whole tokens are ids
  (never the ``5`` of ``n5``, ``n[1-5]``, ``127.0.0.5``, ``0:05`` or ``5M``), and the result
  does not depend on how many digits an id has: the padding beside an id in a column is
  re-measured for the placeholder (:func:`repad`), and a zero-padded id (``%4j``) becomes
  ``<job:04>``; in a file name made by a ``%Nj`` pattern (``text(..., pad=N)``), an id
  as that pattern prints it is ``<job:0N>`` whether or not it needed zeros (``0042`` and
  ``1042`` alike, :func:`id_pad`). Each side also replaces the *other* side's ids of the
  case (its own first), so a count that happens to equal a small id on one side
  (``NumCPUs=2`` beside job 2 of a freshly purged Slurm) becomes the same placeholder on both sides;
* node names → ``<nodeK>`` by their position in the job's node list (real ``n1``… vs our
  ``127.0.0.2``…), compressed host lists → ``<node[0-1]>``; nodes outside the job → ``<hostN>``
  by the side's node table;
* date-times and durations → the same text with every digit replaced by ``#`` (format and
  width are kept, values dropped); pids, ports → ``<pid>``/``<port>``;
* the working directory → ``<work>``, the cluster name → ``<cluster>``, ``AllocNode:Sid``;
* real Slurm's ``slurmstepd-<node>:`` prefix → ``slurmstepd:`` (one slurmd per node here);
* srun's "step creation temporarily disabled" / "Step created" lines are dropped (they
  depend on how fast the previous step was cleaned up).

Nothing else is touched: what remains different is a finding.
"""

from __future__ import annotations

import re
from typing import Dict, List, Mapping, Optional, Sequence

from tests.conformance.sides import Side

ISO_TIME = re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\b")
DATE_LINE = re.compile(r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep"
                       r"|Oct|Nov|Dec) [ \d]\d \d\d:\d\d:\d\d \d{4}\b")
#: Elapsed times as squeue and sacct print them: [d-][h]h:mm:ss or m:ss
#: srun's messages while it waits for the previous step's resources: they depend on how fast
#: the last step was cleaned up, not on what is compared
STEP_WAIT = re.compile(r"(?m)^srun: (Job \S+ step creation temporarily disabled, retrying "
                       r"\(Requested nodes are busy\)|Step created for job \S+)\n")
ELAPSED = re.compile(r"(?<![\w:.])(?:\d+-)?(?:\d+:)?\d+:\d\d(?![\w:.])")
#: A job id as a whole token, with the spaces around it (to re-pad its column) and its
#: suffix (``.batch``, ``_3``, ``_[1-3]``, ``.ba+``: the cell whose padding follows). Not an id:
#: digits beside a letter, a dot or a digit (``n5``, ``127.0.0.5``, ``5M``), a time or exit
#: code (``0:05``, ``5:0``) or a range list in brackets (``n[1-5]``, consumed whole).
ID_TOKEN = re.compile(
    r"\[[\d,\-]+\]"
    r"|(?P<lead> *)(?<![\w.#])(?<!\d:)(?P<zeros>0*)(?P<id>[1-9]\d*)(?![\dA-Za-z]|:\d)"
    r"(?P<suffix>(?:[._](?:\[[\d,\-]+\]|[\w+]+))*)(?P<trail> *)")


def hashed(match: "re.Match[str]") -> str:
    return re.sub(r"\d", "#", match.group(0))


def job_ids_in(text: str) -> List[int]:
    """Every number of ``text`` that stands where a job id can (see :data:`ID_TOKEN`), in
    order."""
    return [int(m.group("id")) for m in ID_TOKEN.finditer(text) if m.group("id")]


def repad(lead: str, width: int, placeholder: str, trail: str) -> str:
    """The cell of an id ``width`` characters wide with ``placeholder`` in its place, and
    the padding re-measured: Slurm separates columns by one space, so a longer run beside
    the id is the column's alignment padding; the longer of the two runs takes up the
    difference between the id's width and the placeholder's (never below one space). The
    cells of one column then read alike on both sides, whatever the widths of their ids."""
    padding, before = (lead, True) if len(lead) >= len(trail) else (trail, False)
    if len(padding) < 2:
        return lead + placeholder + trail
    padding = " " * max(1, len(padding) + width - len(placeholder))
    return padding + placeholder + trail if before else lead + placeholder + padding


def id_pad(pattern: str) -> int:
    """The width a ``%Nj`` of an output file pattern pads job ids to (0 without one).

    Slurm prints an id narrower than N with leading zeros and a wider one as it is, so
    whether a padded name shows zeros depends on the id counter; the width the pattern
    asks for is what both sides share."""
    widths = [int(width) for width in re.findall(r"%(\d+)j", pattern)]
    return max(widths, default=0)


def padded(placeholder: str, number: str, width: int, pad: int) -> str:
    """The placeholder of an id printed ``width`` characters wide: ``<job:0N>`` when it
    is printed as a ``%Nj`` pattern (``pad`` = N) prints it, zeros up to N or the id as it
    is when wider, so ``0042`` and ``1042`` read alike; else ``<job:0W>`` for any other
    zero-padded width W, ``<job>`` for a plain id. An id a pattern left unpadded
    (``42`` for ``%4j``) stays ``<job>``: a difference, not normalised away."""
    if pad and width == max(pad, len(number)):
        return f"{placeholder[:-1]}:0{pad}>"
    if width > len(number):
        return f"{placeholder[:-1]}:0{width}>"
    return placeholder


def expand_hostlist(text: str) -> List[str]:
    """``n[1-3,5]`` → n1 n2 n3 n5; ``127.0.0.[2-3]`` → …; one bracket group only (enough for
    the lists the two sides print)."""
    out: List[str] = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\][^,]*)?", text):
        found = re.fullmatch(r"(.*?)\[([^\]]*)\](.*)", part)
        if not found:
            out.append(part)
            continue
        prefix, ranges, suffix = found.groups()
        for item in ranges.split(","):
            lo, _, hi = item.partition("-")
            width = len(lo)
            for n in range(int(lo), int(hi or lo) + 1):
                out.append(f"{prefix}{str(n).zfill(width)}{suffix}")
    return out


def compress(indices: Sequence[int]) -> str:
    """0,1,2,5 → ``0-2,5``."""
    parts: List[str] = []
    i = 0
    while i < len(indices):
        j = i
        while j + 1 < len(indices) and indices[j + 1] == indices[j] + 1:
            j += 1
        parts.append(str(indices[i]) if i == j else f"{indices[i]}-{indices[j]}")
        i = j + 1
    return ",".join(parts)


class Normaliser:
    """The normalisation of one side's output in one case."""

    def __init__(self, side: Side, jobs: Optional[Mapping[int, str]] = None,
                 nodes: Sequence[str] = (), hosts: bool = True,
                 array_id: Optional[int] = None,
                 other_jobs: Optional[Mapping[int, str]] = None) -> None:
        """``jobs``: this side's ids → placeholders; ``other_jobs``: the other side's ids in
        the same case (replaced too, after this side's own)."""
        self.side = side
        self.array_id = array_id
        self.jobs: Dict[int, str] = dict(jobs or {})
        self.all_jobs: Dict[int, str] = {**(other_jobs or {}), **self.jobs}
        self.nodes = list(nodes)
        self.hosts = hosts
        if side.kind == "real":
            self.node_re = re.compile(r"(?<![\w.\-/])n(?:\d+|\[[\d,\-]+\])(?![\w\-\[])")
        else:
            self.node_re = re.compile(r"(?<![\w.\-/])127\.0\.0\.(?:\d+|\[[\d,\-]+\])"
                                      r"(?![\w\-\[])")

    # -- pieces --------------------------------------------------------------------------
    def node(self, name: str) -> str:
        if name in self.nodes:
            return f"<node{self.nodes.index(name)}>"
        if name in self.side.node_names:
            return f"<host{list(self.side.node_names).index(name)}>"
        return name

    def hostlist(self, match: "re.Match[str]") -> str:
        token = match.group(0)
        names = expand_hostlist(token)
        if "[" not in token:
            return self.node(token)
        if all(n in self.nodes for n in names):
            return f"<node[{compress([self.nodes.index(n) for n in names])}]>"
        if all(n in self.side.node_names for n in names):
            table = list(self.side.node_names)
            return f"<host[{compress([table.index(n) for n in names])}]>"
        return token

    def job_id(self, match: "re.Match[str]", pad: int = 0) -> str:
        """One :data:`ID_TOKEN` match: the placeholder in its re-padded cell, or unchanged;
        ``pad``: see :meth:`text`."""
        number = match.group("id")
        placeholder = self.all_jobs.get(int(number)) if number else None
        if placeholder is None:
            return match.group(0)
        zeros = match.group("zeros")
        width = len(zeros) + len(number)
        placeholder = padded(placeholder, number, width, pad)
        cell = repad(match.group("lead"), width + len(match.group("suffix")),
                     placeholder + match.group("suffix"), match.group("trail"))
        return cell

    def job_ids(self, text: str, pad: int = 0) -> str:
        return ID_TOKEN.sub(lambda match: self.job_id(match, pad), text)

    # -- whole texts ---------------------------------------------------------------------
    def text(self, text: str, pad: int = 0) -> str:
        """The whole normalisation of ``text``. ``pad``: the width a ``%Nj`` pattern pads ids
        to, for a file name that pattern made (:func:`id_pad`); ids printed as it prints
        them become ``<job:0N>`` whatever their own width."""
        text = STEP_WAIT.sub("", text)
        text = ISO_TIME.sub(hashed, text)
        text = DATE_LINE.sub(hashed, text)
        text = re.sub(r"AllocNode:Sid=\S+", "AllocNode:Sid=<host>:<pid>", text)
        text = text.replace(str(self.side.work), "<work>")
        text = text.replace(self.side.cluster, "<cluster>")
        text = self.job_ids(text, pad)
        if self.side.kind == "real":
            # every emulated node is its own slurmd (MULTIPLE_SLURMD), so slurmstepd names
            # its node in its log prefix; one slurmd per host prints plain "slurmstepd:"
            text = re.sub(r"\bslurmstepd-[\w.-]+:", "slurmstepd:", text)
        if self.hosts:
            text = self.node_re.sub(self.hostlist, text)
        return text

    def elapsed(self, text: str) -> str:
        """Durations (squeue TIME, RunTime=, Elapsed) → digits hashed."""
        return ELAPSED.sub(hashed, text)

    def env(self, env: Mapping[str, str], case: str) -> Dict[str, str]:
        """Normalise a ``SLURM_*`` environment (names kept, values normalised)."""
        from tests.conformance.differences import intended

        out = {}
        for name, value in env.items():
            if intended(f"value:{name}", case):
                value = "<intended>"
            elif name in ("SLURM_TASK_PID",):
                value = "<pid>" if value.isdigit() else value
            elif name in ("SLURM_SRUN_COMM_PORT", "SLURM_STEP_LAUNCHER_PORT"):
                value = "<port>" if value.isdigit() else value
            elif name == "SLURM_ARRAY_JOB_ID" and value == str(self.array_id):
                value = "<array>"
            elif name in ("SLURM_JOB_ID", "SLURM_JOBID", "SLURM_ARRAY_JOB_ID"):
                value = self.jobs.get(int(value), value) if value.isdigit() else value
            else:
                value = self.text(value)
            out[name] = value
        return out


def parse_env(text: str) -> Dict[str, str]:
    """``NAME=value`` lines → dict (lines without ``=`` are ignored)."""
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def sort_lines(text: str) -> str:
    return "\n".join(sorted(text.splitlines())) + ("\n" if text else "")
