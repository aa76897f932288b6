"""A platform's per-task variables, in Slurm's layout.

Some platforms tell each process of a job who it is through their own variables, which
scripts written for them read. When such a job runs with Slurm's layout (platform mode, where
the platform's own values describe one instance per node, not the tasks ``srun`` starts),
each task gets them computed from its Slurm view, so those scripts keep working. The job
description's ``contract_variables`` names the platform; one row per platform here (the
variables' names are :mod:`parsers.platforms.contract_facts`'s, where the profiles set them per
node).

- ``modelarts`` (Ascend): ``RANK_ID`` = ``SLURM_PROCID``, ``RANK_SIZE`` = the step's tasks,
  ``ASCEND_DEVICE_ID`` = the task's card on its node: the card among the task's own
  (``SLURM_STEP_GPUS``) its local rank selects, else its local rank.
"""

from __future__ import annotations

from typing import Callable, Dict, NamedTuple, Optional, Sequence

from parsers.platforms.contract_facts import ASCEND_DEVICE_ID, RANK_ID, RANK_SIZE


class TaskView(NamedTuple):
    """What Slurm tells one task."""

    procid: int
    ntasks: int
    localid: int
    nodeid: int
    #: The GPU (card) ids the task may use on its node, in Slurm's numbering.
    devices: Sequence[int]


def _modelarts(task: TaskView) -> Dict[str, str]:
    devices = list(task.devices)
    device = devices[task.localid % len(devices)] if devices else task.localid
    return {ASCEND_DEVICE_ID.name: str(device), RANK_ID.name: str(task.procid),
            RANK_SIZE.name: str(task.ntasks)}


#: Platform name → its task variables.
TASK_VARIABLES: Dict[str, Callable[[TaskView], Dict[str, str]]] = {
    "modelarts": _modelarts,
}


def contract_task_variables(contract: Optional[str], task: TaskView) -> Dict[str, str]:
    """The variables platform ``contract`` gives this task (none for no or another
    platform)."""
    make = TASK_VARIABLES.get(contract or "")
    return make(task) if make else {}
