"""Fixtures shared by the unit tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory and home of the test's own, with no configuration, kubeconfig or
    state of the machine reaching the command under test."""
    for name in ("SBATCHK8S_CONFIG", "SBATCHK8S_DEBUG", "XDG_CONFIG_HOME", "KUBECONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SBATCHK8S_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    return tmp_path
