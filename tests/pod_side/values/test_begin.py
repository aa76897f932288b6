"""--begin: parse_time.c's _parse_time, resolved against a fixed "now"."""

import datetime

import pytest
from hypothesis import given, settings, strategies as st

from parsers.input_errors import ValueSyntaxError
from parsers.values.begin import BeginTime, TimeSpecError, parse_begin, resolve_begin

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
        ("noon\nbogus", D(2024, 5, 11, 12), D(2024, 5, 10, 12)),  # reading stops at \n
        ("now+1hour10:00", D(2024, 5, 10, 10), D(2024, 5, 10, 10)),  # later items override
        ("today 0101", D(2024, 1, 1), D(2024, 1, 1)),  # the year of today, in the past
        ("2030-06-01 0101", D(2030, 1, 1), D(2030, 1, 1)),  # the year of the ISO date
        ("010100", D(2025, 1, 1), D(2024, 1, 1)),  # a year 00 is no year
        ("2024-01-1", D(2024, 1, 1), D(2024, 1, 1)),
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
     "now+99999999999weeks", "0000-01-01"],
)
def test_parse_begin_rejects(text):
    with pytest.raises(ValueSyntaxError):
        parse_begin(text)


# Observed on Slurm 22.05 (sbatch --test-only --begin=<text>): the position parse_time names.
# A "now" after the first item adds its index twice: 15 is past the end of "today now+1".
@pytest.mark.parametrize("text, pos", [
    ("bogus", 0), ("10:00 bogus", 6), ("25:00", 0), ("10:61", 3), ("13:00pm", 5),
    ("13:00am", 5), ("now+", 3), ("now+1x", 4), ("now+1hourx", 9), ("now-", 3), ("nowx", 3),
    ("now x", 4), ("now+hour", 3), ("now+1hours+2", 10), ("2024-13-01", 5), ("2024-12-32", 8),
    ("2024-1x-01", 7), ("2024-01-0", 7), ("2024-0-01", 0), ("20240101", 0), ("13/01", 0),
    ("1/32", 2), ("12/5/2x", 6), ("1/1/0", 5), ("tomorrow x", 9), ("uts123", 0),
    ("uts1000000x", 0), ("1:2", 3), ("9:5", 3), ("10:0", 4), ("10:00:61", 6), ("10:00:6", 7),
    ("today now+1", 15), ("10:00 now+1hour", 15), ("noon+3", 4), ("x1", 0), ("1", 1),
    ("12", 2), ("12345678", 2), ("12am", 2), ("0101 bogus", 5), ("2024-01-01Tbogus", 11),
    ("midnightx", 8), ("Today", 1), ("1.2.x", 4), ("10:00 xm", 6), ("10:00 pmx", 8),
    ("1000:00", 2), ("a:00", 0), ("24:00", 0), ("23:60", 3), ("0", -1), ("\u00e91", 0),
    ("16:00\nbogus", 6),  # a clock time's trailing blanks include a newline
])
def test_errors_name_slurms_position(text, pos):
    with pytest.raises(TimeSpecError) as caught:
        parse_begin(text)
    assert caught.value.pos == pos
    assert caught.value.slurm_line == f"Invalid time specification (pos={pos}): {text}"


@pytest.mark.parametrize("text", ["", " ", "-", "T", "--"])
def test_no_time_at_all_has_no_position_line(text):
    """parse_time returns 0 without a message; only the option's error is printed."""
    with pytest.raises(ValueSyntaxError) as caught:
        parse_begin(text)
    assert not isinstance(caught.value, TimeSpecError)


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
