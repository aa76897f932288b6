"""sinfo output, byte for byte against real Slurm 22.05."""

from __future__ import annotations

import pytest

from parsers.formats.sinfo_fields import NodeInfo, PartitionInfo
from parsers.formats.sinfo_format import format_sinfo
from tests.pod_side.formats.builders import SACCT_NOW, recorded


def _node(name: str, state: str = "idle", alloc: int = 0, gpus: bool = False) -> NodeInfo:
    return NodeInfo(name, state, cpus=4, alloc_cpus=alloc, memory_mb=4000, cores=4,
                    gres="gpu:4" if gpus else "", hostname="vm")


def _cluster(n1: NodeInfo, n2: NodeInfo, n3: NodeInfo, n4: NodeInfo) -> list:
    return [PartitionInfo("debug", (n1, n2, n3, n4), default=True),
            PartitionInfo("gpu", (n1, n2))]


def test_idle_cluster() -> None:
    nodes = (_node("n1", gpus=True), _node("n2", gpus=True), _node("n3"), _node("n4"))
    assert format_sinfo(_cluster(*nodes)) == recorded("examples/sinfo-default.txt")


LIVE = _cluster(_node("n1", "mixed", 3, True), _node("n2", "mixed", 2, True),
                _node("n3", "allocated", 4), _node("n4", "allocated", 4))


@pytest.mark.parametrize("name, kwargs", [
    ("sinfo-default", {}),
    ("sinfo-s", {"summarize": True}),
    ("sinfo-N", {"node_oriented": True}),
    ("sinfo-l", {"long": True}),
    ("sinfo-Nl", {"node_oriented": True, "long": True}),
    ("sinfo-o", {"fmt": "%P %a %l %D %t %T %N %c %m %C %F %G %z %R %E %f %s %w %X %Y %Z %d "
                        "%g %h %n %r"}),
])
def test_live(name: str, kwargs: dict) -> None:
    assert format_sinfo(LIVE, now=SACCT_NOW, **kwargs) == recorded(f"live/{name}.txt")


def test_long_partition_names_widen_the_column() -> None:
    """``_set_part_field_size`` (read in sinfo/print.c, not recorded live)."""
    out = format_sinfo([PartitionInfo("averylongname", (_node("a1"),), default=True)],
                       header=False)
    assert out == "averylongname*    up   infinite      1   idle a1\n"


def _pooled(name: str, state: str, alloc: int, pool_alloc: int) -> NodeInfo:
    return NodeInfo(name, state, cpus=16, alloc_cpus=alloc, pool_alloc_cpus=pool_alloc)


def test_a_shared_pool_counts_once() -> None:
    """Nodes drawing on one pool (the local machine's) each show it as their CPUs; a line
    counts it once: held here / left in the pool / held on the pool's other nodes / pool."""
    pool = (_pooled("p1", "mixed", 3, 5), _pooled("p2", "mixed", 2, 5),
            _pooled("p3", "idle", 0, 5))
    part = [PartitionInfo("local", pool, default=True)]
    assert format_sinfo(part, fmt="%C", header=False) == "5/11/0/16\n"
    assert format_sinfo(part, fmt="%t %C", header=False) == "mix 5/11/0/16\nidle 0/11/5/16\n"
    assert format_sinfo(part, fmt="%N %C", node_oriented=True, header=False) == (
        "p1 3/11/2/16\np2 2/11/3/16\np3 0/11/5/16\n")
    mixed = [PartitionInfo("all", pool + (_node("n1", "mixed", 3), _node("n2", "down")))]
    assert format_sinfo(mixed, fmt="%C", header=False) == "8/12/4/24\n"
