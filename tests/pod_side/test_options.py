"""The option table covers Slurm's options and is consistent with what reads it."""

from __future__ import annotations

import re

import pytest

from parsers.input_errors import SlurmInputError
from parsers.jobspec import JobSpec, SubmitOptions, field_names
from parsers.option_values import READERS, read_value
from parsers.options import (
    APPROXIMATED,
    HONOURED,
    OPTIONS,
    SBATCH,
    SRUN,
    SUPPORT_LEVELS,
    env_sources,
    long_names,
    options_for,
)
from tests.data import SLURM_SPEC_EXCERPT


def _spec_text() -> str:
    """The option and variable lists of the Slurm reference (an excerpt kept in tests/data)."""
    return SLURM_SPEC_EXCERPT.read_text()


def test_every_sbatch_option_of_the_spec_is_in_the_table():
    text = _spec_text()
    section = text[text.index("### 1.4"):text.index("srun-only long options")]
    names = re.findall(r"(?:^|\s)([a-z][a-z0-9-]+)(?:/-[A-Za-z])?\((?:req|opt|none)", section)
    assert len(names) > 100
    missing = sorted(n for n in set(names) if n not in long_names(SBATCH))
    assert missing == []


def test_every_srun_only_option_of_the_spec_is_in_the_table():
    text = _spec_text()
    section = text[text.index("srun-only long options"):text.index("[slurm_opt.c]. srun also")]
    listed = section.split(":", 1)[1]
    names = set(re.findall(r"([a-z][a-z0-9_-]+)(?:/-[A-Za-z])?", listed)) - {"req"}
    missing = sorted(n for n in names if n not in long_names(SRUN))
    assert missing == []


def test_every_sbatch_input_variable_of_the_spec_is_read():
    text = _spec_text()
    section = text[text.index("### 1.7"):text.index("Note: **there is no SBATCH_NODES")]
    wanted = set(re.findall(r"\b(SBATCH_[A-Z0-9_]+)", section))
    wanted -= {"SBATCH_POWER"}  # no --power option exists any more (removed in Slurm 23.02)
    read = {var for var, _ in env_sources(SBATCH)}
    assert sorted(wanted - read) == []


def test_rows_are_well_formed():
    for option in OPTIONS:
        assert option.kind in READERS, option
        for command in (SBATCH, SRUN):
            assert option.level(command) in SUPPORT_LEVELS + (None,), option
        assert option.note, option
        if option.short:
            assert len(option.short) == 1


def test_honoured_sbatch_options_reach_a_field():
    """Nothing honoured or approximated may be dropped on the way to the JobSpec."""
    fields = field_names(JobSpec) | field_names(SubmitOptions)
    lost = [o.long for o in options_for(SBATCH)
            if o.level(SBATCH) in (HONOURED, APPROXIMATED)
            and o.field not in fields and o.long not in ("wrap", "help", "usage", "version")]
    assert lost == []


def test_short_letters_are_unique_per_command():
    for command in (SBATCH, SRUN):
        letters = [o.short for o in options_for(command) if o.short]
        assert len(letters) == len(set(letters)), command


@pytest.mark.parametrize("long, raw, expected", [
    # srun's parse_int(…, false) readers take 0; without an argument they mean 1.
    ("kill-on-bad-exit", "0", 0),
    ("kill-on-bad-exit", None, 1),
    ("immediate", "0", 0),
    ("immediate", None, 1),
    ("relative", " +1", 1),
])
def test_srun_numeric_readers(long, raw, expected):
    assert read_value(long_names(SRUN)[long], raw) == expected


@pytest.mark.parametrize("long, raw, line", [
    ("kill-on-bad-exit", "-1", 'Invalid numeric value "-1" for --kill-on-bad-exit.'),
    ("immediate", "x", 'Invalid numeric value "x" for immediate.'),
    ("relative", "1\u0660", 'Invalid numeric value "1\u0660" for --relative.'),
    ("ntasks", "99999999999", "Numeric argument (99999999999) too large for --ntasks."),
])
def test_srun_numeric_reader_errors(long, raw, line):
    with pytest.raises(SlurmInputError) as e:
        read_value(long_names(SRUN)[long], raw)
    assert (list(e.value.lines), e.value.exit_code) == ([line], 1)
