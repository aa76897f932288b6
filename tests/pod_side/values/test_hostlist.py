"""Hostlists: hostlist.c's hostlist_create, hostlist_ranged_string and hostlist_sort."""

import pytest
from hypothesis import given, settings, strategies as st

from parsers.input_errors import ValueSyntaxError
from parsers.values.hostlist import (
    MAX_EXPANDED_HOSTS,
    compress_hostlist,
    compress_hostlist_sorted,
    compress_hostlist_unique,
    expand_hostlist,
)

PROPERTY = settings.get_profile("values")


@pytest.mark.parametrize(
    "text, hosts",
    [
        ("", []),
        ("tux1", ["tux1"]),
        ("gpu-[01-04,07]", ["gpu-01", "gpu-02", "gpu-03", "gpu-04", "gpu-07"]),  # slurm.md §5
        ("node[001-003],login1", ["node001", "node002", "node003", "login1"]),
        ("a[1-2]-b[3-4]", ["a1-b3", "a1-b4", "a2-b3", "a2-b4"]),  # outer prefix slowest
        # three brackets: Slurm recurses from the last prefix bracket, so b varies slowest
        ("a[1-2]b[3-4]c[5-6]", ["a1b3c5", "a1b3c6", "a2b3c5", "a2b3c6",
                                "a1b4c5", "a1b4c6", "a2b4c5", "a2b4c6"]),
        ("rack[1-2]-ib", ["rack1-ib", "rack2-ib"]),  # suffix after ]
        ("n[01-04]", ["n01", "n02", "n03", "n04"]),
        ("n[1-10]", [f"n{i}" for i in range(1, 11)]),  # width of the low bound
        ("n[8-12]", ["n8", "n9", "n10", "n11", "n12"]),
        ("n[098-101]", ["n098", "n099", "n100", "n101"]),
        ("tux2,tux1,tux2", ["tux2", "tux1", "tux2"]),  # order and duplicates kept
        ("a b\tc\nd,,e", ["a", "b", "c", "d", "e"]),  # separators
        ("n[1,3-4] m", ["n1", "n3", "n4", "m"]),
        ("[1-3]", ["1", "2", "3"]),
        ("127.0.0.[2-3]", ["127.0.0.2", "127.0.0.3"]),
        ("n[3,1,3]", ["n3", "n1", "n3"]),
        ("n[1-]", ["n1"]),  # an empty high bound means the low one
        ("a[1, 2]", ["a1", "a02"]),  # the blank counts in the pad width
        ("n[+1-+2]", ["n01", "n02"]),
        ("a]1", ["a]1"]),
        ("n[1]]", ["n1]"]),
        ("x[1,[2],3]", ["x[1,2", "3]"]),  # text after "]," is dropped, as in Slurm
        ("a[x]b[1]c[2]", []),  # Slurm ignores errors two brackets down
        ("n0018446744073709551616", ["n0018446744073709551615"]),  # strtoul saturates
    ],
)
def test_expand_hostlist(text, hosts):
    assert expand_hostlist(text) == hosts


@pytest.mark.parametrize(
    "text",
    ["n[1-2", "n[5-1]", "n[]", "n[1,]", "n[,1]", "n[a]", "n[1--2]", "n[000x333]", "n[1x]",
     "n[1-2 ]", "n[0-65536]", "a[1-2]b[x]", "n[1-2]]x[", "[", "a[1-2]b[0-99999]"],
)
def test_expand_hostlist_rejects(text):
    with pytest.raises(ValueSyntaxError):
        expand_hostlist(text)


def test_expansion_size_is_bounded():
    assert len(expand_hostlist("n[0-65535]")) == 65536  # MAX_RANGE hosts in one range
    with pytest.raises(ValueSyntaxError):
        expand_hostlist("a[0-999]b[0-9999]")  # 10 million hosts
    assert MAX_EXPANDED_HOSTS >= 65536


