"""The README keeps its promises: the option matrix matches the table."""

from __future__ import annotations

from pathlib import Path

from sbatch_k8s.docs_matrix import BEGIN, END, render_matrix

README = Path(__file__).resolve().parents[2] / "README.md"


def test_option_matrix_is_generated_from_the_table():
    text = README.read_text()
    inside = text.split(BEGIN, 1)[1].split(END, 1)[0]
    assert inside.strip() == render_matrix().strip(), (
        "README.md's option matrix is stale: run `python -m sbatch_k8s.docs_matrix`")
