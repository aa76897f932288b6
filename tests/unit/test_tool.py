"""``sbatch-k8s``, the project's own command, as a real process."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Optional

import pytest

REPO = Path(__file__).resolve().parents[2]


def _tool(*args: str, cwd: Optional[Path] = None, env: Optional[dict] = None
          ) -> "subprocess.CompletedProcess[str]":
    base = {k: v for k, v in os.environ.items() if not k.startswith("SBATCHK8S")}
    return subprocess.run([sys.executable, "-m", "sbatch_k8s.tool", *args], cwd=cwd or REPO,
                          env=dict(base, **(env or {})), capture_output=True, text=True,
                          timeout=120)


def test_the_console_script_is_declared():
    text = (REPO / "pyproject.toml").read_text()
    assert 'sbatch-k8s = "sbatch_k8s.tool.main:main"' in text


def test_help_lists_the_subcommands():
    done = _tool("--help")
    assert done.returncode == 0
    for name in ("config", "options", "runtime", "version", "controller"):
        assert f"\n  {name} " in done.stdout


def test_version():
    from sbatch_k8s.cli.help_text import SLURM_VERSION, VERSION
    from sbatch_k8s.runtime_bundle import build_bundle, bundle_hash

    done = _tool("version")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (f"sbatch-k8s {VERSION} (slurm {SLURM_VERSION}; runtime "
                           f"{bundle_hash(build_bundle())})\n")


def test_runtime_writes_the_bundle_pods_run(tmp_path):
    from sbatch_k8s.runtime_bundle import build_bundle, bundle_hash

    out = tmp_path / "runtime.pyz"
    done = _tool("runtime", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == build_bundle()
    size = out.stat().st_size
    assert done.stdout == f"{out}: runtime {bundle_hash(build_bundle())}, {size} bytes\n"
    assert "__main__.py" in zipfile.ZipFile(out).namelist()
    ran = subprocess.run([sys.executable, str(out)], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 2
    assert ran.stderr.startswith("usage: runtime {node,")


def test_runtime_names_an_unwritable_path(tmp_path):
    done = _tool("runtime", "-o", str(tmp_path / "missing" / "runtime.pyz"))
    assert done.returncode == 1
    assert done.stderr == (f"sbatch-k8s: error: {tmp_path / 'missing' / 'runtime.pyz'}: "
                           "No such file or directory\n")


def test_config_check_lists_every_problem(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('bogus = 1\n[local]\ngpus = "four"\n[partitions.gpu]\nnode_cpus = "96"\n'
                    '[partitions.cpu]\nimage = "python:3.12-slim"\n')
    done = _tool("config", "check", str(path))
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        f'{path}: partitions.gpu.node_cpus must be an integer, not a string ("96")',
        f'{path}: local.gpus must be an integer, not a string ("four")',
        f"{path}: config: unknown key 'bogus'",
    ]


def test_config_check_of_a_good_file():
    done = _tool("config", "check", "examples/config.toml")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("examples/config.toml: fine: partitions ")


def test_config_check_finds_the_file_the_commands_load(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('default_partition = "cpu"\n[partitions.gpu]\n')
    done = _tool("config", "check", env={"SBATCHK8S_CONFIG": str(path)})
    assert (done.returncode, done.stdout) == (
        1, f"{path}: default_partition 'cpu' is not defined\n")


def test_config_check_without_a_file(tmp_path):
    done = _tool("config", "check", env={"HOME": str(tmp_path)})
    if Path("/etc/sbatch-k8s/config.toml").exists():
        pytest.skip("this machine has /etc/sbatch-k8s/config.toml")
    assert done.returncode == 0
    assert done.stdout.startswith("no configuration file: built-in defaults (partitions debug")


@pytest.mark.parametrize("text, line", [
    ("[partitions.gpu\n", "Expected ']' at the end of a table declaration (at line 1, column "
                          "16)"),
])
def test_config_check_of_a_broken_file(tmp_path, text, line):
    path = tmp_path / "c.toml"
    path.write_text(text)
    done = _tool("config", "check", str(path))
    assert (done.returncode, done.stdout, done.stderr) == (
        1, "", f"sbatch-k8s: error: {path}: {line}\n")


def test_options_prints_the_table_per_backend():
    done = _tool("options")
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["OPTION", "LOCAL", "KUBERNETES", "WHAT", "IT", "BECOMES"]
    exclude = next(line for line in lines if line.startswith("-x, --exclude "))
    assert exclude.split()[2:4] == ["ignored", "honoured"]
    only = _tool("options", "--backend", "local").stdout.splitlines()
    exclude = next(line for line in only if line.startswith("-x, --exclude "))
    assert exclude.split()[2] == "ignored"
    assert "not chosen by name" in exclude


def test_a_usage_error_is_clicks():
    done = _tool("runtime")
    assert done.returncode == 2
    assert "Error: give -o FILE, --bootstrap PATH SCRIPT, or both" in done.stderr
    assert done.stderr.startswith("Usage: sbatch-k8s runtime")
