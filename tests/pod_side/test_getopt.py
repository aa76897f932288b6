"""getopt_long semantics of Slurm's commands, table-driven."""

from __future__ import annotations

import pytest

from parsers.input_errors import SlurmInputError
from parsers.getopt import parse_args


def _given(argv, command="sbatch"):
    parsed = parse_args(command, argv)
    return [(g.option.long, g.raw) for g in parsed.options], list(parsed.operands)


@pytest.mark.parametrize("argv, options, operands", [
    (["--time=10", "job.sh"], [("time", "10")], ["job.sh"]),
    (["--time", "10", "job.sh"], [("time", "10")], ["job.sh"]),
    (["-t10", "job.sh", "a"], [("time", "10")], ["job.sh", "a"]),
    (["-t", "10", "job.sh"], [("time", "10")], ["job.sh"]),
    (["-N2", "-n", "4"], [("nodes", "2"), ("ntasks", "4")], []),
    (["-HQ"], [("hold", None), ("quiet", None)], []),
    (["-vvv"], [("verbose", None)] * 3, []),
    (["-HN2"], [("hold", None), ("nodes", "2")], []),
    # POSIX mode: options end at the script; its arguments are not ours.
    (["job.sh", "--time=5", "-N3"], [], ["job.sh", "--time=5", "-N3"]),
    (["--", "-weird-name.sh"], [], ["-weird-name.sh"]),
    # Unambiguous prefixes; an exact name wins over longer names sharing it.
    (["--part=gpu"], [("partition", "gpu")], []),
    (["--mem=4G"], [("mem", "4G")], []),
    (["--tasks-per-node=2"], [("ntasks-per-node", "2")], []),
    (["--ntasks-per-n=2"], [("ntasks-per-node", "2")], []),
    # Optional arguments only with '='.
    (["--exclusive", "job.sh"], [("exclusive", None)], ["job.sh"]),
    (["--exclusive=user"], [("exclusive", "user")], []),
    (["--requeue", "x.sh"], [("requeue", None)], ["x.sh"]),
    # A required argument may start with '-'.
    (["--job-name", "-x-"], [("job-name", "-x-")], []),
    (["-", "a"], [], ["-", "a"]),
])
def test_sbatch_getopt(argv, options, operands):
    assert _given(argv) == (options, operands)


@pytest.mark.parametrize("argv, options, operands", [
    (["-K1", "true"], [("kill-on-bad-exit", "1")], ["true"]),
    (["-K", "true"], [("kill-on-bad-exit", None)], ["true"]),
    (["-W", "5", "sleep", "1"], [("wait", "5")], ["sleep", "1"]),
    (["-l", "python", "x.py", "--nodes", "3"], [("label", None)],
     ["python", "x.py", "--nodes", "3"]),
    (["--cpu_bind=none", "hostname"], [("cpu-bind", "none")], ["hostname"]),
])
def test_srun_getopt(argv, options, operands):
    assert _given(argv, "srun") == (options, operands)


@pytest.mark.parametrize("argv, first_line, exit_code", [
    (["--bogus=1"], "sbatch: unrecognized option '--bogus=1'", 255),
    (["-z"], "sbatch: invalid option -- 'z'", 255),
    (["--time"], "sbatch: option '--time' requires an argument", 255),
    (["-t"], "sbatch: option requires an argument -- 't'", 255),
    (["--hold=1"], "sbatch: option '--hold' doesn't allow an argument", 255),
])
def test_getopt_errors_are_glibc_words(argv, first_line, exit_code):
    with pytest.raises(SlurmInputError) as e:
        parse_args("sbatch", argv)
    text = e.value.render("sbatch")
    assert text.splitlines()[0] == first_line
    assert text.splitlines()[1] == 'Try "sbatch --help" for more information'
    assert e.value.exit_code == exit_code


def test_ambiguous_prefix_lists_possibilities():
    with pytest.raises(SlurmInputError) as e:
        parse_args("sbatch", ["--ntask=2"])
    line = e.value.render("sbatch").splitlines()[0]
    assert line.startswith("sbatch: option '--ntask=2' is ambiguous; possibilities: '--ntasks'")
    assert "'--ntasks-per-node'" in line


def test_unknown_option_suggests_the_closest():
    with pytest.raises(SlurmInputError) as e:
        parse_args("sbatch", ["--job-nmae=x"])
    assert "did you mean '--job-name'?" in e.value.render("sbatch")


def test_sources_follow_words():
    parsed = parse_args("sbatch", ["-N", "2", "--time=5"], word_sources=["a:1", "a:1", "a:2"])
    assert [g.source for g in parsed.options] == ["a:1", "a:2"]
    with pytest.raises(SlurmInputError) as e:
        parse_args("sbatch", ["-N", "2", "--bogus"], word_sources=["a:1", "a:1", "a:3"])
    assert e.value.location == "a:3"
