"""translators are pure: same input, same bytes; no clock, randomness, client or I/O."""

from __future__ import annotations

import random
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sbatch_k8s.manifest_yaml import dump_manifests
from tests.unit.translators.support import TARGET_NAMES, render_script, script

TRANSLATORS = Path(__file__).resolve().parents[3] / "translators"
TEXT = script("-N 2", "--array=0-3", "--exclusive", "-p gpu", "--gres=gpu:a100:2",
              "--constraint=a|b")


def _forbidden(*args: object, **kwargs: object) -> None:
    raise AssertionError("translators must not read the clock or draw random numbers")


@pytest.mark.parametrize("target", TARGET_NAMES)
def test_rendering_is_deterministic_and_reads_no_clock(target: str, monkeypatch) -> None:
    first = dump_manifests(render_script(TEXT, target=target).manifests)
    for module, name in [(time, "time"), (time, "time_ns"), (time, "monotonic"),
                         (time, "localtime"), (time, "gmtime"), (time, "strftime"),
                         (random, "random"), (random, "randint"), (random, "choice")]:
        monkeypatch.setattr(module, name, _forbidden)
    second = dump_manifests(render_script(TEXT, target=target).manifests)
    assert first == second


def test_no_kubernetes_client_and_no_io_in_translators() -> None:
    forbidden = re.compile(r"^\s*(import|from)\s+(kubernetes|yaml|click|sqlite_utils|"
                           r"subprocess|socket|urllib|requests)\b|\bopen\(", re.M)
    for path in TRANSLATORS.rglob("*.py"):
        assert not forbidden.search(path.read_text()), path


def test_modules_stay_small() -> None:
    for path in TRANSLATORS.rglob("*.py"):
        assert len(path.read_text().splitlines()) <= 300, path


def test_importing_translators_is_cheap() -> None:
    code = ("import sys, translators; "
            "print(sorted(m for m in ('yaml', 'lark', 'translators.plan') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=TRANSLATORS.parent, check=True).stdout
    assert out.strip() == "[]"
