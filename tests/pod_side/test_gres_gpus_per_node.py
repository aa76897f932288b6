"""``--gpus-per-node`` with ``--gres=gpu``: Slurm 26.05 refuses the pair; Slurm before it
accepts it, and older submitit versions generate exactly that pair. Real 22.05 (observed on
the 4-GPU nodes of ../shared/tools/real-slurm): ``--gres=gpu:2 --gpus-per-node=2`` runs with
2 GPUs and ``SLURM_GPUS_PER_NODE=2``; ``--gres=gpu:1 --gpus-per-node=3`` runs with the 1 GPU
of --gres while ``SLURM_GPUS_PER_NODE=3``; ``--gres=gpu:2 --gpus-per-node=a100:2`` is
refused ("Invalid GRES specification (with and without type identification)").

sbatch-k8s accepts a pair that asks for the same GPUs, with a warning, and refuses a pair
that disagrees with 26.05's message (22.05's result would contradict its own variables)."""

from __future__ import annotations

import pytest

from parsers.input_errors import SlurmInputError
from parsers.sbatch_checks import SAME_GPUS_TWICE
from tests.pod_side.support import SCRIPT, allocation_for, submit


@pytest.mark.parametrize("args, env", [
    ("--gres=gpu:2 --gpus-per-node=2", {}),
    ("--gpus-per-node=2 --gres=gpu:2", {}),
    ("--gres=gpu --gpus-per-node=1", {}),
    ("--gres=gpu:a100:2 --gpus-per-node=a100:2", {}),
    ("--gres=gpu:a100:1,gpu:v100:2 --gpus-per-node=v100:2,a100:1", {}),
    ("--gres=gpu:4", {"SBATCH_GPUS_PER_NODE": "4"}),
    ("--gres=gpu:2,nic:1 --gpus-per-node=2", {}),
])
def test_the_same_gpus_twice_are_accepted_with_one_warning(args, env):
    job, _ = submit(SCRIPT, f"{args} job.sh", env)
    assert [w.message for w in job.warnings] == [SAME_GPUS_TWICE]


def test_the_pair_allocates_its_gpus_once():
    assert allocation_for("--gres=gpu:2 --gpus-per-node=2 -N2").gpus_per_node == 2


@pytest.mark.parametrize("args", [
    "--gres=gpu:1 --gpus-per-node=3",
    "--gres=gpu:2 --gpus-per-node=a100:2",
    "--gres=gpu:a100:2 --gpus-per-node=v100:2",
    "--gres=gpu:1,gpu:1 --gpus-per-node=2",
])
def test_a_pair_that_disagrees_is_refused_in_2605s_words(args):
    with pytest.raises(SlurmInputError) as e:
        submit(SCRIPT, f"{args} job.sh")
    assert e.value.render("sbatch") == (
        "sbatch: fatal: --gpus-per-node and --gres=gpu are mutually exclusive.\n")
    assert e.value.exit_code == 1
