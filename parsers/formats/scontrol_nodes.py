"""``scontrol show node`` and ``scontrol show partition`` from sinfo's data.

The layouts are Slurm 22.05's (``slurm_sprint_node_table`` and ``slurm_sprint_partition_info``
as a real 22.05.8 printed them): ``Key=value`` groups, continuation lines indented by three
blanks, a record ending in a blank line; with ``one_liner`` (``scontrol -o``) the groups are
separated by single blanks and a record is one line. A value we do not have prints as Slurm
prints an unset one: ``CPULoad=N/A``, ``FreeMem=N/A``, ``BootTime=None``, ``Unknown`` times,
and the optional groups (``Arch``, ``NodeAddr``…, ``OS``, ``Reason``) are left out as Slurm
leaves them out; a reason whose author is unknown names ``nobody``, as ``uid_to_string`` does
for an unknown uid. ``Port`` is never printed: nodes use the default port, which Slurm leaves
out. The energy lines are those of a cluster without an energy plugin.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from parsers.formats.cells import convert_num_unit, format_timestamp
from parsers.formats.sinfo_fields import NodeInfo, PartitionInfo, counted_once
from parsers.values.hostlist import compress_hostlist_sorted
from parsers.values.hostranges import split_host
from parsers.values.time import format_time_limit

INDENT = "   "
#: sinfo's long state → ``scontrol``'s base state (``node_state_base_string``).
BASE_STATES: Dict[str, str] = {
    "idle": "IDLE", "mixed": "MIXED", "allocated": "ALLOCATED", "down": "DOWN",
    "drained": "IDLE", "draining": "MIXED", "completing": "ALLOCATED", "future": "FUTURE",
    "unknown": "UNKNOWN", "error": "ERROR",
}
#: Lines every node ends with: no power capping, no energy or external sensor plugin.
ENERGY_LINES = ("CapWatts=n/a", "CurrentWatts=0 AveWatts=0",
                "ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s")


def gpu_count(gres: str) -> int:
    """The GPUs of a ``Gres`` string (``gpu:4``, ``gpu:a100:4``); 0 without GPUs."""
    for item in gres.split(","):
        parts = item.split(":")
        if parts[0] == "gpu" and len(parts) > 1 and parts[-1].isdigit():
            return int(parts[-1])
    return 0


def node_state_complete(node: NodeInfo) -> str:
    """``node_state_string_complete``: the base state and its flags (``IDLE+DRAIN``,
    ``MIXED+DRAIN``, ``DOWN+NOT_RESPONDING``), flags in Slurm's table order."""
    responding = "*" not in node.state_suffix
    base = BASE_STATES.get(node.state, node.state.upper())
    if node.state == "drained" and not responding:
        base = "DOWN"
    if node.state == "draining" and node.alloc_cpus >= node.cpus:
        base = "ALLOCATED"
    flags = ["DRAIN"] if node.state in ("drained", "draining") else []
    if not responding:
        flags.append("NOT_RESPONDING")
    return "+".join([base] + flags)


def _tres(cpus: int, memory_mb: int, gpus: int, nodes: Optional[int] = None) -> str:
    """A TRES string as Slurm makes it: zero counts left out, memory in units."""
    items: List[Tuple[str, int, str]] = [
        ("cpu", cpus, str(cpus)), ("mem", memory_mb, convert_num_unit(memory_mb, "M")),
        ("node", nodes or 0, str(nodes)), ("billing", cpus if nodes is not None else 0,
                                           str(cpus)), ("gres/gpu", gpus, str(gpus))]
    return ",".join(f"{name}={text}" for name, count, text in items if count)


def _cfg_tres(node: NodeInfo) -> str:
    return ",".join(x for x in (f"cpu={node.cpus}",
                                f"mem={convert_num_unit(node.memory_mb, 'M')}",
                                f"billing={node.cpus}",
                                f"gres/gpu={gpu_count(node.gres)}" if gpu_count(node.gres)
                                else "") if x)


