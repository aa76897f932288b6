"""``sbatch --k8s-lint`` reports each option at the level of the backend sbatch would use and
shows the other backend's where it differs."""

from __future__ import annotations

import pytest

from sbatch_k8s.cli.common import run_command
from sbatch_k8s.cli.sbatch import _main

SCRIPT = "#!/bin/sh\n#SBATCH --dependency=singleton\n#SBATCH --tmp=1G\ntrue\n"


@pytest.fixture
def work(private_home):
    (private_home / "job.sh").write_text(SCRIPT)
    return private_home


def _lint(monkeypatch, capsys, backend):
    monkeypatch.setenv("SBATCHK8S_BACKEND", backend)
    code = run_command("sbatch", _main, ["--k8s-lint", "job.sh"])
    return code, capsys.readouterr().out.splitlines()


def test_kubernetes_levels(work, monkeypatch, capsys):
    code, lines = _lint(monkeypatch, capsys, "kubernetes")
    assert code == 0
    assert lines[0].split() == ["WHERE", "OPTION", "SUPPORT", "WHAT", "IT", "BECOMES"]
    assert lines[1].split()[:3] == ["job.sh:2", "--dependency=singleton", "honoured"]
    assert not lines[1].endswith("]")  # the same level on both backends
    assert lines[2].split()[:3] == ["job.sh:3", "--tmp=1G", "honoured"]
    assert lines[2].endswith("[local: ignored]")
    assert lines[3] == "note: support levels of the kubernetes backend, the one sbatch would use"


def test_local_levels(work, monkeypatch, capsys):
    code, lines = _lint(monkeypatch, capsys, "local")
    assert code == 0
    assert lines[1].split()[:3] == ["job.sh:2", "--dependency=singleton", "honoured"]
    assert not lines[1].endswith("]")
    assert lines[2].split()[:3] == ["job.sh:3", "--tmp=1G", "ignored"]
    assert "no disk space is set aside on this machine" in lines[2]
