"""-m/--distribution: proc_args.c's verify_dist_type and set_distribution."""

import pytest
from hypothesis import given, settings, strategies as st

from parsers.input_errors import ValueSyntaxError
from parsers.values.distribution import Distribution, parse_distribution

PROPERTY = settings.get_profile("values")


@pytest.mark.parametrize(
    "text, dist, exported",
    [
        ("block", Distribution("block"), "block"),
        ("cyclic", Distribution("cyclic"), "cyclic"),
        ("arbitrary", Distribution("arbitrary"), "arbitrary"),
        ("hostfile", Distribution("arbitrary"), "arbitrary"),
        ("plane=4", Distribution("plane", plane_size=4), "plane"),
        ("plane", Distribution("plane"), "plane"),  # size from SLURM_DIST_PLANESIZE
        ("PLANE=2", Distribution("plane", plane_size=2), "plane"),
        ("block:cyclic", Distribution("block", "cyclic"), "block:cyclic"),
        ("cyclic:fcyclic", Distribution("cyclic", "fcyclic"), "cyclic:fcyclic"),
        ("block:block:fcyclic", Distribution("block", "block", "fcyclic"), "block:block:fcyclic"),
        ("Block:Cyclic", Distribution("block", "cyclic"), "block:cyclic"),
        ("*", Distribution("block"), "block"),
        ("*:*", Distribution("block", "cyclic"), "block:cyclic"),
        ("*:*:*", Distribution("block", "cyclic", "cyclic"), "block:cyclic:cyclic"),
        ("cyclic:block:*", Distribution("cyclic", "block", "block"), "cyclic:block:block"),
        ("block,pack", Distribution("block", pack=True), "block,pack"),
        ("cyclic:cyclic,NoPack", Distribution("cyclic", "cyclic", pack=False),
         "cyclic:cyclic,nopack"),
        ("pack", Distribution("*", pack=True), "pack"),
        ("nopack", Distribution("*", pack=False), "nopack"),
        ("block::cyclic", Distribution("block", "cyclic"), "block:cyclic"),  # strtok skips
        ("block,", Distribution("block"), "block"),
    ],
)
def test_parse_distribution(text, dist, exported):
    parsed = parse_distribution(text)
    assert parsed == dist
    assert parsed.format() == exported == str(parsed)


@pytest.mark.parametrize(
    "text",
    ["", ",pack", "fcyclic", "arbitrary:block", "block:arbitrary", "block:cyclic:cyclic:block",
     "pack,nopack", "block,pack,pack", "plane=0", "plane=x", "plane=4,pack", "plane:block",
     "planets=4", "blocky", "block:plane", "block;cyclic", "plane=99999999999"],
)
def test_parse_distribution_rejects(text):
    with pytest.raises(ValueSyntaxError):
        parse_distribution(text)


LEVELS = st.sampled_from(["block", "cyclic"])
SUB = st.sampled_from(["block", "cyclic", "fcyclic"])


@PROPERTY
@given(LEVELS, st.one_of(st.none(), SUB), SUB, st.one_of(st.none(), st.booleans()))
def test_format_parses_back(nodes, sockets, cores, pack):
    dist = Distribution(nodes, sockets, cores if sockets else None, None, pack)
    assert parse_distribution(dist.format()) == dist


@PROPERTY
@given(st.text(alphabet="blockcyfpanerit*:,=0123456789", max_size=16) | st.text(max_size=8))
def test_random_text_parses_or_raises_value_syntax_error(text):
    try:
        parse_distribution(text)
    except ValueSyntaxError:
        pass
