"""Node counts: proc_args.c's verify_node_count and str_to_nodes."""

import pytest
from hypothesis import given, settings, strategies as st

from parsers.input_errors import ValueSyntaxError
from parsers.values.nodes import NodeRange, parse_node_range

PROPERTY = settings.get_profile("values")


@pytest.mark.parametrize(
    "text, nodes",
    [
        ("4", NodeRange(4, 4)),  # one number: min = max
        ("2-8", NodeRange(2, 8)),
        ("4-4", NodeRange(4, 4)),
        ("0", NodeRange(0, 0)),  # refusing 0 is the caller's job
        ("1k", NodeRange(1024, 1024)),
        ("2K-1m", NodeRange(2048, 1048576)),
        ("1km", NodeRange(1073741824, 1073741824)),  # str_to_nodes allows k then m
        ("-5", NodeRange(1, 5)),  # empty minimum is 1
        ("2-0", NodeRange(2, 0)),  # max 0: no maximum
        ("1-15:4", NodeRange(1, 13, (1, 5, 9, 13))),  # size list: sbatch.1's example
        ("1,5,9", NodeRange(1, 9, (1, 5, 9))),
        ("1-3,7", NodeRange(1, 7, (1, 2, 3, 7))),
        ("1-13:4", NodeRange(1, 9, (1, 5, 9))),  # bitfmt2int leaves the stepped end out
        ("16383,2", NodeRange(2, 16383, (2, 16383))),
    ],
)
def test_parse_node_range(text, nodes):
    assert parse_node_range(text) == nodes


@pytest.mark.parametrize(
    "text",
    ["", "abc", "5-", "-", "5-2", "1.5", "1 ", " 1", "1-2-3", "1k,2", "16384,1", "1,,2",
     "2048m", "4x"],
)
def test_parse_node_range_rejects(text):
    with pytest.raises(ValueSyntaxError):
        parse_node_range(text)


def test_max_below_min_message():
    message = "Maximum node count 2 is less than minimum node count 5"
    with pytest.raises(ValueSyntaxError, match=message):
        parse_node_range("5-2")


@PROPERTY
@given(st.text(alphabet="0123456789-,:kKmM ", max_size=12) | st.text(max_size=8))
def test_random_text_parses_or_raises_value_syntax_error(text):
    try:
        nodes = parse_node_range(text)
    except ValueSyntaxError:
        return
    assert nodes.max_nodes == 0 or nodes.min_nodes <= nodes.max_nodes
