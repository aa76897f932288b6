"""GRES and GPU counts: slurm_opt.c (client) and slurm_get_next_tres (slurmctld)."""

import pytest
from hypothesis import given, settings, strategies as st

from parsers.input_errors import ValueSyntaxError
from parsers.values.gres import GpuCount, GresRequest, parse_gpu_counts, parse_gres

PROPERTY = settings.get_profile("values")


@pytest.mark.parametrize(
    "text, requests",
    [
        ("gpu:2", [("gpu", None, 2)]),
        ("gpu:kepler:2", [("gpu", "kepler", 2)]),
        ("gpu:a100:2", [("gpu", "a100", 2)]),
        ("gpu", [("gpu", None, 1)]),
        ("gpu:kepler:2,nic:1", [("gpu", "kepler", 2), ("nic", None, 1)]),
        ("shard:4", [("shard", None, 4)]),
        ("gres/gpu:2", [("gpu", None, 2)]),
        ("gpu:x", [("gpu", "x", 1)]),  # a type, count 1; slurmctld refuses it later
        ("gpu:2x", [("gpu", "2x", 1)]),
        ("gpu:99999999999999999999", [("gpu", "99999999999999999999", 1)]),  # strtoull saturates
        ("gpu=2", [("gpu", None, 2)]),
        ("gpu:a100=2", [("gpu", "a100", 2)]),
        ("gpu:a:b:2", [("gpu", "a:b", 2)]),
        ("gpu:2k", [("gpu", None, 2048)]),
        ("gpu:2K", [("gpu", None, 2048)]),
        ("gpu:2kib", [("gpu", None, 2048)]),
        ("gpu:2kb", [("gpu", None, 2000)]),
        ("mps:1P", [("mps", None, 1024**5)]),
        ("gpu:0", []),  # zero counts are dropped
        ("gpu:tesla:0,nic", [("nic", None, 1)]),
        ("gpu:2,,nic", [("gpu", None, 2), ("nic", None, 1)]),
        ("none", []),
        ("None", []),
        ("", []),
    ],
)
def test_parse_gres(text, requests):
    assert parse_gres(text) == tuple(GresRequest(*r) for r in requests)


@pytest.mark.parametrize(
    "text", ["gpu:", "gpu::2", ":2", "gpu=x", "gpu=2:3", "gpu:a:b", "gpu: 2", "gpu 2", "gpu:2 ",
             "gpu:9999999999999p"],
)
def test_parse_gres_rejects(text):
    with pytest.raises(ValueSyntaxError):
        parse_gres(text)


@pytest.mark.parametrize(
    "text, counts",
    [
        ("2", [(None, 2)]),
        ("volta:3", [("volta", 3)]),  # sbatch.1: --gpus=volta:3
        ("volta:3,kepler:1", [("volta", 3), ("kepler", 1)]),
        ("a100:8", [("a100", 8)]),
        ("a100", [("a100", 1)]),
        ("a100=2", [("a100", 2)]),
        ("gpu:a100:2", [("gpu:a100", 2)]),  # Slurm makes it "gres/gpu:gpu:a100:2"
        ("2k", [(None, 2048)]),
        ("0", []),
        ("", []),
        (",2,", [(None, 2)]),
    ],
)
def test_parse_gpu_counts(text, counts):
    assert parse_gpu_counts(text) == tuple(GpuCount(*c) for c in counts)


@pytest.mark.parametrize("text", ["a:b", "volta:", "=2", "2 ", "a100:x:y"])
def test_parse_gpu_counts_rejects(text):
    with pytest.raises(ValueSyntaxError):
        parse_gpu_counts(text)


NAMES = st.text(alphabet="abcdefgxyz_-./", min_size=1, max_size=6).filter(
    lambda s: not s.startswith("gres/") and s != "none"
)


@PROPERTY
@given(st.lists(st.tuples(NAMES, st.one_of(st.none(), NAMES), st.integers(1, 10**6)), max_size=4))
def test_written_requests_parse_back(items):
    def write(name, kind, count):
        return f"{name}:{kind}:{count}" if kind else f"{name}:{count}"

    text = ",".join(write(*item) for item in items)
    assert parse_gres(text) == tuple(GresRequest(*item) for item in items)


@PROPERTY
@given(st.text(alphabet="gpu:=,0123456789kKbBx/ ", max_size=16) | st.text(max_size=8))
def test_random_text_parses_or_raises_value_syntax_error(text):
    for parse in (parse_gres, parse_gpu_counts):
        try:
            assert all(r.count > 0 for r in parse(text))
        except ValueSyntaxError:
            pass
