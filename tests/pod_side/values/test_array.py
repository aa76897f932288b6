"""Job arrays: slurm_parse_array_tok, job_mgr.c's SLURM_ARRAY_* values, squeue's display."""

import pytest
from hypothesis import given, settings, strategies as st

from parsers.input_errors import ValueSyntaxError
from parsers.values.array import ArrayRange, ArraySpec, format_indices, parse_array

PROPERTY = settings.get_profile("values")


@pytest.mark.parametrize(
    "text, ranges, max_running",
    [
        ("7", [(7, 7, 1)], None),
        ("0-15", [(0, 15, 1)], None),
        ("0-15:4", [(0, 15, 4)], None),
        ("1,3,7", [(1, 1, 1), (3, 3, 1), (7, 7, 1)], None),
        ("0-15%4", [(0, 15, 1)], 4),
        ("1-3,7%2", [(1, 3, 1), (7, 7, 1)], 2),
        ("1-3%2,7", [(1, 3, 1), (7, 7, 1)], 2),  # Slurm takes the first %
        ("1-5%0", [(1, 5, 1)], None),  # %0: no limit (job_mgr.c ignores values <= 0)
        ("[1-5]", [(1, 5, 1)], None),  # brackets tolerated
        ("[1]-5]", [(1, 5, 1)], None),
        ("[0-20:5]%3", [(0, 20, 5)], 3),
        ("1,,3,", [(1, 1, 1), (3, 3, 1)], None),  # strtok skips empty items
        ("0", [(0, 0, 1)], None),
    ],
)
def test_parse_array(text, ranges, max_running):
    assert parse_array(text) == ArraySpec(tuple(ArrayRange(*r) for r in ranges), max_running)


@pytest.mark.parametrize(
    "text",
    ["", "5-1", "1-5:0", "%5", "abc", "SRR8652107,SRR8652108", "-1", "1-", "0-", "+5", " 5",
     "1-5%", "1-5%x", "1-5%2x", "1 2", "1]2", "2147483648", "[[1]", "1-5:2:3"],
)
def test_parse_array_rejects(text):
    with pytest.raises(ValueSyntaxError):
        parse_array(text)


@pytest.mark.parametrize(
    "text, indices, count, lo, hi, step",
    [
        ("0-15:4", (0, 4, 8, 12), 4, 0, 12, 4),  # slurm.md: 0-15:4 is 0,4,8,12
        ("1-3", (1, 2, 3), 3, 1, 3, 1),
        ("1,3,7", (1, 3, 7), 3, 1, 7, 1),  # a list has step 1
        ("5,1-3", (1, 2, 3, 5), 4, 1, 5, 1),
        ("1-10:2,20-30:5", (1, 3, 5, 7, 9, 20, 25, 30), 8, 1, 30, 2),  # first ':' wins
        ("1-3,2-4", (1, 2, 3, 4), 4, 1, 4, 1),
    ],
)
def test_array_env_values(text, indices, count, lo, hi, step):
    spec = parse_array(text)
    assert spec.indices() == indices
    env = (spec.count(), spec.min_index, spec.max_index, spec.step_value())
    assert env == (count, lo, hi, step)


def test_large_array_is_cheap():
    spec = parse_array("0-9999")
    assert spec.count() == 10000 and spec.max_index == 9999
    assert parse_array("0-2000000000").max_index == 2000000000  # no expansion needed


@pytest.mark.parametrize(
    "text, shown",
    [
        ("0-15:4", "0,4,8,12"),  # too few indices for the stepped display
        ("0-30:3", "0-30:3"),
        ("1-3,7", "1-3,7"),
        ("5-1024%4", "5-1024%4"),  # squeue's pending remainder 1080_[5-1024%4]
        ("1,2", "1-2"),
        ("0-100:20", "0-100:20"),
        ("0-80:20", "0,20,40,60,80"),  # five indices: ranges
        ("0-10:2", "0,2,4,6,8,10"),  # spans only 10: ranges
    ],
)
def test_format(text, shown):
    assert parse_array(text).format() == shown
    assert str(parse_array(text)) == shown


def test_format_indices_truncates_like_squeue():
    text = format_indices(list(range(0, 200, 3)) + [1000], 5, bitstr_len=64)
    assert text.endswith("...%5") and len(text) == 60 + 3 + 2


@PROPERTY
@given(
    st.lists(
        st.tuples(st.integers(0, 3000), st.integers(0, 300), st.integers(1, 50)),
        min_size=1, max_size=6,
    ),
    st.one_of(st.none(), st.integers(1, 100)),
)
def test_format_round_trip(items, limit):
    text = ",".join(f"{a}-{a + n}:{s}" for a, n, s in items) + (f"%{limit}" if limit else "")
    spec = parse_array(text)
    shown = parse_array(spec.format())
    assert shown.indices() == spec.indices()
    assert shown.max_running == limit


@PROPERTY
@given(st.text(alphabet="0123456789,-:%[] ", max_size=16) | st.text(max_size=8))
def test_random_text_parses_or_raises_value_syntax_error(text):
    try:
        spec = parse_array(text)
    except ValueSyntaxError:
        return
    assert spec.min_index <= spec.max_index
