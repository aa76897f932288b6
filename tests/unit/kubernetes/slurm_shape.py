"""The cluster shape of real Slurm's recorded sinfo/scontrol output, and how to compare ours
with it.

``tests/data/real-slurm/sinfo-drained`` holds what Slurm 22.05 printed for 4 nodes of 4 CPUs
and 4000 MB (n1, n2 with ``gpu:4``; partitions ``debug`` = all, ``gpu`` = n1-n2), one 1-CPU job
on n1 and n4 drained. The same shape on Kubernetes: nodes ``a0``, ``a1`` (4 GPUs) and ``b0``,
``b1``, partitions ``debug`` (every node) and ``gpu`` (``node_gpus = 4``: the nodes offering
GPUs). Our node names are renamed to Slurm's before comparing; what cannot be equal is listed
in :data:`MACHINE_FIELDS` with the reason, and checked against what the cluster says instead.
"""

from __future__ import annotations

import re
from typing import Dict, List, Tuple

from parsers.values.hostlist import compress_hostlist_sorted, expand_hostlist
from tests.data import REAL_SLURM_SINFO
from tests.kube.harness import CONFIG as TEST_CONFIG

#: Our node → the real node in the same place of the shape.
RENAMES: Dict[str, str] = {"a0": "n1", "a1": "n2", "b0": "n3", "b1": "n4"}
GPU_NODES = ("a0", "a1")
CPU_NODES = ("b0", "b1")
NODE_CPUS, NODE_MEMORY, NODE_GPUS = "4", "4000Mi", 4
#: The configuration of the shape (partition ``gpu`` is a GPU partition by ``node_gpus``).
CONFIG = TEST_CONFIG + """\
[partitions.gpu]
image = "python:3.12-slim"
shm_size = "64Mi"
node_gpus = 4
pod_security = "baseline"
"""
#: ``scontrol show node`` keys whose values come from the machine, not from the shape:
#: key → why they differ. Each is checked against the cluster by the tests instead.
MACHINE_FIELDS: Dict[str, str] = {
    "CoresPerSocket": "slurm.conf declares 1 socket of 4 cores; a Node declares only CPUs, "
                      "so Slurm's inference for CPUs= alone applies (4 sockets of 1 core)",
    "Sockets": "as CoresPerSocket",
    "CPULoad": "a Node object carries no load: N/A, as Slurm prints an unknown load",
    "FreeMem": "a Node object carries no free memory: N/A",
    "NodeAddr": "the node's InternalIP",
    "NodeHostName": "the node's Hostname address",
    "Port": "the real nodes share one machine, so each slurmd has its own port; ours are "
            "the default port, which Slurm does not print",
    "Version": "the kubelet's version (slurmd's on Slurm)",
    "OS": "the node's operating system and kernel",
    "TmpDisk": "the node's allocatable ephemeral-storage; slurm.conf declares none",
    "BootTime": "a time", "SlurmdStartTime": "a time", "LastBusyTime": "a time",
}
#: ``sinfo -o`` letters whose values come from the machine (see :data:`MACHINE_FIELDS`).
MACHINE_LETTERS = ("z", "O", "e", "d", "X", "Y", "n")
_OURS = "|".join(RENAMES)
_HOSTLIST = re.compile(r"(?<![\w\[-])(?:[ab](?:\d+|\[[\d,\-]+\]))(?:,[ab](?:\d+|\[[\d,\-]+\]))*")
_KEY = re.compile(r"(?:^|(?<= ))([A-Za-z_]+)=")
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")


def real(name: str) -> str:
    """A recorded output of real Slurm."""
    return (REAL_SLURM_SINFO / f"{name}.txt").read_text()


def renamed(text: str) -> str:
    """``text`` with our node names and host lists written as Slurm's names."""
    def one(match: "re.Match[str]") -> str:
        names = expand_hostlist(match.group(0))
        return compress_hostlist_sorted([RENAMES.get(n, n) for n in names])

    return _HOSTLIST.sub(one, text)


def without_times(text: str) -> str:
    """``text`` with timestamps and ``-l``'s date line replaced by placeholders."""
    lines = text.splitlines(keepends=True)
    if lines and re.match(r"^\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}$", lines[0].rstrip()):
        lines[0] = "<date>\n"
    return _TIME.sub("<time>", "".join(lines))


def records(text: str) -> List[List[Tuple[str, str]]]:
    """``scontrol show`` output → its records, each a list of (key, value) in order."""
    out: List[List[Tuple[str, str]]] = []
    for block in text.split("\n\n"):
        pairs: List[Tuple[str, str]] = []
        for line in block.splitlines():
            marks = list(_KEY.finditer(line))
            for mark, after in zip(marks, marks[1:] + [None]):
                end = after.start() if after is not None else len(line)
                pairs.append((mark.group(1), line[mark.end():end].rstrip(" ")))
        if pairs:
            out.append(pairs)
    return out


def sinfo_rows(text: str, sep: str = "|") -> List[List[str]]:
    """An ``-o`` listing with ``sep`` between fields → its rows of fields (header first)."""
    return [line.split(sep) for line in text.splitlines()]
