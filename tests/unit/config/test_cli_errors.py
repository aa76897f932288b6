"""Errors a new user hits before any job runs: each one line naming what is wrong where."""

from __future__ import annotations

import pytest

from sbatch_k8s.cli.common import run_command
from sbatch_k8s.cli.sbatch import _main


@pytest.fixture
def work(tmp_path, monkeypatch):
    for name in ("SBATCHK8S_CONFIG", "SBATCHK8S_DEBUG", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SBATCHK8S_BACKEND", "local")
    monkeypatch.setenv("SBATCHK8S_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.sh").write_text("#!/bin/sh\ntrue\n")
    return tmp_path


def _sbatch(args, capsys):
    code = run_command("sbatch", _main, args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("toml, message", [
    ('[local]\ngpus = "four"\n', 'local.gpus must be an integer, not a string ("four")'),
    ('[partitions.debug]\nnode_cpus = "96"\n',
     'partitions.debug.node_cpus must be an integer, not a string ("96")'),
])
def test_a_mistyped_configuration_value_names_the_key(work, monkeypatch, capsys, toml, message):
    (work / "c.toml").write_text(toml)
    monkeypatch.setenv("SBATCHK8S_CONFIG", str(work / "c.toml"))
    assert _sbatch(["--test-only", "job.sh"], capsys) == (
        1, "", f"sbatch: error: {work / 'c.toml'}: {message}\n")


@pytest.mark.parametrize("name, problem", [
    ("statefile", "{path} exists and is not a directory"),
    ("statefile/sub", "a part of the path is a file, not a directory"),
])
def test_a_state_directory_that_cannot_be_one_is_named(work, monkeypatch, capsys, name,
                                                       problem):
    (work / "statefile").write_text("")
    target = work / name
    monkeypatch.setenv("SBATCHK8S_STATE_DIR", str(target))
    code, out, err = _sbatch(["job.sh"], capsys)
    assert (code, out) == (1, "")
    assert err == (f"sbatch: error: state directory {target} (from SBATCHK8S_STATE_DIR): "
                   f"{problem.format(path=target)}\n")


def test_debug_prints_the_traceback_then_the_line(work, monkeypatch, capsys):
    def broken(argv):
        raise RuntimeError("boom")

    assert run_command("sbatch", broken, []) == 1
    assert capsys.readouterr().err == ("sbatch: error: internal error: RuntimeError: boom "
                                       "(set SBATCHK8S_DEBUG=1 for details)\n")
    monkeypatch.setenv("SBATCHK8S_DEBUG", "1")
    assert run_command("sbatch", broken, []) == 1
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):\n")
    assert err.endswith('RuntimeError: boom\nsbatch: error: internal error: RuntimeError: boom\n')