@pytest.mark.parametrize(
    "hosts, text",
    [
        (["tux2", "tux1", "tux2"], "tux[2,1-2]"),  # scontrol.1: no sort, no dedupe
        (["tux1"], "tux1"),  # single hosts print bare
        (["login"], "login"),
        (["n1", "n01"], "n[1,01]"),  # different widths: separate ranges, one bracket
        (["n9", "n10"], "n[9-10]"),  # width-equivalent
        (["n09", "n10"], "n[09-10]"),
        (["n99", "n100"], "n[99-100]"),
        (["n08", "n9"], "n[08,9]"),
        (["n9", "n10", "n010"], "n[9-10,010]"),
        (["127.0.0.2", "127.0.0.3"], "127.0.0.[2-3]"),  # IPv4-like names
        (["node001", "node002", "node003", "login1"], "node[001-003],login1"),
        (["gpu-01", "gpu-02", "gpu-03", "gpu-04", "gpu-07"], "gpu-[01-04,07]"),
        (["a1", "a2", "b1", "a3"], "a[1-2],b1,a3"),
        (["login", "n1", "n2", "n3", "n5"], "login,n[1-3,5]"),
        (["1", "2", "3"], "[1-3]"),
        ([], ""),
    ],
)
def test_compress_hostlist(hosts, text):
    assert compress_hostlist(hosts) == text


@pytest.mark.parametrize(
    "hosts, text",
    [
        (["tux2", "tux1", "tux2"], "tux[1-2,2]"),  # scontrol.1 hostlistsorted
        (["a1", "a2", "b1", "a3"], "a[1-3],b1"),
        (["n10", "n9", "n2"], "n[2,9-10]"),
        (["b1", "a10", "a9"], "a[9-10],b1"),
        (["x", "n2", "n1"], "n[1-2],x"),
        (["n1", "n2", "n3", "n2", "n3", "n4", "n5"], "n[1-2,2-3,3-5]"),
        (["n1-2", "n1-10", "n1-9"], "n1-[2,9-10]"),
    ],
)
def test_compress_hostlist_sorted(hosts, text):
    assert compress_hostlist_sorted(hosts) == text


def test_compress_hostlist_unique():
    assert compress_hostlist_unique(["tux2", "tux1", "tux2"]) == "tux[1-2]"
    assert compress_hostlist_unique(["gpu-02", "gpu-01"]) == "gpu-[01-02]"


@pytest.mark.parametrize("hosts", [[""], ["a,b"], ["a[1]"], ["a b"]])
def test_compress_rejects_non_names(hosts):
    with pytest.raises(ValueSyntaxError):
        compress_hostlist(hosts)


PREFIX = st.text(alphabet="abcxyz-._", min_size=0, max_size=4)
NUMBERED = st.builds(
    lambda prefix, number, pad: f"{prefix}{number:0{pad}d}",
    PREFIX,
    st.integers(0, 130),
    st.integers(0, 4),
)
BARE = st.text(alphabet="abcz-.", min_size=1, max_size=4)
IPV4 = st.builds(lambda c, d: f"10.0.{c}.{d}", st.integers(0, 3), st.integers(0, 255))
HOSTS = st.lists(st.one_of(NUMBERED, NUMBERED, BARE, IPV4), max_size=25).map(
    lambda hosts: [h for h in hosts if h]
)


@PROPERTY
@given(HOSTS)
def test_compress_round_trip(hosts):
    assert expand_hostlist(compress_hostlist(hosts)) == hosts


@PROPERTY
@given(HOSTS)
def test_sorted_compress_keeps_every_host(hosts):
    assert sorted(expand_hostlist(compress_hostlist_sorted(hosts))) == sorted(hosts)
    assert sorted(expand_hostlist(compress_hostlist_unique(hosts))) == sorted(set(hosts))


@PROPERTY
@given(st.lists(st.integers(0, 300), max_size=30), st.integers(0, 3))
def test_sorted_compress_orders_numbers(numbers, pad):
    hosts = [f"n{n:0{pad}d}" for n in numbers]
    by_number = sorted(set(hosts), key=lambda h: int(h[1:]))
    assert expand_hostlist(compress_hostlist_unique(hosts)) == by_number


@PROPERTY
@given(st.text(alphabet="ab[]-,0123456789 x+", max_size=20) | st.text(max_size=10))
def test_random_text_expands_or_raises_value_syntax_error(text):
    try:
        hosts = expand_hostlist(text)
    except ValueSyntaxError:
        return
    assert all(isinstance(h, str) and h for h in hosts)
