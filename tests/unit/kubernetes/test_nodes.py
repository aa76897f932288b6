"""sinfo and ``scontrol show node|partition`` from Node and Pod objects, compared with what real
Slurm 22.05 printed for the same shape (``tests/data/real-slurm/sinfo-drained``), and the
rules that choose a partition's nodes and a node's state."""

from __future__ import annotations

import calendar
import time
from typing import Any, Dict, List, Optional, Sequence

import pytest

from parsers.formats.scontrol_nodes import format_show_nodes, format_show_partitions, nodes_of
from parsers.formats.sinfo_format import format_sinfo
from parsers.formats.sinfo_reasons import format_reasons
from parsers.report_options.sinfo_options import parse_sinfo_args
from sbatch_k8s.backends.kubernetes.read.node_selection import selects
from sbatch_k8s.backends.kubernetes.read.partition_nodes import node_usage, nodes_by_partition
from sbatch_k8s.cli.sinfo import node_listed, partition_infos
from tests.kubelet.nodes import NodeShape, node_manifest
from tests.unit.kubernetes.slurm_shape import (
    CONFIG,
    MACHINE_FIELDS,
    MACHINE_LETTERS,
    real,
    records,
    renamed,
    sinfo_rows,
    without_times,
)
from translators.config import ClusterConfig, PartitionConfig, cluster_config_from_dict

NOW = 1_790_000_000
CORDONED_AT = "2026-11-23T07:54:49Z"


def _config(text: str = CONFIG) -> ClusterConfig:
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    return cluster_config_from_dict(tomllib.loads(text))


def _cordon(node: Dict[str, Any], at: str = CORDONED_AT) -> Dict[str, Any]:
    """What ``kubectl cordon`` and the node lifecycle controller leave on a Node."""
    node["spec"]["unschedulable"] = True
    node["spec"]["taints"] = [{"key": "node.kubernetes.io/unschedulable",
                               "effect": "NoSchedule", "timeAdded": at}]
    return node


def _shape_nodes(cordoned: Sequence[str] = ("b1",)) -> List[Dict[str, Any]]:
    gpu, cpu = NodeShape("4", "4000Mi", 4), NodeShape("4", "4000Mi", 0)
    nodes = [node_manifest(name, i, gpu if name.startswith("a") else cpu, NOW - 3600)
             for i, name in enumerate(("a0", "a1", "b0", "b1"))]
    return [_cordon(n) if n["metadata"]["name"] in cordoned else n for n in nodes]


def _pod(node: str, cpu: str = "1", memory: str = "256Mi", phase: str = "Running",
         **extra: Any) -> Dict[str, Any]:
    container = {"name": "job", "resources": {"requests": {"cpu": cpu, "memory": memory},
                                              "limits": extra.pop("limits", {})}}
    return {"metadata": {"name": f"p-{node}", "labels": {
                "app.kubernetes.io/managed-by": "sbatch-k8s"}},
            "spec": {"nodeName": node, "containers": [container], **extra},
            "status": {"phase": phase}}


def _listing(argv: Sequence[str], nodes: Optional[List[Dict[str, Any]]] = None,
             pods: Optional[List[Dict[str, Any]]] = None) -> str:
    """What sinfo ``argv`` prints for the shape (one 1-CPU pod on a0, b1 cordoned)."""
    config = _config()
    query = parse_sinfo_args(list(argv), {})
    by_partition = nodes_by_partition(config, _shape_nodes() if nodes is None else nodes,
                                      [_pod("a0")] if pods is None else pods, NOW)
    partitions = partition_infos(config, by_partition, query.partitions,
                                 lambda node: node_listed(node, query))
    if query.list_reasons:
        return format_reasons(partitions, query.long, not query.noheader, NOW)
    return format_sinfo(partitions, query.format, query.format_is_long, query.summarize,
                        query.node_oriented, query.long, not query.noheader, NOW)


