"""The design document's torchrun script (``tests/data/llm-torchrun.sh``), unchanged, as the
command of a 2-container PyTorchJob: ``runtime run`` gives it Slurm's view from the
platform's variables and its ``srun torchrun`` runs a 2-node × 2-process gloo all-reduce.

The platform says 2 processes per node (``PET_NPROC_PER_NODE``), which overrides the
script's ``--gpus-per-node=8`` as a command-line option would; torch runs on the CPU."""

from __future__ import annotations

import re

import pytest

from tests.data import TORCHRUN_SCRIPT
from tests.local.test_torchrun import TRAIN, check_torchrun_output
from tests.platform import oracles
from tests.platform.harness import PlatformCluster


def test_design_torchrun_script_on_a_pytorchjob(cluster: PlatformCluster) -> None:
    pytest.importorskip("torch", reason="torch is needed (CI installs torch==2.13.0)")
    cluster.write("train.py", TRAIN)
    cluster.write("llm.sh", TORCHRUN_SCRIPT.read_text())
    made = oracles.pytorchjob("llm-torch", 2, 2)
    outcome = cluster.run(made.nodes, ["llm.sh"], timeout_s=300)
    batch = "".join(p.read_text() for p in (cluster.work / "logs").glob("llm-*.out"))
    assert outcome.codes == [0, 0], (outcome.logs, batch)
    warning = ("sbatch-k8s: warning: the script asks for 8 GPU(s) per node; the platform "
               "gives 2")
    assert warning in outcome.logs[0]
    outputs = list((cluster.work / "logs").glob("llm-*.out"))
    assert len(outputs) == 1, outputs
    assert re.fullmatch(r"llm-\d+\.out", outputs[0].name)
    check_torchrun_output(outputs[0].read_text())
