"""Every format letter and field name Slurm 22.05 knows is one of ours, every one it refuses
is refused here: sinfo ``-o``/``-O``, squeue ``-o``/``-O`` for jobs and (``-s``) steps, sacct
``--format`` (issue 18, item 4).

The lists were recorded from the real Slurm 22.05.8 (``tests/data/format_fields.py``);
``tests/conformance/test_format_fields.py`` compares what each one prints with the real
one's output.
"""

from __future__ import annotations

import pytest

from parsers.input_errors import SlurmInputError
from parsers.formats.sacct_format import parse_format as parse_sacct_format
from parsers.formats.sinfo_table import sinfo_field_by_letter, sinfo_field_by_name
from parsers.formats.squeue_fields import job_field_by_letter, job_field_by_name
from parsers.formats.squeue_steps import step_field_by_letter, step_field_by_name
from tests.data.format_fields import (BOGUS, SACCT_NAMES, SINFO_LETTERS, SINFO_NAMES,
                                      SINFO_NO_LETTERS, SQUEUE_NAMES, SQUEUE_NO_NAMES,
                                      STEP_LETTERS, STEP_NAMES, STEP_NO_LETTERS, STEP_NO_NAMES)

@pytest.mark.parametrize("letter", SINFO_LETTERS)
def test_sinfo_letter(letter: str) -> None:
    assert sinfo_field_by_letter(letter) is not None


@pytest.mark.parametrize("letter", SINFO_NO_LETTERS)
def test_sinfo_refuses_letter(letter: str) -> None:
    assert sinfo_field_by_letter(letter) is None


@pytest.mark.parametrize("name", SINFO_NAMES)
def test_sinfo_name(name: str) -> None:
    assert sinfo_field_by_name(name) is not None or name == "All"


def test_sinfo_refuses_an_unknown_name() -> None:
    assert sinfo_field_by_name(BOGUS) is None


@pytest.mark.parametrize("letter", [chr(c) for c in range(ord("A"), ord("z") + 1)
                                    if chr(c).isalpha()])
def test_squeue_letter(letter: str) -> None:
    assert job_field_by_letter(letter) is not None      # squeue has every letter


@pytest.mark.parametrize("name", SQUEUE_NAMES)
def test_squeue_name(name: str) -> None:
    assert job_field_by_name(name) is not None


@pytest.mark.parametrize("name", SQUEUE_NO_NAMES + (BOGUS,))
def test_squeue_refuses_name(name: str) -> None:
    assert job_field_by_name(name) is None


@pytest.mark.parametrize("letter", STEP_LETTERS)
def test_step_letter(letter: str) -> None:
    assert step_field_by_letter(letter) is not None


@pytest.mark.parametrize("letter", STEP_NO_LETTERS)
def test_step_refuses_letter(letter: str) -> None:
    assert step_field_by_letter(letter) is None


@pytest.mark.parametrize("name", STEP_NAMES)
def test_step_name(name: str) -> None:
    assert step_field_by_name(name) is not None


@pytest.mark.parametrize("name", STEP_NO_NAMES + (BOGUS,))
def test_step_refuses_name(name: str) -> None:
    assert step_field_by_name(name) is None


@pytest.mark.parametrize("name", SACCT_NAMES)
def test_sacct_name(name: str) -> None:
    assert [spec.name for spec in parse_sacct_format(name)] == [name]


def test_sacct_refuses_an_unknown_name() -> None:
    with pytest.raises(SlurmInputError) as e:
        parse_sacct_format(BOGUS)
    assert e.value.lines == (f'Invalid field requested: "{BOGUS}"',)
