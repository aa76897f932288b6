"""The README and docs/ keep their promises: the option matrix matches the table, the README
fits a few screens, and every relative link resolves inside the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sbatch_k8s.docs_matrix import BEGIN, END, render_matrix

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
PAGES = [README] + sorted((REPO / "docs").glob("*.md"))
LINK = re.compile(r"\]\(([^)\s]+)\)")
#: A README that fits a screen or three.
README_LINES = 120


def test_option_matrix_is_generated_from_the_table():
    text = (REPO / "docs" / "options.md").read_text()
    inside = text.split(BEGIN, 1)[1].split(END, 1)[0]
    assert inside.strip() == render_matrix().strip(), (
        "docs/options.md's option matrix is stale: run `python -m sbatch_k8s.docs_matrix`")


def test_the_readme_is_short():
    assert len(README.read_text().splitlines()) <= README_LINES


def _anchors(page: Path) -> set:
    """GitHub's anchors of ``page``'s headings."""
    found = set()
    for line in page.read_text().splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves_inside_the_repository(page: Path):
    broken = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+://", target) or target.startswith("mailto:"):
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if REPO not in resolved.parents and resolved != REPO:
            broken.append(f"{target}: outside the repository")
        elif not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{target}: no such heading")
    assert broken == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_nothing_points_outside_the_repository(page: Path):
    assert "../shared" not in page.read_text()