@pytest.mark.parametrize("argv, recorded", [
    ((), "sinfo"), (("-s",), "sinfo-s"), (("-l",), "sinfo-l"), (("-t", "drain"), "sinfo-t-drain"),
    (("-t", "idle"), "sinfo-t-idle"), (("-t", "mix"), "sinfo-t-mix"),
    (("-p", "gpu"), "sinfo-p-gpu"), (("-n", "b1"), "sinfo-n-n4"),
    (("-O", "Partition,NodeList,StateLong,CPUsState,Memory,Gres,Reason"), "sinfo-O"),
])
def test_sinfo_is_slurms_for_the_same_shape(argv: Sequence[str], recorded: str) -> None:
    assert without_times(renamed(_listing(argv))) == without_times(real(recorded))


def test_sinfo_node_oriented_long_differs_only_in_machine_columns() -> None:
    """``-N -l``: S:C:T and TMP_DISK come from the machine (see MACHINE_FIELDS); the rows'
    order within a node is not fixed in Slurm (the recording has gpu before debug*)."""
    ours = without_times(renamed(_listing(["-N", "-l"]))).splitlines()
    theirs = without_times(real("sinfo-N-l")).splitlines()
    assert ours[:2] == theirs[:2]
    mask = {5: "<S:C:T>", 7: "<TMP_DISK>"}
    def masked(lines: List[str]) -> List[List[str]]:
        return sorted([mask.get(i, v) for i, v in enumerate(line.split())] for line in lines)
    assert masked(ours[2:]) == masked(theirs[2:])
    assert {line.split()[5] for line in ours[2:]} == {"4:1:1"}
    assert {line.split()[7] for line in ours[2:]} == {"102400"}     # 100Gi ephemeral-storage


def test_sinfo_format_letters_differ_only_in_machine_columns() -> None:
    letters = "P a l D t T N c m G C F A E z O e d w X Y Z n".split()
    ours = sinfo_rows(renamed(_listing(["-o", "|".join(f"%{x}" for x in letters)])))
    theirs = sinfo_rows(real("sinfo-o"))
    assert ours[0] == theirs[0]
    machine = {letters.index(x) for x in MACHINE_LETTERS}
    def masked(rows: List[List[str]]) -> List[List[str]]:
        return [[v for i, v in enumerate(row) if i not in machine] for row in rows]
    assert masked(ours) == masked(theirs)
    for row in ours[1:]:
        fields = dict(zip(letters, row))
        assert (fields["z"], fields["O"], fields["e"], fields["X"], fields["Y"]) == \
            ("4:1:1", "N/A", "N/A", "4", "1")


def test_sinfo_reasons_name_the_cordoned_node_and_when() -> None:
    ours = renamed(_listing(["-R"])).splitlines()
    theirs = real("sinfo-R").splitlines()
    assert ours[0] == theirs[0]
    reason, user, stamp, nodes = ours[1].split()
    assert (reason, nodes) == tuple(theirs[1].split()[i] for i in (0, 3))
    assert user == "Unknown"            # a Node does not say who cordoned it
    cordoned = calendar.timegm(time.strptime(CORDONED_AT, "%Y-%m-%dT%H:%M:%SZ"))
    assert stamp == time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(cordoned))


def test_sinfo_draining_when_our_pods_still_run_on_a_cordoned_node() -> None:
    nodes = _shape_nodes(cordoned=("a0", "b1"))
    for argv, recorded in (((), "drng-sinfo"), (("-t", "drain"), "drng-sinfo-t-drain")):
        assert renamed(_listing(argv, nodes)) == real(recorded)


def _show_nodes(cordoned: Sequence[str] = ("b1",)) -> str:
    config = _config()
    partitions = partition_infos(config, nodes_by_partition(config, _shape_nodes(cordoned),
                                                            [_pod("a0")], NOW))
    return format_show_nodes(nodes_of(partitions), NOW)


def _compare_node_records(ours_text: str, theirs_text: str) -> None:
    ours, theirs = records(renamed(ours_text)), records(theirs_text)
    assert [r[0] for r in ours] == [r[0] for r in theirs]
    for mine, slurms in zip(ours, theirs):
        mine_keys = [k for k, _ in mine]
        assert mine_keys == [k for k, _ in slurms if k != "Port"], mine[0]
        slurm = dict(slurms)
        for key, value in mine:
            if key in MACHINE_FIELDS:
                continue
            if key == "Reason":            # who and when: [root@<time>] on Slurm
                assert value.split(" [")[0] == slurm[key].split(" [")[0]
                continue
            assert (key, value) == (key, slurm[key]), mine[0]


