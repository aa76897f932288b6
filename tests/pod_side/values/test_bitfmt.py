"""Slurm bitmap range strings: bitstring.c's bitfmt2int and bit_fmt."""

import pytest
from hypothesis import given, settings, strategies as st

from parsers.input_errors import ValueSyntaxError
from parsers.values.bitfmt import format_bitfmt, parse_bitfmt

PROPERTY = settings.get_profile("values")


@pytest.mark.parametrize(
    "text, indices",
    [
        ("5", (5,)),
        ("1,5,9", (1, 5, 9)),
        ("0-3,7", (0, 1, 2, 3, 7)),
        ("9,1,5", (1, 5, 9)),
        ("1-3,2-4", (1, 2, 3, 4)),
        ("1-15:4", (1, 5, 9, 13)),  # sbatch.1: 1-15:4 is 1,5,9,13
        ("1-13:4", (1, 5, 9)),  # Slurm's stepped form leaves the last value out
        ("0-30:10", (0, 10, 20)),
    ],
)
def test_parse_bitfmt(text, indices):
    assert parse_bitfmt(text) == indices


@pytest.mark.parametrize(
    "text", ["", ",1", "1,", "1,,5", "1-3-5", "3-1", "1-3:0", "5-5:1", "1-5:2,7", "a", "1 ",
             "0-99999999"],
)
def test_parse_bitfmt_rejects(text):
    with pytest.raises(ValueSyntaxError):
        parse_bitfmt(text)


def test_parse_bitfmt_bound():
    assert parse_bitfmt("1-20:4", max_index=17) == (1, 5, 9, 13, 17)
    with pytest.raises(ValueSyntaxError):
        parse_bitfmt("1-20", max_index=19)


@pytest.mark.parametrize(
    "indices, text",
    [([], ""), ([3], "3"), ([1, 2], "1-2"), ([1, 2, 3, 7, 9, 10], "1-3,7,9-10"),
     ([5, 1, 5], "1,5")],
)
def test_format_bitfmt(indices, text):
    assert format_bitfmt(indices) == text


@PROPERTY
@given(st.sets(st.integers(min_value=0, max_value=3000), min_size=1, max_size=60))
def test_round_trip(indices):
    assert parse_bitfmt(format_bitfmt(indices)) == tuple(sorted(indices))


@PROPERTY
@given(st.text(alphabet="0123456789,-: ", max_size=16))
def test_random_text_parses_or_raises_value_syntax_error(text):
    try:
        parse_bitfmt(text)
    except ValueSyntaxError:
        pass