def show_node_groups(node: NodeInfo, partitions: Sequence[str], now: int) -> List[str]:
    """The groups of one node's record, one string per output line."""
    def stamp(epoch: Optional[int]) -> str:
        return format_timestamp(epoch, None, now)

    first = f"NodeName={node.name} " + (f"Arch={node.arch} " if node.arch else "") + \
        f"CoresPerSocket={node.cores} "
    lines = [first,
             f"CPUAlloc={node.alloc_cpus} CPUEfctv={node.cpus} CPUTot={node.cpus} CPULoad=N/A",
             f"AvailableFeatures={node.features or '(null)'}",
             f"ActiveFeatures={node.features or '(null)'}",
             f"Gres={node.gres or '(null)'}"]
    where = "".join(f"{key}={value} " for key, value in (
        ("NodeAddr", node.address), ("NodeHostName", node.hostname)) if value)
    if where or node.version:
        lines.append(where + (f"Version={node.version}" if node.version else ""))
    if node.os:
        lines.append(f"OS={node.os} ")
    lines += [f"RealMemory={node.memory_mb} AllocMem={node.alloc_memory_mb} FreeMem=N/A "
              f"Sockets={node.sockets} Boards=1",
              f"State={node_state_complete(node)} ThreadsPerCore={node.threads} "
              f"TmpDisk={node.tmp_disk_mb} Weight={node.weight} Owner=N/A MCS_label=N/A"]
    if partitions:
        lines.append(f"Partitions={','.join(partitions)} ")
    boot = stamp(node.boot_time) if node.boot_time else "None"
    start = stamp(node.start_time) if node.start_time else "None"
    alloc_tres = _tres(node.alloc_cpus, node.alloc_memory_mb, node.alloc_gpus)
    lines += [f"BootTime={boot} SlurmdStartTime={start}",
              f"LastBusyTime={stamp(node.last_busy)}",
              f"CfgTRES={_cfg_tres(node)}", f"AllocTRES={alloc_tres}", *ENERGY_LINES]
    if node.reason:
        who = ""
        if node.reason_time:
            who = f" [{node.reason_user or 'nobody'}@{stamp(node.reason_time)}]"
        lines.append(f"Reason={node.reason}{who}")
    return lines


def _record(lines: Sequence[str], one_liner: bool) -> str:
    if one_liner:
        return " ".join(lines) + "\n"
    return ("\n" + INDENT).join(lines) + "\n\n"


def _node_key(name: str) -> Tuple[str, int]:
    prefix, number, _width = split_host(name)
    return prefix, -1 if number is None else number


def nodes_of(partitions: Sequence[PartitionInfo]) -> List[Tuple[NodeInfo, List[str]]]:
    """Every node once (as the first partition listing it has it) with the names of the
    partitions it is in, in node name order."""
    seen: Dict[str, Tuple[NodeInfo, List[str]]] = {}
    for partition in partitions:
        for node in partition.nodes:
            seen.setdefault(node.name, (node, []))[1].append(partition.name)
    return [seen[name] for name in sorted(seen, key=_node_key)]


def format_show_nodes(nodes: Sequence[Tuple[NodeInfo, Sequence[str]]], now: int,
                      one_liner: bool = False) -> str:
    """``scontrol show node``: each node with the partitions it is in."""
    return "".join(_record(show_node_groups(node, names, now), one_liner)
                   for node, names in nodes)


def show_partition_groups(partition: PartitionInfo) -> List[str]:
    """The groups of one partition's record, one string per output line."""
    nodes = partition.nodes
    counted = counted_once(nodes)
    cpus = sum(n.cpus for n in counted)
    default_time = "NONE" if partition.default_time_min is None else \
        format_time_limit(partition.default_time_min)
    max_time = "UNLIMITED" if partition.max_time_min is None else \
        format_time_limit(partition.max_time_min)
    default_memory = "DefMemPerNode=UNLIMITED" if partition.def_mem_per_cpu_mb is None else \
        f"DefMemPerCPU={partition.def_mem_per_cpu_mb}"
    lines = [
        f"PartitionName={partition.name}",
        f"AllowGroups={(partition.groups or 'ALL')} AllowAccounts=ALL AllowQos=ALL",
        f"AllocNodes=ALL Default={'YES' if partition.default else 'NO'} QoS=N/A",
        f"DefaultTime={default_time} DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 "
        "Hidden=NO",
        f"MaxNodes=UNLIMITED MaxTime={max_time} MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED",
        f"Nodes={compress_hostlist_sorted([n.name for n in nodes]) or '(null)'}",
        f"PriorityJobFactor=1 PriorityTier=1 RootOnly={'YES' if partition.root_only else 'NO'} "
        f"ReqResv=NO OverSubscribe={partition.oversubscribe}",
        "OverTimeLimit=NONE PreemptMode=OFF",
        f"State={partition.avail.upper()} TotalCPUs={cpus} TotalNodes={len(nodes)} "
        "SelectTypeParameters=NONE",
        "JobDefaults=(null)",
        f"{default_memory} MaxMemPerNode=UNLIMITED",
    ]
    tres = _tres(cpus, sum(n.memory_mb for n in counted),
                 sum(gpu_count(n.gres) for n in counted), len(nodes))
    if tres:
        lines.append(f"TRES={tres}")
    return lines


def format_show_partitions(partitions: Sequence[PartitionInfo], one_liner: bool = False
                           ) -> str:
    """``scontrol show partition``: each partition in configuration order."""
    return "".join(_record(show_partition_groups(p), one_liner) for p in partitions)
