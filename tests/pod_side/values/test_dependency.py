"""Dependencies: slurmctld's _parse_dependency_str and the Dependency= text it rebuilds."""

import pytest
from hypothesis import given, settings, strategies as st

from parsers.input_errors import ValueSyntaxError
from parsers.values.dependency import (
    DependencyClause,
    DependencySpec,
    DependencyTarget,
    parse_dependency,
)

PROPERTY = settings.get_profile("values")
T = DependencyTarget


@pytest.mark.parametrize(
    "text, clauses, require_all",
    [
        ("afterok:20:21,afterany:23",  # sbatch.1
         [("afterok", [T(20, None, 0), T(21, None, 0)]), ("afterany", [T(23, None, 0)])], True),
        ("afterok:20:21?afterany:23",
         [("afterok", [T(20, None, 0), T(21, None, 0)]), ("afterany", [T(23, None, 0)])], False),
        ("after:123+10", [("after", [T(123, None, 10)])], True),
        ("after:1+5:2", [("after", [T(1, None, 5), T(2, None, 0)])], True),
        ("afterok:123_4", [("afterok", [T(123, 4, 0)])], True),
        ("afterok:123_4:123_8", [("afterok", [T(123, 4, 0), T(123, 8, 0)])], True),
        ("afterok:123_*", [("afterok", [T(123, None, 0, True)])], True),
        ("afterok:7_[1-3]+10",  # expanded; the delay stays on the last task
         [("afterok", [T(7, 1, 0), T(7, 2, 0), T(7, 3, 10)])], True),
        ("aftercorr:5", [("aftercorr", [T(5, None, 0)])], True),
        ("afternotok:5", [("afternotok", [T(5, None, 0)])], True),
        ("afterburstbuffer:5", [("afterburstbuffer", [T(5, None, 0)])], True),
        ("AFTERANY:5", [("afterany", [T(5, None, 0)])], True),
        ("afterok:5(unfulfilled)", [("afterok", [T(5, None, 0)])], True),  # squeue's form
        ("singleton", [("singleton", [])], True),
        ("Singleton(failed),afterok:1", [("singleton", []), ("afterok", [T(1, None, 0)])], True),
        ("123", [("afterany", [T(123, None, 0)])], True),  # old form: a bare id is afterany
        ("123,456", [("afterany", [T(123, None, 0)]), ("afterany", [T(456, None, 0)])], True),
        ("123_4", [("afterany", [T(123, 4, 0)])], True),
        ("afterok:5,123", [("afterok", [T(5, None, 0)]), ("afterany", [T(123, None, 0)])], True),
        ("afterok:1?2", [("afterok", [T(1, None, 0)]), ("afterany", [T(2, None, 0)])], False),
        ("", [], True),
        ("0", [], True),
    ],
)
def test_parse_dependency(text, clauses, require_all):
    expected = DependencySpec(
        tuple(DependencyClause(kind, tuple(targets)) for kind, targets in clauses), require_all
    )
    assert parse_dependency(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "afterok:1,afterany:2?afterok:3",  # one separator kind per expression
        "123,afterok:5",  # Slurm reads the rest as one typed clause and fails
        "123?456",
        "afterok:", "afterok:1,", ",afterok:1", "afterok:0", "after:1+0", "after:1+", "foo:1",
        "expand:1", "afterok:1_", "afterok:1_x", "afterok:x", "123_[1-3]", "123+5",
        "afterok:1_[]", "afterok:1(unfulfilled", "singleton:1", "singletonx", "afterok: 1",
        "afterok:-1", "afterok:1 ", "afterok:99999999999",
    ],
)
def test_parse_dependency_rejects(text):
    with pytest.raises(ValueSyntaxError):
        parse_dependency(text)


@pytest.mark.parametrize(
    "text, shown",
    [
        ("afterok:20:21,afterany:23", "afterok:20,afterok:21,afterany:23"),
        ("afterok:20:21?afterany:23", "afterok:20?afterok:21?afterany:23"),
        ("after:123+10", "after:123+10"),
        ("afterok:20_*", "afterok:20_*"),
        ("afterok:7_[1-2]", "afterok:7_1,afterok:7_2"),
        ("123,456", "afterany:123,afterany:456"),
        ("singleton", "singleton"),
        ("", ""),
    ],
)
def test_format(text, shown):
    assert parse_dependency(text).format() == shown


KIND = st.sampled_from(
    ["after", "afterany", "afterburstbuffer", "aftercorr", "afternotok", "afterok"]
)
TARGET = st.builds(
    DependencyTarget,
    st.integers(1, 10**9),
    st.one_of(st.none(), st.integers(0, 10**6)),
    st.integers(0, 10**4),
)


@PROPERTY
@given(
    st.lists(st.tuples(KIND, st.lists(TARGET, min_size=1, max_size=3)), min_size=1, max_size=4),
    st.booleans(),
)
def test_format_parses_back(clauses, require_all):
    spec = DependencySpec(tuple(DependencyClause(k, tuple(t)) for k, t in clauses), require_all)
    again = parse_dependency(spec.format())
    assert again.format() == spec.format()
    targets = [t for c in spec.clauses for t in c.targets]
    assert [t for c in again.clauses for t in c.targets] == targets


@PROPERTY
@given(st.text(alphabet="afterokny:,?_*+[]-()0123456789singl", max_size=20) | st.text(max_size=8))
def test_random_text_parses_or_raises_value_syntax_error(text):
    try:
        parse_dependency(text)
    except ValueSyntaxError:
        pass
