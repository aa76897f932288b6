"""Normalisation: what legitimately differs between the two sides becomes a placeholder.

* job ids → the placeholders a case names (``<job>``; arrays ``<array>``/``<A>`` for the
  array's id and ``<job>``/``<job_i>`` for an element's own id), zero padding kept; both
  sides' ids have the same number of digits (the local backend's counter is seeded from
  the real one), so column widths stay comparable;
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


def hashed(match: "re.Match[str]") -> str:
    return re.sub(r"\d", "#", match.group(0))


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
                 array_id: Optional[int] = None) -> None:
        self.side = side
        self.array_id = array_id
        self.jobs: Dict[int, str] = dict(jobs or {})
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

    def job_ids(self, text: str) -> str:
        for job_id in sorted(self.jobs, key=lambda j: -len(str(j))):
            # zero-padded ids (%5j) keep their zeros: both sides' ids have as many digits
            text = re.sub(rf"(?<![\d.:#])(0*){job_id}(?![\dKMGT])",
                          lambda m, p=self.jobs[job_id]: m.group(1) + p, text)
        return text

    # -- whole texts ---------------------------------------------------------------------
    def text(self, text: str) -> str:
        text = STEP_WAIT.sub("", text)
        text = ISO_TIME.sub(hashed, text)
        text = DATE_LINE.sub(hashed, text)
        text = re.sub(r"AllocNode:Sid=\S+", "AllocNode:Sid=<host>:<pid>", text)
        text = text.replace(str(self.side.work), "<work>")
        text = text.replace(self.side.cluster, "<cluster>")
        text = self.job_ids(text)
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
