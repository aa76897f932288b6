"""Platform pitfalls in script bodies (``parsers.pitfalls``), from scripts written the way the
seed documents write them (AIStation, AI Hub, the task-training platform, ModelArts), and
their table in ``sbatch --k8s-lint``."""

from __future__ import annotations

from typing import List, Tuple

import pytest

from parsers.pitfalls import RULES, find_pitfalls
from sbatch_k8s.cli.common import run_command
from sbatch_k8s.cli.sbatch import _main
from tests.data import TORCHRUN_SCRIPT

# Seed 003: the AIStation form's command pasted into a batch script, elastic.
AISTATION = """#!/bin/bash
#SBATCH --job-name=qwen-medical
#SBATCH --nodes=2-4 --gpus-per-node=8
export NCCL_DEBUG=info
export RDZV_ID=task-medical-qwen
torchrun \\
    --nnodes 4 \\
    --nproc_per_node $NPROC_PER_NODE \\
    --rdzv_id $RDZV_ID \\
    --rdzv_backend c10d \\
    --rdzv_endpoint $MASTER_ADDR:$MASTER_PORT \\
    ../main.py
"""

# Seed 000: AI Hub's PyTorchJob command and its NCCL/CUDA table.
AIHUB = """#!/bin/bash
#SBATCH -N 2 --gpus-per-node=8 --account=<ACCOUNT>
export NCCL_IB_DISABLE=1
export NCCL_P2P_DISABLE=1 CUDA_LAUNCH_BLOCKING=1
PYTORCH_NO_CUDA_MEMORY_CACHING=1 python train.py --warmup
conda activate llm
python -m torch.distributed.launch --nproc_per_node $PET_NPROC_PER_NODE --nnodes $PET_NNODES \\
    --node_rank $RANK --master_addr=$MASTER_ADDR --master_port=$MASTER_PORT train.py
"""

# Seed 001's torchrun line moved under srun, and a quick init check in a heredoc.
TASK_TRAINING = """#!/bin/bash
#SBATCH --nodes=2 --ntasks-per-node=1
NUM_NODES=your_own_num_nodes
srun torchrun \\
  --nnodes $SLURM_NNODES \\
  --nproc_per_node 4 \\
  --node_rank $SLURM_NODEID \\
  --master_addr $MASTER_ADDR --master_port 29500 train.py
srun bash -c 'torchrun --node_rank=$SLURM_PROCID --nnodes=$SLURM_NNODES check.py'
python - <<'EOF'
import os, torch.distributed as dist
e = os.environ
dist.init_process_group("gloo", rank=int(e["SLURM_NODEID"]), world_size=int(e["SLURM_NNODES"]))
print("$NOT_SHELL")
EOF
"""

# Seed 004: ModelArts' custom-image advice, with a login shell and a sourced file.
MODELARTS_OK = """#!/bin/bash -l
#SBATCH --nodes=1
cd /home/ma-user/modelarts/user-job-dir/code
source ./env.sh
conda activate python-3.7.10
for f in a b; do echo "$f"; done
read -r line < input.txt
echo "${DATA_DIR:-/cache/data} $line $1 $# $@ $HOME ${#f} $SLURM_JOB_ID"
python train.py --data "${DATA_DIR:-/cache}" --out "$OUT_DIR"
cat <<EOF > cfg.txt
rank $SLURM_PROCID of $HEREDOC_VAR
EOF
awk '{print $NF}' cfg.txt
"""


def found(text: str, node_range=None, environment=()) -> List[Tuple[int, str, str]]:
    return [(f.line, f.rule, f.found) for f in find_pitfalls(text, node_range, environment)]


def test_aistation_script():
    assert found(AISTATION, (2, 4)) == [
        (4, "debug-setting", "NCCL_DEBUG=info"),
        (5, "fixed-rendezvous-id", "export RDZV_ID=task-medical-qwen"),
        (6, "unset-variable", "$NPROC_PER_NODE"),
        (6, "fixed-size-rendezvous", "--nnodes 4"),
    ]


def test_aihub_script():
    assert found(AIHUB) == [
        (2, "placeholder", "<ACCOUNT>"),
        (3, "debug-setting", "NCCL_IB_DISABLE=1"),
        (4, "debug-setting", "NCCL_P2P_DISABLE=1"),
        (4, "debug-setting", "CUDA_LAUNCH_BLOCKING=1"),
        (5, "debug-setting", "PYTORCH_NO_CUDA_MEMORY_CACHING=1"),
        (6, "conda-activate", "conda activate"),
        (7, "unset-variable", "$PET_NPROC_PER_NODE"),
        (7, "unset-variable", "$PET_NNODES"),
        (7, "unset-variable", "$RANK"),
    ]


