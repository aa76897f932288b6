"""``scontrol show job -d``: the detail lines (Slurm 22.05's ``SHOW_DETAIL`` output).

Real Slurm adds, with ``-d``/``--details``:

* ``DerivedExitCode=<code>:<signal>`` after the ``Requeue=… ExitCode=`` line, for every job;
* for a job that was given nodes (running or ended), after the ``Socks/Node=`` line,
  ``JOB_GRES=<gres of the whole job, or (null)>`` and one line per group of consecutive nodes
  with the same allocation: ``  Nodes=n[2-3] CPU_IDs=0 Mem=256 GRES=`` (the GPUs' indices,
  ``gpu:1(IDX:0)``, only while the job runs; after its end ``GRES=`` is empty).

A pod has no fixed cores, so its ``CPU_IDs`` number the node's CPUs from 0, as the tasks see
them; ``IDX`` are the GPUs' indices on the node as the job's tasks see them (the local
backend's own GPU ids). sbatch-k8s then adds one line per node of its own, after those:
``  Node=<name> Pod=<pod> Phase=<phase> Restarts=<n> Host=<Kubernetes node>
LastEvent=<time> <reason>: <message>`` on a cluster (the free text last), ``  Node=<name>
Log=<path>`` on the local backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Mapping, Optional, Sequence, Tuple

from parsers.formats.job_values import exit_code_text
from parsers.job_records import JobRecord
from parsers.values.bitfmt import format_bitfmt
from parsers.values.hostlist import compress_hostlist

#: The indentation of a ``Nodes=`` line beyond the record's own (Slurm: two blanks).
NODE_INDENT = "  "


@dataclass(frozen=True)
class NodeAllocation:
    """What one node of a job holds: its CPUs, memory and GPUs (their indices)."""

    name: str
    cpus: int
    mem_mb: int
    gpu_ids: Tuple[int, ...] = ()


@dataclass(frozen=True)
class NodeState:
    """One node as sbatch-k8s's own detail line shows it: on a cluster its pod (``pod`` ""
    when it has none), locally the node process's log."""

    name: str
    pod: str = ""
    phase: str = ""
    restarts: int = 0
    host: str = ""
    last_event: str = ""
    log: str = ""


def derived_exit_line(job: JobRecord) -> str:
    """``DerivedExitCode=0:0`` (the highest exit code of the job's srun steps)."""
    return f"DerivedExitCode={exit_code_text(job.derived_exit_code, 0)}"


def _gres(node: NodeAllocation, running: bool) -> str:
    if not node.gpu_ids or not running:
        return ""
    return f"gpu:{len(node.gpu_ids)}(IDX:{format_bitfmt(node.gpu_ids)})"


def _node_text(node: NodeAllocation, running: bool) -> str:
    cpu_ids = format_bitfmt(range(node.cpus)) if node.cpus else ""
    return f"CPU_IDs={cpu_ids} Mem={node.mem_mb} GRES={_gres(node, running)}"


def allocation_lines(job: JobRecord, nodes: Sequence[NodeAllocation]) -> List[str]:
    """``JOB_GRES=`` and the grouped ``Nodes=`` lines; none for a job given no nodes."""
    if not nodes:
        return []
    running = job.state in ("RUNNING", "COMPLETING", "SUSPENDED")
    gpus = sum(len(n.gpu_ids) for n in nodes)
    lines = [f"JOB_GRES=gpu:{gpus}" if gpus else "JOB_GRES=(null)"]
    group: List[str] = []
    text: Optional[str] = None
    for node in nodes:
        shown = _node_text(node, running)
        if group and shown != text:
            lines.append(f"{NODE_INDENT}Nodes={compress_hostlist(group)} {text}")
            group = []
        group.append(node.name)
        text = shown
    lines.append(f"{NODE_INDENT}Nodes={compress_hostlist(group)} {text}")
    return lines


def node_state_lines(nodes: Sequence[NodeState]) -> List[str]:
    """sbatch-k8s's own line per node (see the module docstring)."""
    lines = []
    for node in nodes:
        if node.log:
            lines.append(f"{NODE_INDENT}Node={node.name} Log={node.log}")
            continue
        lines.append(f"{NODE_INDENT}Node={node.name} Pod={node.pod or '(null)'} "
                     f"Phase={node.phase or '(null)'} Restarts={node.restarts} "
                     f"Host={node.host or '(null)'} LastEvent={node.last_event or '(null)'}")
    return lines


def even_allocation(job: JobRecord, names: Sequence[str]) -> List[NodeAllocation]:
    """The nodes' allocation from the record alone (when the job's description is gone):
    the CPUs spread as slurmctld packs them (each node in turn leaving one for every later
    node), memory per node or per CPU as recorded, no GPUs known."""
    from parsers.allocation import pack_tasks

    cpus = pack_tasks(max(job.cpus, len(names)), len(names), None) if names else ()
    per = job.min_memory_mb or 0
    return [NodeAllocation(name, count, per * count if job.memory_per_cpu else per)
            for name, count in zip(names, cpus)]


def _per_node(values: Any, index: int, default: int) -> int:
    if isinstance(values, list) and index < len(values) and isinstance(values[index], int):
        return values[index]
    return default


def described_allocation(record: JobRecord, names: Sequence[str],
                         description: Optional[Mapping[str, Any]]) -> List[NodeAllocation]:
    """Each node's CPUs, memory (MB) and GPU indices, from the job's description."""
    fallback = even_allocation(record, names)
    if not description:
        return fallback
    found = []
    gpu_ids = description.get("gpu_ids") or []
    for index, name in enumerate(names):
        cpus = _per_node(description.get("cpus_per_node"), index, fallback[index].cpus)
        per_node, per_cpu = description.get("mem_per_node_mb"), description.get("mem_per_cpu_mb")
        memory = per_node if isinstance(per_node, int) else \
            per_cpu * cpus if isinstance(per_cpu, int) else fallback[index].mem_mb
        ids = gpu_ids[index] if index < len(gpu_ids) and gpu_ids[index] else \
            list(range(_per_node(description.get("gpus_on_nodes"), index, 0)))
        found.append(NodeAllocation(name, cpus, memory, tuple(int(i) for i in ids)))
    return found
