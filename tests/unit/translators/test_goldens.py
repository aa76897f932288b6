"""Golden cases: ``tests/cases/<case>.sbatch`` (+ ``<case>.args``) rendered for every target
must equal ``tests/cases/<case>.<target>.yaml`` byte for byte.

Warnings lead the file as ``# sbatch: warning:`` comments; a refused job's file holds the
error instead. After an intended change, regenerate with
``pytest tests/unit/translators/test_goldens.py --update-goldens`` and review the diff.
"""

from __future__ import annotations

import difflib
from typing import List

import pytest

from parsers.input_errors import SlurmInputError
from sbatch_k8s.manifest_yaml import dump_manifests
from tests.unit.translators.support import CASES_DIR, TARGET_NAMES, render_script

CASES = sorted(path.stem for path in CASES_DIR.glob("*.sbatch"))


def case_args(case: str) -> List[str]:
    """The sbatch words of ``<case>.args`` (one per line; the script goes last unless a
    line names it)."""
    path = CASES_DIR / f"{case}.args"
    return path.read_text().splitlines() if path.exists() else []


def golden_text(case: str, target: str) -> str:
    """What ``sbatch --k8s-print=objects`` of the case would print for ``target`` (plain
    ``--k8s-print`` prints the shared runtime ConfigMap before it)."""
    text = (CASES_DIR / f"{case}.sbatch").read_text()
    try:
        result = render_script(text, case_args(case), script_path=f"{case}.sbatch",
                               target=target)
    except SlurmInputError as e:
        return "".join(f"# {line}\n" for line in e.render("sbatch").splitlines())
    header = "".join(f"# sbatch: warning: {warning}\n" for warning in result.warnings)
    return header + dump_manifests(result.manifests)


def test_there_are_cases() -> None:
    assert len(CASES) >= 15


@pytest.mark.parametrize("target", TARGET_NAMES)
@pytest.mark.parametrize("case", CASES)
def test_golden(case: str, target: str, update_goldens: bool) -> None:
    path = CASES_DIR / f"{case}.{target}.yaml"
    actual = golden_text(case, target)
    if update_goldens:
        path.write_text(actual)
        return
    how = ("if the change is intended, regenerate with "
           "`pytest tests/unit/translators/test_goldens.py --update-goldens` and review "
           "`git diff tests/cases`")
    assert path.exists(), f"{path.name} is missing: {how}"
    expected = path.read_text()
    if actual != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                            f"{path.name} (expected)", "rendered"))
        pytest.fail(f"{path.name} differs from the rendering:\n{diff}\n{how}", pytrace=False)
