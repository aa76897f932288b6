"""Memory sizes: proc_args.c's str_to_mbytes."""

import pytest
from hypothesis import given, settings, strategies as st

from parsers.input_errors import ValueSyntaxError
from parsers.values.memory import parse_memory_mb

PROPERTY = settings.get_profile("values")


@pytest.mark.parametrize(
    "text, mem_mb",
    [
        ("0", 0),  # --mem=0: all memory of the node
        ("4096", 4096),  # no unit: MiB
        ("2M", 2), ("2m", 2), ("2MB", 2), ("2mb", 2),
        ("4G", 4096), ("4g", 4096), ("4GB", 4096), ("4Gb", 4096),
        ("1T", 1048576), ("1tb", 1048576),
        ("1K", 1), ("512k", 1), ("1024K", 1), ("1025K", 2), ("0K", 0),  # K rounds up
        ("+5", 5), (" 5G", 5120), ("\t7", 7), ("-0", 0),  # what strtoll accepts
    ],
)
def test_parse_memory_mb(text, mem_mb):
    assert parse_memory_mb(text) == mem_mb


@pytest.mark.parametrize(
    "text",
    ["", "G", "12Q", "1.5G", "4MiB", "4KiB", "4 G", "4G ", "-5", "-1G", "0x10", "4GBB",
     "4P", "99999999999999999999", "9007199254740992G"],
)
def test_parse_memory_mb_rejects(text):
    with pytest.raises(ValueSyntaxError):
        parse_memory_mb(text)


@PROPERTY
@given(st.text(alphabet="0123456789kKmMgGtTbB+- .Q", max_size=12) | st.text(max_size=8))
def test_random_text_parses_or_raises_value_syntax_error(text):
    try:
        assert parse_memory_mb(text) >= 0
    except ValueSyntaxError:
        pass


@PROPERTY
@given(st.integers(min_value=0, max_value=2**40), st.sampled_from(["", "M", "G", "T", "K"]))
def test_units(number, unit):
    factor = {"": 1, "M": 1, "G": 1024, "T": 1024 * 1024}
    expected = -(-number // 1024) if unit == "K" else number * factor[unit]
    assert parse_memory_mb(f"{number}{unit}") == expected
