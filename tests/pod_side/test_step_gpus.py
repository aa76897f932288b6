"""A step's GPUs inside a job, and a ``-w`` list longer than ``-N`` allows: srun's input
environment is the job's batch environment, as the runtime hands it over.

Expected values were observed on a real Slurm 22.05 (nodes n1, n2 with ``gpu:4``): jobs
``-p gpu -N2 --ntasks-per-node=2`` with ``--gres=gpu:3``, ``--gpus-per-node=3`` and
``--gpus-per-task=1``, each step printing ``SLURM_GPUS_ON_NODE`` per node, or srun's error lines.
"""

from __future__ import annotations

from typing import Dict, List, Tuple

import pytest

from parsers.input_errors import SlurmInputError
from parsers.slurm_env import batch_environment
from parsers.step_gpus import step_gpu_counts
from parsers.step_layout import layout_step
from parsers.steps import parse_srun
from tests.pod_side.support import describe, node_names, words

JOB_ID = 382
GRES3 = "-N2 --ntasks-per-node=2 --gres=gpu:3"
PER_NODE3 = "-N2 --ntasks-per-node=2 --gpus-per-node=3"
PER_TASK1 = "-N2 --ntasks-per-node=2 --gpus-per-task=1"
NO_GPUS = "-N2 -n2"
UNABLE = (f"Unable to create step for job {JOB_ID}: Invalid generic resource (gres) "
          "specification")


def step_gpus(job_args: str, srun_args: str) -> Tuple[int, ...]:
    """GPUs per step node of ``srun <srun_args>`` in the job ``sbatch <job_args>``."""
    desc = describe(job_args, job_id=JOB_ID)
    names = node_names(desc["node_count"])
    request = parse_srun(words(srun_args) + ["true"], batch_environment(desc, names))
    layout = layout_step(request, names, desc["cpus_per_node"], JOB_ID)
    return step_gpu_counts(request, layout, desc)


@pytest.mark.parametrize("job_args, srun_args, counts", [
    (GRES3, "-N1 -n1 --gpus=1", (1,)),
    (GRES3, "-N1 -n1 --gpus=2", (2,)),
    (GRES3, "-N1 -n2 --gpus=2", (2,)),
    (GRES3, "-N2 -n2 --gpus=2", (1, 1)),
    (GRES3, "-N2 -n2 --gpus=3", (2, 1)),
    (GRES3, "-N2 -n4 --gpus=4", (3, 1)),
    (GRES3, "-N1 -n1 --gpus-per-node=1", (1,)),
    (GRES3, "-N2 -n2 --gpus-per-node=2", (2, 2)),
    (GRES3, "-N1 -n1 --gres=gpu:1", (1,)),
    (GRES3, "-N1 -n1 --gres=gpu:2", (2,)),
    (GRES3, "-N1 -n2 --gpus-per-task=1", (2,)),
    (GRES3, "-N1 -n1", (3,)),
    (GRES3, "-N1 -n1 --gpus=1 --exact", (1,)),
    # The job's SLURM_GPUS_PER_NODE is srun's --gpus-per-node: it decides per node.
    (PER_NODE3, "-N1 -n1 --gpus=1", (3,)),
    (PER_NODE3, "-N2 -n2 --gpus=3", (3, 3)),
    (PER_NODE3, "-N1 -n1 --gpus-per-node=1", (1,)),
    (PER_NODE3, "-N1 -n1 --gres=gpu:1", (1,)),
    # ... and its SLURM_GPUS_PER_TASK is srun's --gpus-per-task.
    (PER_TASK1, "-N1 -n1 --gpus=2", (1,)),
    (PER_TASK1, "-N1 -n2 --gpus=2", (2,)),
    (PER_TASK1, "-N2 -n4 --gpus=4", (2, 2)),
    (PER_TASK1, "-N2 -n2 --gpus=3", (1, 1)),
    (PER_TASK1, "-N1 -n1 --gpus-per-node=1", (1,)),
    (PER_TASK1, "-N1 -n1", (1,)),
    (NO_GPUS, "-N1 -n1", (0,)),
])
def test_step_gpus_per_node(job_args: str, srun_args: str, counts: Tuple[int, ...]) -> None:
    assert step_gpus(job_args, srun_args) == counts


