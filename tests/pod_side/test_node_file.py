"""The node file: what a node keeps for the commands its jobs run, found by job id alone
(``sbatch_k8s.runtime.agent.node_file``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from sbatch_k8s.runtime.agent.node_file import (complete_environment, node_variables,
                                          read_node_file, with_node_file, write_node_file)

STRIPPED = {"PATH": "/usr/bin", "HOME": "/home/u"}


def _written(tmp_path: Path, job_id: int = 7) -> Path:
    variables = node_variables(
        {"SBATCHK8S_JOB_DIR": "/jobs/7", "SBATCHK8S_RUNTIME_PORT": "6818", "OTHER": "x"},
        "n0", {"SBATCHK8S_STATE_DIR": "/state", "HF_TOKEN": "secret"},
        {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "HOSTNAME": "pod"})
    return Path(write_node_file(str(tmp_path), job_id, variables))


def test_it_keeps_ours_the_nodes_name_the_cluster_settings_and_the_api_server(
        tmp_path: Path) -> None:
    path = _written(tmp_path)
    assert path.name == "job-7.json" and oct(path.stat().st_mode & 0o777) == "0o600"
    assert json.loads(path.read_text()) == {"job_id": 7, "variables": {
        "SBATCHK8S_JOB_DIR": "/jobs/7", "SBATCHK8S_RUNTIME_PORT": "6818",
        "SBATCHK8S_STATE_DIR": "/state", "KUBERNETES_SERVICE_HOST": "10.0.0.1",
        "SLURMD_NODENAME": "n0"}}            # never the exported secrets, nor the rest


def test_a_stripped_environment_is_completed_from_its_job_id(tmp_path: Path) -> None:
    _written(tmp_path)
    for name in ("SLURM_JOB_ID", "SLURM_JOBID"):
        completed = with_node_file(dict(STRIPPED, **{name: "7"}), str(tmp_path))
        assert completed["SBATCHK8S_JOB_DIR"] == "/jobs/7"
        assert completed["SLURMD_NODENAME"] == "n0" and completed["HOME"] == "/home/u"
    environ = dict(STRIPPED, SLURM_JOB_ID="7", SLURMD_NODENAME="mine")
    complete_environment(environ, str(tmp_path))
    assert environ["SLURMD_NODENAME"] == "mine"            # what it has wins


def test_nothing_changes_without_a_file_of_that_job_or_with_our_variables(
        tmp_path: Path) -> None:
    _written(tmp_path)
    for environ in (dict(STRIPPED), dict(STRIPPED, SLURM_JOB_ID="8"),
                    dict(STRIPPED, SLURM_JOB_ID="7", SBATCHK8S_JOB_DIR="/other")):
        assert with_node_file(environ, str(tmp_path)) is environ
    (tmp_path / "job-9.json").write_text(json.dumps({"job_id": 7, "variables": {}}))
    assert read_node_file(9, str(tmp_path)) is None          # a file for another job
    (tmp_path / "job-10.json").write_text("{half")
    assert read_node_file(10, str(tmp_path)) is None
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
