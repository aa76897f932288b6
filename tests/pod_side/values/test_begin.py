"""--begin: parse_time.c's _parse_time, resolved against a fixed "now"."""

import datetime

import pytest
from hypothesis import given, settings, strategies as st

from parsers.errors import ValueSyntaxError
from parsers.values.begin import BeginTime, parse_begin, resolve_begin

PROPERTY = settings.get_profile("values")
NOW = datetime.datetime(2024, 5, 10, 14, 30, 15)  # a Friday afternoon
D = datetime.datetime


@pytest.mark.parametrize(
    "text, future, past",
    [
        ("16:00", D(2024, 5, 10, 16), D(2024, 5, 10, 16)),  # sbatch.1's example
        ("10:00", D(2024, 5, 11, 10), D(2024, 5, 10, 10)),  # past today: tomorrow
        ("14:30", D(2024, 5, 11, 14, 30), D(2024, 5, 10, 14, 30)),  # same minute: tomorrow
        ("14:31:05", D(2024, 5, 10, 14, 31, 5), D(2024, 5, 10, 14, 31, 5)),
        ("4:00pm", D(2024, 5, 10, 16), D(2024, 5, 10, 16)),
        ("10:00 PM", D(2024, 5, 10, 22), D(2024, 5, 10, 22)),
        ("12:00am", D(2024, 5, 11, 0), D(2024, 5, 10, 0)),
        ("12:00pm", D(2024, 5, 11, 12), D(2024, 5, 10, 12)),
        ("midnight", D(2024, 5, 11), D(2024, 5, 10)),
        ("noon", D(2024, 5, 11, 12), D(2024, 5, 10, 12)),
        ("elevenses", D(2024, 5, 11, 11), D(2024, 5, 10, 11)),
        ("fika", D(2024, 5, 10, 15), D(2024, 5, 10, 15)),
        ("teatime", D(2024, 5, 10, 16), D(2024, 5, 10, 16)),
        ("today", D(2024, 5, 10), D(2024, 5, 10)),
        ("tomorrow", D(2024, 5, 11), D(2024, 5, 11)),
        ("tomorrowT10:00", D(2024, 5, 11, 10), D(2024, 5, 11, 10)),
        ("10:00 tomorrow", D(2024, 5, 11, 10), D(2024, 5, 11, 10)),
        ("now", NOW, NOW),
        ("now+60", D(2024, 5, 10, 14, 31, 15), D(2024, 5, 10, 14, 31, 15)),  # seconds default
        ("now+1hour", D(2024, 5, 10, 15, 30, 15), D(2024, 5, 10, 15, 30, 15)),
        ("now + 2 hours", D(2024, 5, 10, 16, 30, 15), D(2024, 5, 10, 16, 30, 15)),
        ("now-5minutes", D(2024, 5, 10, 14, 25, 15), D(2024, 5, 10, 14, 25, 15)),
        ("now+1week", D(2024, 5, 17, 14, 30, 15), D(2024, 5, 17, 14, 30, 15)),
        ("NOW+3Days", D(2024, 5, 13, 14, 30, 15), D(2024, 5, 13, 14, 30, 15)),
        ("now+1day 10:00", D(2024, 5, 11, 10), D(2024, 5, 11, 10)),
        ("2010-01-20T12:34:00", D(2010, 1, 20, 12, 34), D(2010, 1, 20, 12, 34)),  # sbatch.1
        ("2030-01-20", D(2030, 1, 20), D(2030, 1, 20)),
        ("0601", D(2024, 6, 1), D(2023, 6, 1)),  # MMDD: next occurrence (past: last)
        ("0120", D(2025, 1, 20), D(2024, 1, 20)),
        ("012025", D(2025, 1, 20), D(2025, 1, 20)),  # MMDDYY
        ("01/20/25", D(2025, 1, 20), D(2025, 1, 20)),
        ("1/5", D(2025, 1, 5), D(2024, 1, 5)),
        ("01.20", D(2025, 1, 20), D(2024, 1, 20)),
        ("01/20-12:34", D(2025, 1, 20, 12, 34), D(2024, 1, 20, 12, 34)),  # sacct's form
        ("05/10", D(2025, 5, 10), D(2024, 5, 10)),  # today at 00:00 has passed
        ("02/31/25", D(2025, 3, 3), D(2025, 3, 3)),  # mktime rolls over
    ],
)
def test_parse_and_resolve(text, future, past):
    spec = parse_begin(text)
    assert resolve_begin(spec, NOW) == future
    assert resolve_begin(spec, NOW, past=True) == past


@pytest.mark.parametrize(
    "text",
    ["", "--", "T", "Today", "TOMORROW", "Teatime", "nowhere", "now tomorrow", "now+5 tomorrow",
     "now+", "now+hour", "now+5sec", "24:00", "10:60", "10:00:60", "1:5", "13:00pm", "13:00am",
     "2024-13-01", "2024-01-32", "00/10", "1/5/2024", "12", "uts1700000000", "10:00-pm",
     "now+99999999999weeks", "16:00\n"],
)
def test_parse_begin_rejects(text):
    with pytest.raises(ValueSyntaxError):
        parse_begin(text)


def test_parsed_form_is_symbolic():
    now_plus_hour = BeginTime(date_kind="now", time_kind="now", now_offset_s=3600)
    assert parse_begin("now+1hour") == now_plus_hour
    assert parse_begin("0120") == BeginTime(date_kind="date", month=1, day=20)


UNITS = {"seconds": 1, "minutes": 60, "hours": 3600, "days": 86400, "weeks": 604800}


@PROPERTY
@given(st.integers(0, 3000), st.sampled_from(sorted(UNITS)), st.sampled_from(["+", "-"]))
def test_now_offsets(count, unit, sign):
    delta = datetime.timedelta(seconds=count * UNITS[unit]) * (1 if sign == "+" else -1)
    assert resolve_begin(parse_begin(f"now{sign}{count}{unit}"), NOW) == NOW + delta


@PROPERTY
@given(st.integers(0, 23), st.integers(0, 59))
def test_clock_times_are_in_the_next_day(hour, minute):
    moment = resolve_begin(parse_begin(f"{hour:02d}:{minute:02d}"), NOW)
    assert NOW < moment <= NOW + datetime.timedelta(days=1)


@PROPERTY
@given(st.text(alphabet="0123456789:/.-T apmnowtdyfikse+", max_size=16) | st.text(max_size=8))
def test_random_text_parses_or_raises_value_syntax_error(text):
    try:
        spec = parse_begin(text)
    except ValueSyntaxError:
        return
    assert isinstance(resolve_begin(spec, NOW), datetime.datetime)