@pytest.mark.parametrize("job_args, srun_args, lines", [
    (NO_GPUS, "-N1 -n1 --gpus=1", ["Step requested GRES but job doesn't have GRES", UNABLE]),
    (NO_GPUS, "-N1 -n1 --gpus-per-node=1",
     ["Step requested GRES but job doesn't have GRES", UNABLE]),
    (NO_GPUS, "-N1 -n1 --gres=gpu:2", ["Step requested GRES but job doesn't have GRES", UNABLE]),
    (GRES3, "-N2 -n2 --gpus=1",
     ["Step requested gres=gpu:1 is less than the requested min nodes=2", UNABLE]),
    (GRES3, "-N1 -n1 --gpus=4", [UNABLE]),
    (GRES3, "-N2 -n2 --gpus=7", [UNABLE]),
    (GRES3, "-N1 -n1 --gpus-per-node=4",
     ["Step requested gres_per_node=gpu:4 is more than the job's gres_per_node=gpu:3", UNABLE]),
    (GRES3, "-N1 -n1 --gres=gpu:4",
     ["Step requested gres_per_node=gpu:4 is more than the job's gres_per_node=gpu:3", UNABLE]),
    (PER_NODE3, "-N1 -n1 --gpus=4", [UNABLE]),
    (PER_NODE3, "-N2 -n2 --gpus=7", [UNABLE]),
    (PER_NODE3, "-N1 -n1 --gpus-per-node=4",
     ["Step requested gres_per_node=gpu:4 is more than the job's gres_per_node=gpu:3", UNABLE]),
    (PER_TASK1, "-N2 -n2 --gpus=1",
     ["Step requested gres=gpu:1 is less than the requested min nodes=2", UNABLE]),
    (PER_TASK1, "-N2 -n2 --gpus=7",
     ["Step requested gres=gpu:7 is more than the job's gres=gpu:4", UNABLE]),
    (PER_TASK1, "-N1 -n1 --gpus=4", [UNABLE]),
    (PER_TASK1, "-N1 -n1 --gpus-per-node=4", [UNABLE]),
])
def test_steps_the_job_cannot_give_gpus(job_args: str, srun_args: str,
                                        lines: List[str]) -> None:
    with pytest.raises(SlurmInputError) as caught:
        step_gpus(job_args, srun_args)
    assert list(caught.value.lines) == lines
    assert caught.value.exit_code == 1


def placed(job_args: str, srun_args: str) -> Tuple[Tuple[str, ...], Dict[str, Tuple[int, ...]]]:
    """srun's error lines and where the tasks went."""
    desc = describe(job_args, job_id=JOB_ID)
    names = node_names(desc["node_count"])
    request = parse_srun(words(srun_args) + ["true"], batch_environment(desc, names))
    layout = layout_step(request, names, desc["cpus_per_node"], JOB_ID)
    return request.errors, {names[i]: r for i, r in zip(layout.node_indices, layout.ranks)}


CUT = ("Required nodelist includes more nodes than permitted by max-node count (2 > 1). "
       "Eliminating nodes from the nodelist.")


@pytest.mark.parametrize("srun_args, errors, where", [
    ("-w n1,n2 -N1 -n1", (CUT,), {"n1": (0,)}),
    ("-w n2,n1 -N1 -n1", (CUT,), {"n2": (0,)}),
    ("-w n2,n1 -N1-1 -n1", (CUT,), {"n2": (0,)}),
    ("-w n1,n2 -n2", (), {"n1": (0,), "n2": (1,)}),
    ("-w n1,n2 -N2 -n2", (), {"n1": (0,), "n2": (1,)}),
    ("-w n2,n1 -N1 -n2 -m arbitrary", (), {"n2": (0,), "n1": (1,)}),
])
def test_a_nodelist_longer_than_the_node_count_loses_its_last_names(
        srun_args: str, errors: Tuple[str, ...], where: Dict[str, Tuple[int, ...]]) -> None:
    assert placed(NO_GPUS, srun_args) == (errors, where)


def test_the_cut_nodelist_can_still_ask_too_much() -> None:
    """``-w n1,n2 -N1`` in a two-task job of one CPU per node: the job's two tasks on one
    node; real Slurm prints the cut line, then refuses the step."""
    desc = describe(NO_GPUS, job_id=JOB_ID)
    names = node_names(2)
    request = parse_srun(["-w", "n1,n2", "-N1", "true"], batch_environment(desc, names))
    assert request.errors == (CUT,)
    with pytest.raises(SlurmInputError) as caught:
        layout_step(request, names, desc["cpus_per_node"], JOB_ID)
    assert caught.value.lines == (f"Unable to create step for job {JOB_ID}: More processors "
                                  "requested than permitted",)
