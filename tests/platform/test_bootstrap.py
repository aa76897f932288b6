"""The one-line bootstrap: ``sbatch-k8s runtime --bootstrap PATH SCRIPT …`` prints a line
that a platform's one-line form runs as is (``sh -c LINE``): it fetches nothing, finds the
runtime already in the container (image or shared volume) and a Python, and starts
``runtime run``; a missing runtime ends every container with one line."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

from click.testing import CliRunner

from sbatch_k8s.runtime.platform.bootstrap import bootstrap_line
from sbatch_k8s.tool.main import cli
from tests.platform import oracles
from tests.platform.harness import PlatformCluster
from tests.platform.test_bad_contracts import BOUND_S
from tests.platform.test_env_probe import PROBE, check_view

TRICKY_ARGS = ["plain", "two words", "$HOME", 'quote"d', "it's", "back`tick`", "a\\b", ""]


def test_the_line_follows_the_strictest_forms_rules() -> None:
    line = bootstrap_line("/mnt/share/runtime.pyz", "job.sh", ["x"], contract="aistation")
    words = shlex.split(line)
    # An executable first, one statement, and not python (which the task-training PyTorch
    # mode would wrap in torch.distributed.launch).
    assert words[:2] == ["bash", "-c"] and len(words) == 3
    assert not re.search(r"\b(curl|wget|pip|http|https|ftp|scp|ssh)\b", line)
    assert "run --contract aistation -- job.sh x" in line


def test_arguments_reach_the_runtime_unchanged(tmp_path: Path) -> None:
    fake = tmp_path / "runtime.pyz"
    fake.write_text("import json, sys\nprint(json.dumps(sys.argv[1:]))\n")
    line = bootstrap_line(str(fake), "my job.sh", TRICKY_ARGS, contract="modelarts",
                          chdir=str(tmp_path), verbose=True)
    done = subprocess.run(["sh", "-c", line], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["run", "--contract", "modelarts", "-v", "--",
                                       "my job.sh"] + TRICKY_ARGS


def test_the_command_prints_the_line_and_writes_the_file(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "rt.pyz"
    done = runner.invoke(cli, ["runtime", "-o", str(out), "--bootstrap", "/shared/rt.pyz",
                               "job.sh", "a1"])
    assert done.exit_code == 0, done.output
    assert out.stat().st_size > 10000
    assert bootstrap_line("/shared/rt.pyz", "job.sh", ["a1"]) in done.output
    refused = runner.invoke(cli, ["runtime", "--bootstrap", "/shared/rt.pyz"])
    assert refused.exit_code == 2
    assert "--bootstrap needs the batch script's path in the containers" in refused.output
    assert runner.invoke(cli, ["runtime"]).exit_code == 2


def test_the_line_runs_a_job_on_a_platform(cluster: PlatformCluster) -> None:
    made = oracles.pytorchjob("boot", 2, 1)
    cluster.write("probe-boot.sh", PROBE.format(nodes=2, ran="ran-boot.txt", code=0))
    line = bootstrap_line(str(cluster.bundle), "probe-boot.sh")
    outcome = cluster.run(made.nodes, [], command=["/bin/sh", "-c", line])
    assert outcome.codes == [0, 0], outcome.logs
    check_view(cluster, made, "boot", outcome)


def test_a_missing_runtime_ends_every_container_with_one_line(
        cluster: PlatformCluster) -> None:
    made = oracles.pytorchjob("noboot", 2, 1)
    missing = str(cluster.root / "not-shipped.pyz")
    line = bootstrap_line(missing, "probe-boot.sh")
    outcome = cluster.run(made.nodes, [], timeout_s=BOUND_S, command=["/bin/sh", "-c", line])
    assert outcome.codes == [1, 1], outcome.logs
    for log in outcome.logs:
        assert log.strip() == (f"sbatch-k8s: error: run: no runtime at {missing} in this "
                               "container (write it there with: sbatch-k8s runtime -o FILE, "
                               "in the image or on a volume every container mounts)")
