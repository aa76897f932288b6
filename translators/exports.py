"""Form values for platforms whose users cannot create Kubernetes objects
(``sbatch --k8s-export=NAME``; facts in ``reference/platforms.md``).

Each export is one :class:`ExportForm`: the form's fields in the platform's order, and the
containers' environment. Sizes come from the job's allocation as for our own pods (every
node sized alike); the command is given by the caller (the runtime's bootstrap line, which
obeys the strictest form's rules). Pure: nothing is contacted or written here.

* ``dlc`` (PAI-DLC, a PyTorchJob): the params file of ``dlc create job --params_file``,
  ``key=value`` lines, memory and shared memory in GB; ``--account`` is the workspace.
* ``aistation`` (Master/Worker): Master 1 + Worker N−1; the platform sets only
  ``MASTER_ADDR``/``MASTER_PORT``, the form must set ``NNODES``, ``NPROC_PER_NODE`` and a
  ``RDZV_ID`` unique per submission.
* ``task-training`` (PyTorch mode): node spec × node count; ``RDZV_ID`` likewise.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Optional, Tuple

from parsers.allocation import Allocation
from parsers.input_errors import SlurmInputError
from parsers.jobspec import JobSpec
from parsers.platforms.platform_names import EXPORT_AISTATION, EXPORT_DLC, EXPORT_TASK_TRAINING
from translators.config import PartitionConfig

#: The runtime contract each export's containers run under (``run --contract``).
EXPORT_CONTRACTS = {EXPORT_DLC: "dlc", EXPORT_AISTATION: "aistation",
                    EXPORT_TASK_TRAINING: "task-training"}

_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(Ki|Mi|Gi|Ti|K|M|G|T)?$")
_QUANTITY_MB = {None: 1 / 2 ** 20, "Ki": 1 / 1024, "Mi": 1, "Gi": 1024, "Ti": 1024 ** 2,
                "K": 1000 / 2 ** 20, "M": 10 ** 6 / 2 ** 20, "G": 10 ** 9 / 2 ** 20,
                "T": 10 ** 12 / 2 ** 20}


@dataclass(frozen=True)
class ExportForm:
    """What to type into (or hand to) the platform."""

    platform: str
    fields: Tuple[Tuple[str, str], ...]
    environment: Tuple[Tuple[str, str], ...]
    notes: Tuple[str, ...] = ()

    def field(self, name: str) -> str:
        """The value of one field (KeyError if the form has none by that name)."""
        return dict(self.fields)[name]


def memory_gb(mb: Optional[int]) -> int:
    """MiB → whole GB as the forms take them, rounded up (at least 1)."""
    return max(1, math.ceil((mb or 0) / 1024))


def quantity_mb(quantity: str) -> int:
    """A Kubernetes memory quantity (``1Gi``, ``512Mi``) in MiB, rounded up."""
    found = _QUANTITY.match(quantity.strip())
    if not found:
        raise ValueError(f"not a memory quantity: {quantity!r}")
    return math.ceil(float(found.group(1)) * _QUANTITY_MB[found.group(2)])


def check_single_line(command: str) -> str:
    """The platforms' command fields are one line: refuse anything else."""
    if "\n" in command or "\r" in command:
        raise SlurmInputError("--k8s-export: the platform's command must be one line")
    return command


def export_form(platform: str, job: JobSpec, allocation: Allocation,
                partition: PartitionConfig, image: str, command: str,
                rdzv_id: str) -> ExportForm:
    """The form of ``platform`` for ``job`` sized by ``allocation``."""
    check_single_line(command)
    nodes = allocation.node_count
    cpus = allocation.max_cpus_per_node
    gpus = allocation.gpus_per_node
    memory = memory_gb(allocation.mem_per_node_mb) if job.mem_per_node_mb != 0 else None
    environment = (("RDZV_ID", rdzv_id),)
    notes = []
    if memory is None:
        notes.append("--mem=0 asks for a whole node's memory: choose the largest node spec")
    if platform == EXPORT_DLC:
        fields = [("name", job.job_name), ("kind", "PyTorchJob"),
                  ("worker_count", str(nodes)), ("worker_cpu", str(cpus)),
                  ("worker_gpu", str(gpus)),
                  ("worker_memory", str(memory if memory is not None else "")),
                  ("worker_shared_memory",
                   str(memory_gb(quantity_mb(partition.shm_size or "1Gi")))),
                  ("worker_image", image), ("command", _with_environment(environment, command)),
                  ("priority", "1")]
        if job.account:
            fields.append(("workspace_id", job.account))
        else:
            notes.append("no workspace_id: add workspace_id=<your workspace> (or submit "
                         "with --account=<workspace>)")
        fields.append(("interactive", "false"))
        return ExportForm(platform, tuple(fields), environment, tuple(notes))
    if platform == EXPORT_AISTATION:
        environment = (("NNODES", str(nodes)), ("NPROC_PER_NODE", str(max(gpus, 1))),
                       ("RDZV_ID", rdzv_id))
        fields = [("image", image), ("deployment", "Master/Worker"), ("master", "1"),
                  ("worker", str(nodes - 1)), ("cpu", str(cpus)), ("gpu", str(gpus)),
                  ("memory_gb", str(memory if memory is not None else "")),
                  ("command", command)]
        return ExportForm(platform, tuple(fields), environment, tuple(notes))
    if platform == EXPORT_TASK_TRAINING:
        fields = [("image", image), ("mode", "PyTorch"), ("nodes", str(nodes)),
                  ("cpu", str(cpus)), ("gpu", str(gpus)),
                  ("memory_gb", str(memory if memory is not None else "")),
                  ("command", command)]
        return ExportForm(platform, tuple(fields), environment, tuple(notes))
    raise SlurmInputError(f"Invalid --k8s-export specification: {platform}")


def _with_environment(environment: Tuple[Tuple[str, str], ...], command: str) -> str:
    """DLC's params file has no environment field: the variables go into the command,
    still one statement starting with an executable (``env K=V … bash -c '…'``)."""
    assignments = " ".join(f"{name}={value}" for name, value in environment)
    return f"env {assignments} {command}" if assignments else command


def render_params_file(form: ExportForm) -> str:
    """``key=value`` lines, as ``dlc create job --params_file`` reads them."""
    return "".join(f"{name}={value}\n" for name, value in form.fields)


def render_form(form: ExportForm) -> str:
    """The form's fields and environment, aligned, for a person to copy."""
    names = [name for name, _ in form.fields] + ["env"]
    width = max(len(name) for name in names) + 2
    lines = [f"{name + ':':<{width}}{value}" for name, value in form.fields]
    for index, (name, value) in enumerate(form.environment):
        label = "env:" if index == 0 else ""
        lines.append(f"{label:<{width}}{name}={value}")
    return "\n".join(lines) + "\n"
