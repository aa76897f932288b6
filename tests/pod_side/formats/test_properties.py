"""Properties of the cell and format rules, checked with generated inputs."""

from __future__ import annotations

import time
from datetime import datetime

from hypothesis import given
from hypothesis import strategies as st

from parsers.formats.cells import print_field, squeue_cell
from parsers.formats.sacct_format import parse_format
from parsers.formats.sacct_fields import SACCT_FIELDS
from parsers.report_options.argv import options, parse_argv
from parsers.report_options.timespec import parse_time

TEXT = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=30)
NAMES = [f.name for f in SACCT_FIELDS]


@given(TEXT, st.integers(min_value=1, max_value=40), st.booleans())
def test_squeue_cells_fill_their_width(text: str, width: int, right: bool) -> None:
    cell = squeue_cell(text, width, right, cut=True)
    assert len(cell) == width
    kept = text[:width]
    assert cell == (kept.rjust(width) if right else kept.ljust(width))


@given(TEXT, st.integers(min_value=1, max_value=40))
def test_uncut_right_cells_keep_the_whole_value(text: str, width: int) -> None:
    assert squeue_cell(text, width, True, cut=False).strip(" ") == text.strip(" ")


@given(TEXT, st.integers(min_value=-30, max_value=30).filter(bool))
def test_sacct_string_cells(text: str, width: int) -> None:
    cell = print_field(text, width)
    assert len(cell) == abs(width) + 1 and cell.endswith(" ")
    if len(text) > abs(width):
        assert cell.strip(" ").endswith("+")


@given(st.lists(st.sampled_from(NAMES), min_size=1, max_size=8))
def test_every_field_name_reads_back(names: list) -> None:
    picked = parse_format(",".join(names))
    # a name that is a prefix of an earlier one (JobID / JobIDRaw) resolves to the first
    expected = [next(f.name for f in SACCT_FIELDS if f.name.lower().startswith(n.lower()))
                for n in names]
    assert [f.name for f in picked] == expected


@given(st.datetimes(min_value=datetime(2001, 1, 1), max_value=datetime(2037, 1, 1)))
def test_iso_timestamps_are_local_wall_clock_times(moment: datetime) -> None:
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    expected = int(time.mktime(moment.timetuple()[:6] + (0, 0, -1)))
    assert parse_time(text, now=0) == expected
    assert parse_time(text.replace("T", " ")[:16], now=0) == expected - moment.second


@given(st.lists(st.sampled_from(["-l", "-x5", "word", "--user=u", "other"]), max_size=8))
def test_operands_keep_their_order(words: list) -> None:
    table = options(("long/l", "0", "long"), ("-/x", "1", "x"), ("user", "1", "user"))
    given_options, operands = parse_argv("t", table, words)
    assert operands == [w for w in words if not w.startswith("-")]
    assert len(given_options) == len(words) - len(operands)
