"""An exported form runs: the containers get only what the platform sets plus what the form
(``sbatch --k8s-export``) says, run its command, and the script runs once with Slurm's view."""

from __future__ import annotations

import re
import shlex
import shutil
from typing import Dict, List

import pytest

from sbatch_k8s.cli.common import run_command
from sbatch_k8s.cli.sbatch import _main
from tests.platform import oracles
from tests.platform.harness import PlatformCluster
from tests.platform.test_env_probe import PROBE, check_view


def _export(cluster: PlatformCluster, monkeypatch, capsys, platform: str, name: str
            ) -> Dict[str, str]:
    """The form's command and environment, exported from the shared directory."""
    cluster.write(f"probe-{name}.sh", PROBE.format(nodes=2, ran=f"ran-{name}.txt", code=0))
    shutil.copy(cluster.bundle, cluster.work / "sbatch-k8s-runtime.pyz")
    monkeypatch.chdir(cluster.work)
    assert run_command("sbatch", _main, [f"--k8s-export={platform}", f"probe-{name}.sh"]) == 0
    out = capsys.readouterr().out
    form = {"command": re.search(r"^command:\s+(.*)$", out, re.MULTILINE).group(1)}
    form.update(re.findall(r"([A-Z_]+)=(\S+)$", out.split("\ncommand:")[1], re.MULTILINE))
    return form


@pytest.mark.parametrize("platform, platform_only", [
    ("aistation", ("MASTER_ADDR", "MASTER_PORT")),
    ("task-training", ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "SLOTS")),
])
def test_an_exported_form_runs_the_script(cluster: PlatformCluster, monkeypatch, capsys,
                                          platform: str, platform_only: List[str]) -> None:
    name = f"export-{platform}"
    form = _export(cluster, monkeypatch, capsys, platform, name)
    made = (oracles.aistation("exa", 2, 1, "unused") if platform == "aistation"
            else oracles.task_training_pytorch("ext", 2, 1))
    given = {k: v for k, v in form.items() if k != "command"}
    nodes = [n._replace(env={**{k: n.env[k] for k in platform_only}, **given})
             for n in made.nodes]
    outcome = cluster.run(nodes, [], command=shlex.split(form["command"]))
    assert outcome.codes == [0, 0], outcome.logs
    check_view(cluster, made, name, outcome)
