"""Durations: parse_time.c's time_str2secs/time_str2mins and the three printers."""

import pytest
from hypothesis import given, settings, strategies as st

from parsers.input_errors import ValueSyntaxError
from parsers.values.time import (
    format_duration_hms,
    format_elapsed,
    format_time_limit,
    parse_duration_s,
    parse_time_limit_min,
)

PROPERTY = settings.get_profile("values")


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("0", 0),
        ("60", 3600),  # minutes (submitit's --time=60)
        ("2000", 120000),
        ("1:30", 90),  # minutes:seconds
        ("0:90", 90),  # fields are not range-checked
        ("100:00:00", 360000),  # hours:minutes:seconds (bigscience)
        ("3-00:00:00", 259200),
        ("0-00:15:00", 900),
        ("1-0", 86400),  # days-hours
        ("1-", 86400),  # sscanf leaves the hour at 0
        ("1-2:3", 93780),  # days-hours:minutes
        ("1-2:3:4", 93784),
        ("-1", None),
        ("INFINITE", None),
        ("unlimited", None),
        ("Infinite", None),
    ],
)
def test_parse_duration_s(text, seconds):
    assert parse_duration_s(text) == seconds


@pytest.mark.parametrize(
    "text",
    ["", "abc", "1:2:3:4", "1-2-3", "1:", ":1", "1-2:", "1-:2", "1::2", "-", "-5", "-01",
     "-1-0", "1--2", " 1", "1 ", "1.5", "+5", "infinity", "99999999999", "1-2:3:4:5"],
)
def test_parse_duration_s_rejects(text):
    with pytest.raises(ValueSyntaxError):
        parse_duration_s(text)


@pytest.mark.parametrize(
    "text, minutes",
    [("60", 60), ("0:30", 1), ("0:61", 2), ("1:00:01", 61), ("0", 0), ("UNLIMITED", 0),
     ("-1", 0), ("2-12", 3600)],
)
def test_parse_time_limit_min_rounds_up(text, minutes):
    assert parse_time_limit_min(text) == minutes


@pytest.mark.parametrize(
    "seconds, text",
    [(0, "0:00"), (769, "12:49"), (6201, "1:43:21"), (3600, "1:00:00"), (90061, "1-01:01:01"),
     (365 * 86400, "365-00:00:00"), (365 * 86400 + 1, "INVALID"), (-1, "INVALID")],
)
def test_format_elapsed(seconds, text):
    assert format_elapsed(seconds) == text


@pytest.mark.parametrize(
    "minutes, text",
    [(30, "00:30:00"), (60, "01:00:00"), (1500, "1-01:00:00"), (0, "UNLIMITED"),
     (None, "NOT_SET"), (-5, "INVALID")],
)
def test_format_time_limit(minutes, text):
    assert format_time_limit(minutes) == text


@pytest.mark.parametrize(
    "seconds, text",
    [(3, "00:00:03"), (93784, "1-02:03:04"), (86399, "23:59:59"), (-1, "INVALID")],
)
def test_format_duration_hms(seconds, text):
    assert format_duration_hms(seconds) == text


@PROPERTY
@given(st.text(alphabet="0123456789-:INFTUiLMl ", max_size=14) | st.text(max_size=10))
def test_random_text_parses_or_raises_value_syntax_error(text):
    try:
        seconds = parse_duration_s(text)
    except ValueSyntaxError:
        return
    assert seconds is None or 0 <= seconds < 2**31


@PROPERTY
@given(st.integers(min_value=0, max_value=365 * 86400))
def test_printed_times_parse_back(seconds):
    assert parse_duration_s(format_elapsed(seconds)) == seconds
    assert parse_duration_s(format_duration_hms(seconds)) == seconds


@PROPERTY
@given(st.integers(min_value=1, max_value=10**6))
def test_printed_limits_parse_back(minutes):
    assert parse_time_limit_min(format_time_limit(minutes)) == minutes
