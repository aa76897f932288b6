"""``sbatch --k8s-export``: the DLC params file and the AIStation / task-training forms, from
a real command line (nothing contacted); the commands follow the forms' rules."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from sbatch_k8s.cli.common import run_command
from sbatch_k8s.cli.sbatch import _main

SCRIPT = ("#!/bin/bash\n#SBATCH --job-name=train --nodes=3 --gpus-per-node=4 --mem=60G "
          "--cpus-per-task=6 --account=ws-42\nsrun python train.py\n")


def _export(tmp_path: Path, monkeypatch, capsys, platform: str,
            *extra: str) -> Tuple[int, str, str]:
    (tmp_path / "job.sh").write_text(SCRIPT)
    monkeypatch.chdir(tmp_path)
    code = run_command("sbatch", _main, [f"--k8s-export={platform}", *extra, "job.sh", "x y"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _form(text: str) -> Tuple[Dict[str, str], Dict[str, str]]:
    """The printed form's fields and its environment."""
    fields: Dict[str, str] = {}
    env: Dict[str, str] = {}
    last = ""
    for line in text.splitlines():
        found = re.match(r"^(\S+):\s+(.*)$", line)
        value = found.group(2) if found else line.strip()
        last = found.group(1) if found else last
        if last == "env":
            name, _, val = value.partition("=")
            env[name] = val
        else:
            fields[last] = value
    return fields, env


def _check_command(command: str, tmp_path: Path, contract: str) -> None:
    """An executable first, one statement (``bash -c '…'``), running the runtime."""
    words = shlex.split(command)
    assert words[0] in ("bash", "env") and "=" not in words[0]
    if words[0] == "env":  # DLC's variables: env NAME=VALUE … before the statement
        words = words[1:]
        while re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
            words = words[1:]
    assert words[:2] == ["bash", "-c"] and len(words) == 3, words
    assert subprocess.run(["bash", "-n", "-c", words[2]], timeout=30).returncode == 0
    assert (f'run --contract {contract} -- {tmp_path}/job.sh "x y"' in words[2])
    assert f'f="{tmp_path}/sbatch-k8s-runtime.pyz"' in words[2]


def test_dlc_writes_a_params_file(tmp_path: Path, monkeypatch, capsys) -> None:
    code, out, err = _export(tmp_path, monkeypatch, capsys, "dlc")
    assert code == 0, err
    path = tmp_path / "train.dlc.params"
    assert f"wrote {path}" in out
    lines = path.read_text().splitlines()
    params = dict(line.split("=", 1) for line in lines)
    assert [line.split("=", 1)[0] for line in lines] == [
        "name", "kind", "worker_count", "worker_cpu", "worker_gpu", "worker_memory",
        "worker_shared_memory", "worker_image", "command", "priority", "workspace_id",
        "interactive"]
    assert params["kind"] == "PyTorchJob" and params["worker_count"] == "3"
    assert params["worker_cpu"] == "6" and params["worker_gpu"] == "4"
    assert params["worker_memory"] == "60" and params["worker_shared_memory"] == "1"
    assert params["workspace_id"] == "ws-42" and params["interactive"] == "false"
    assert params["worker_image"]
    assert re.match(r"^env RDZV_ID=train-[0-9a-f]{16} bash -c ", params["command"])
    _check_command(params["command"], tmp_path, "dlc")


def test_aistation_prints_master_and_workers(tmp_path: Path, monkeypatch, capsys) -> None:
    code, out, err = _export(tmp_path, monkeypatch, capsys, "aistation")
    assert code == 0, err
    fields, env = _form(out)
    assert fields["deployment"] == "Master/Worker"
    assert (fields["master"], fields["worker"]) == ("1", "2")
    assert (fields["cpu"], fields["gpu"], fields["memory_gb"]) == ("6", "4", "60")
    assert env["NNODES"] == "3" and env["NPROC_PER_NODE"] == "4"
    assert re.match(r"^train-[0-9a-f]{16}$", env["RDZV_ID"])
    _check_command(fields["command"], tmp_path, "aistation")
    assert "no runtime at" in err


def test_task_training_prints_node_spec_and_count(tmp_path: Path, monkeypatch,
                                                  capsys) -> None:
    code, out, err = _export(tmp_path, monkeypatch, capsys, "task-training")
    assert code == 0, err
    fields, env = _form(out)
    assert (fields["mode"], fields["nodes"]) == ("PyTorch", "3")
    assert (fields["cpu"], fields["gpu"], fields["memory_gb"]) == ("6", "4", "60")
    assert list(env) == ["RDZV_ID"]
    # The command must not start with python: that mode would wrap it in
    # torch.distributed.launch.
    assert not fields["command"].startswith("python")
    _check_command(fields["command"], tmp_path, "task-training")


def test_every_export_gets_its_own_rendezvous_id(tmp_path: Path, monkeypatch,
                                                 capsys) -> None:
    ids: List[str] = []
    for _ in range(3):
        code, out, _ = _export(tmp_path, monkeypatch, capsys, "aistation")
        assert code == 0
        ids.append(_form(out)[1]["RDZV_ID"])
    assert len(set(ids)) == 3


@pytest.mark.parametrize("argv, message", [
    (["--k8s-export=slurm", "job.sh"], "Invalid --k8s-export specification: slurm (one of "
                                       "dlc, aistation, task-training)"),
    (["--k8s-export=dlc", "--wrap=hostname"], "--k8s-export needs the batch script as a "
                                              "file (not (wrap))"),
])
def test_bad_exports_end_with_one_line(tmp_path: Path, monkeypatch, capsys,
                                       argv: List[str], message: str) -> None:
    (tmp_path / "job.sh").write_text(SCRIPT)
    monkeypatch.chdir(tmp_path)
    assert run_command("sbatch", _main, argv) != 0
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines() == [f"sbatch: error: {message}: the containers "
                                                 "run it from a directory they share"
                                                 if "wrap" in message else
                                                 f"sbatch: error: {message}"]
    assert list(tmp_path.iterdir()) == [tmp_path / "job.sh"]