def test_task_training_script():
    assert found(TASK_TRAINING) == [
        (3, "placeholder", "your_own_num_nodes"),
        (4, "rank-expanded-once", "--node_rank $SLURM_NODEID"),
        (9, "process-rank-as-node-rank", "--node_rank=$SLURM_PROCID"),
        (13, "node-rank-as-process-rank", 'rank=int(e["SLURM_NODEID'),
        (13, "node-rank-as-process-rank", 'world_size=int(e["SLURM_NNODES'),
    ]


def test_what_is_set_somewhere_is_not_reported():
    # DATA_DIR has a default, f and line are set by for/read, $1 $# $@ are the shell's,
    # single quotes (awk) and quoted heredocs are not the shell's: only OUT_DIR and the
    # unquoted heredoc's HEREDOC_VAR remain, said to be perhaps set by the sourced file.
    findings = find_pitfalls(MODELARTS_OK)
    assert [(f.line, f.found) for f in findings] == [(9, "$OUT_DIR"), (11, "$HEREDOC_VAR")]
    assert "unless a file the script sources or evaluates sets it" in findings[0].why
    # The submission environment carries it (sbatch exports it by default).
    assert found(MODELARTS_OK, environment=["OUT_DIR", "HEREDOC_VAR"]) == []


def test_the_designs_script_and_unique_ids_are_clean():
    assert found(TORCHRUN_SCRIPT.read_text()) == []
    assert found("#!/bin/bash\nexport RDZV_ID=$SLURM_JOB_ID\ntorchrun --rdzv_id=$RDZV_ID "
                 "--nnodes=$SLURM_NNODES x.py\n", (2, 4)) == []
    assert found("#!/bin/bash\ntorchrun --nnodes=2:4 x.py\nexport NCCL_DEBUG=WARN\n",
                 (2, 4)) == []


@pytest.mark.parametrize("rule", RULES, ids=[r.name for r in RULES])
def test_every_finding_says_why_and_how_to_fix(rule):
    script = "\n".join((AISTATION, AIHUB, TASK_TRAINING))
    from parsers.pitfalls import read_script

    findings = list(rule.check(read_script(script, (2, 4))))
    assert findings, rule.name
    for finding in findings:
        assert finding.line > 0 and finding.why and finding.fix


@pytest.fixture
def work(tmp_path, monkeypatch):
    for name in ("SBATCHK8S_CONFIG", "SBATCHK8S_DEBUG", "XDG_CONFIG_HOME", "KUBECONFIG",
                 "NPROC_PER_NODE", "RDZV_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SBATCHK8S_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("SBATCHK8S_BACKEND", "local")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_lint_prints_the_pitfall_table(work, capsys):
    (work / "job.sh").write_text(AISTATION)
    run_command("sbatch", _main, ["--k8s-lint", "job.sh"])
    out = capsys.readouterr().out
    lines = out.splitlines()
    start = lines.index("pitfalls: 4 in the script's body (warnings; the job can still be "
                        "submitted)")
    assert lines[start + 1].split() == ["WHERE", "FOUND", "WHY", "IT", "BREAKS", "FIX"]
    rows = [line for line in lines[start + 2:] if line.startswith("job.sh:")]
    assert [r.split()[0] for r in rows] == ["job.sh:4", "job.sh:5", "job.sh:6", "job.sh:6"]
    assert rows[0].split()[1] == "NCCL_DEBUG=info"
    words = out.split()
    assert "RDZV_ID=$SLURM_JOB_ID" in words and "--nnodes=$SLURM_NNODES" in words


def test_lint_without_pitfalls_prints_no_table(work, capsys):
    (work / "job.sh").write_text("#!/bin/bash\n#SBATCH --nodes=1\nsrun hostname\n")
    code = run_command("sbatch", _main, ["--k8s-lint", "job.sh"])
    assert code == 0
    assert "pitfalls" not in capsys.readouterr().out


def test_the_submission_environment_counts_unless_export_none(work, capsys, monkeypatch):
    monkeypatch.setenv("NPROC_PER_NODE", "8")
    (work / "job.sh").write_text("#!/bin/bash\ntorchrun --nproc_per_node $NPROC_PER_NODE x.py\n")
    run_command("sbatch", _main, ["--k8s-lint", "job.sh"])
    assert "pitfalls" not in capsys.readouterr().out
    run_command("sbatch", _main, ["--k8s-lint", "--export=NONE", "job.sh"])
    assert "$NPROC_PER_NODE" in capsys.readouterr().out