def test_scontrol_show_node_matches_slurm_field_by_field() -> None:
    text = _show_nodes()
    _compare_node_records(text, real("show-node"))
    first = dict(records(text)[0])
    assert (first["CoresPerSocket"], first["Sockets"], first["CPULoad"], first["FreeMem"]) == \
        ("1", "4", "N/A", "N/A")
    addresses = {a["type"]: a["address"] for a in _shape_nodes()[0]["status"]["addresses"]}
    assert (first["NodeAddr"], first["NodeHostName"], first["Version"]) == \
        (addresses["InternalIP"], addresses["Hostname"],
         _shape_nodes()[0]["status"]["nodeInfo"]["kubeletVersion"])
    assert first["OS"].startswith("Linux ") and first["TmpDisk"] == "102400"
    assert first["BootTime"] == "None" and first["LastBusyTime"] != "Unknown"
    assert dict(records(text)[3])["Reason"].startswith("cordoned [nobody@")


def test_scontrol_show_node_draining_and_one_liner() -> None:
    text = _show_nodes(cordoned=("a0", "b1"))
    _compare_node_records(text.split("\n\n")[0] + "\n\n", real("drng-show-node-n1"))
    config = _config()
    partitions = partition_infos(config, nodes_by_partition(config, _shape_nodes(), [], NOW))
    last = [n for n in nodes_of(partitions) if n[0].name == "b1"]
    one = format_show_nodes(last, NOW, one_liner=True)
    assert one.count("\n") == 1
    _compare_node_records(one.replace(" CPUAlloc", "\n CPUAlloc"),
                          real("show-node-o").replace(" CPUAlloc", "\n CPUAlloc"))


def test_scontrol_show_partition_is_slurms() -> None:
    config = _config()
    partitions = partition_infos(config, nodes_by_partition(config, _shape_nodes(),
                                                            [_pod("a0")], NOW))
    assert renamed(format_show_partitions(partitions)) == real("show-partition")


def test_partition_settings_reach_show_partition() -> None:
    config = _config(CONFIG + "max_time_min = 90\ndefault_time_min = 30\n"
                     "def_mem_per_cpu_mb = 512\n")
    partitions = partition_infos(config, {})
    text = format_show_partitions(partitions[1:], one_liner=True)
    assert "DefaultTime=00:30:00 " in text and " MaxTime=01:30:00 " in text
    assert "DefMemPerCPU=512 MaxMemPerNode=UNLIMITED" in text
    assert "Nodes=(null) " in text and "TotalNodes=0 " in text and "TRES=" not in text


# --- which nodes a partition has, and their states -------------------------------------


def _node(name: str = "n", **spec: Any) -> Dict[str, Any]:
    node = node_manifest(name, 0, NodeShape("8", "32Gi", 0), NOW)
    node["spec"].update(spec)
    return node


def _partition(**fields: Any) -> PartitionConfig:
    return PartitionConfig(name="p", **fields)


GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


