"""An option the table marks honoured or approximated on a backend changes what that backend
makes of the job (options steering sbatch itself: ``test_command_options``)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Tuple

import pytest

from parsers.options import (
    APPROXIMATED,
    BACKENDS,
    HONOURED,
    KUBERNETES,
    SBATCH,
    options_for,
)
from tests.unit.option_effects import observe
from tests.unit.option_effects.probes import COMMAND, JOB, Probe

APPLIED = (HONOURED, APPROXIMATED)


def _applied(backend: str) -> List[str]:
    return [o.long for o in options_for(SBATCH)
            if o.level(SBATCH, backend) in APPLIED and not o.hidden]


def _cases() -> List[Tuple[str, str]]:
    return [(backend, name) for backend in BACKENDS for name in _applied(backend)
            if name not in COMMAND]


def test_every_applied_option_has_a_probe():
    missing = sorted({name for backend in BACKENDS for name in _applied(backend)}
                     - set(JOB) - set(COMMAND))
    assert missing == [], "add a probe to tests/unit/option_effects/probes.py"


def test_probes_name_options_of_the_table():
    names = {o.long for o in options_for(SBATCH)}
    assert sorted((set(JOB) | set(COMMAND)) - names) == []


@pytest.fixture
def files(tmp_path: Path) -> Path:
    observe.write_probe_files(tmp_path / "files")
    return tmp_path / "files"


def _view(backend: str, args: str, files: Path, monkeypatch: pytest.MonkeyPatch):
    if backend == KUBERNETES:
        return observe.kubernetes_view(args, files)
    return observe.local_view(args, files, files.parent / "state", monkeypatch)


@pytest.mark.parametrize("backend, name", _cases())
def test_the_option_changes_what_the_backend_does(backend, name, files, monkeypatch):
    probe: Probe = JOB[name]
    without = _view(backend, probe.baseline, files, monkeypatch)
    with_it = _view(backend, f"{probe.baseline} {probe.args}", files, monkeypatch)
    assert with_it != without, f"{probe.args} changes nothing on the {backend} backend"