@pytest.mark.parametrize("node_spec, partition, selected", [
    ({}, {}, True),
    ({"taints": [GPU_TAINT]}, {}, False),
    ({"taints": [dict(GPU_TAINT, effect="PreferNoSchedule")]}, {}, True),
    ({"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]}, {}, True),
    ({"taints": [GPU_TAINT]},
     {"tolerations": ((("key", "nvidia.com/gpu"), ("operator", "Exists")),)}, False),
    ({}, {"node_selector": (("kubernetes.io/os", "linux"),)}, True),
    ({}, {"node_selector": (("pool", "big"),)}, False),
    ({}, {"node_gpus": 1}, False),
])
def test_partition_selects_nodes(node_spec: Dict[str, Any], partition: Dict[str, Any],
                                 selected: bool) -> None:
    """Tolerating the GPU taint makes a GPU partition: a node without GPUs is not in it."""
    assert selects(_partition(**partition), _node(**node_spec)) is selected


def test_gpu_partition_by_toleration_selects_gpu_nodes() -> None:
    node = node_manifest("g", 0, NodeShape("8", "32Gi", 2), NOW)
    node["spec"]["taints"] = [GPU_TAINT]
    partition = _partition(tolerations=((("key", "nvidia.com/gpu"), ("operator", "Exists")),))
    assert selects(partition, node)


def _state(node: Dict[str, Any], pods: Sequence[Dict[str, Any]]) -> str:
    config = ClusterConfig(partitions=(_partition(),), default_partition="p")
    info = nodes_by_partition(config, [node], pods, NOW)["p"][0]
    return info.state + info.state_suffix


def _not_ready(node: Dict[str, Any]) -> Dict[str, Any]:
    for condition in node["status"]["conditions"]:
        if condition["type"] == "Ready":
            condition["status"] = "Unknown"
    return node


@pytest.mark.parametrize("make, pods, state", [
    (_node, [], "idle"),
    (_node, [_pod("n", cpu="500m"), _pod("n", cpu="250m")], "mixed"),
    (_node, [_pod("n", cpu="8")], "allocated"),
    (_node, [_pod("n", cpu="8", phase="Succeeded")], "idle"),
    (lambda: _not_ready(_node()), [], "down*"),
    (lambda: _cordon(_node()), [], "drained"),
    (lambda: _cordon(_node()), [_pod("n")], "draining"),
    (lambda: _not_ready(_cordon(_node())), [], "drained*"),
])
def test_node_state(make: Any, pods: Sequence[Dict[str, Any]], state: str) -> None:
    assert _state(make(), pods) == state


def test_usage_counts_whole_cpus_per_pod_init_containers_and_limits() -> None:
    init = {"name": "init", "resources": {"requests": {"cpu": "3"}}}
    pods = [_pod("n", cpu="500m"), _pod("n", cpu="1", initContainers=[init]),
            _pod("n", cpu="1", limits={"nvidia.com/gpu": "2"})]
    used = node_usage(pods, NOW)["n"]
    assert (used.cpus, used.memory_mb, used.extended, used.last_busy) == \
        (1 + 3 + 1, 768, {"nvidia.com/gpu": 2}, NOW)


def test_whole_node_shape_is_the_smallest_usable_node() -> None:
    from sbatch_k8s.backends.kubernetes.submit.node_shape import ClusterShape, shape_of_nodes

    config = _config()
    debug, gpu = config.partitions
    nodes = _shape_nodes(cordoned=("b1",))
    nodes[2]["status"]["allocatable"]["cpu"] = "3500m"        # b0: 3 whole CPUs
    assert shape_of_nodes(debug, nodes) == ClusterShape(3, None, 3)
    assert shape_of_nodes(gpu, nodes) == ClusterShape(4, 4, 2)
    assert shape_of_nodes(gpu, [_not_ready(n) for n in nodes[:2]]) is None


@pytest.mark.parametrize("make, pods, state, reason", [
    (lambda: _not_ready(_node()), [], "State=DOWN+NOT_RESPONDING ", "Reason=Not responding ["),
    (lambda: _not_ready(_cordon(_node())), [], "State=DOWN+DRAIN+NOT_RESPONDING ",
     "Reason=cordoned [nobody@"),
    (lambda: _cordon(_node()), [_pod("n", cpu="8")], "State=ALLOCATED+DRAIN ",
     "Reason=cordoned [nobody@"),
    (_node, [_pod("n", cpu="8")], "State=ALLOCATED ", None),
])
def test_scontrol_states_and_reasons(make: Any, pods: Sequence[Dict[str, Any]], state: str,
                                     reason: Optional[str]) -> None:
    config = ClusterConfig(partitions=(_partition(),), default_partition="p")
    partitions = partition_infos(config, nodes_by_partition(config, [make()], pods, NOW))
    text = format_show_nodes(nodes_of(partitions), NOW, one_liner=True)
    assert state in text
    assert (reason in text) if reason else ("Reason=" not in text)


def test_sinfo_dead_and_responding_filters() -> None:
    nodes = _shape_nodes()
    _not_ready(nodes[2])                                        # b0 stops answering
    assert renamed(_listing(["-d", "-h"], nodes)) == \
        "debug*       up   infinite      1  down* n3\ngpu          up   infinite      0    n/a \n"
    assert "n3" not in renamed(_listing(["-r", "-h"], nodes))
    reasons = {line.split()[-1]: line for line in
               renamed(_listing(["-R", "-h"], nodes)).splitlines()}
    assert sorted(reasons) == ["n3", "n4"]
    assert reasons["n3"].startswith("Not responding       Unknown   ")
