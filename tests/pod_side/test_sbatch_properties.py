"""Properties of sbatch's and srun's option processing over random input.

Random ``#SBATCH`` headers (option names from the table and near misspellings of them, values
with quotes, ``#``, backslashes, unicode, odd whitespace), random sbatch command lines and
``SBATCH_*`` environments, and random srun command lines inside a job:

* nothing but :class:`parsers.input_errors.SlurmInputError` ever escapes;
* every SlurmInputError renders as Slurm's commands print errors: lines starting with
  ``sbatch: error:``/``sbatch: fatal:`` (or ``srun: …``), getopt's plain ``sbatch: …`` form
  followed by its ``Try "sbatch --help"`` line, and an exit status of 1 or 255.

Values never contain a newline (a message quoting such a value spans lines, in Slurm too).
Inputs that once crashed (ValueError from ``int()``) are pinned at the end with the outcome real
Slurm gives them. At most 200 examples each, derandomized.
"""

from __future__ import annotations

from typing import Dict, List, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsers.allocation import allocate
from parsers.input_errors import SlurmInputError
from parsers.jobspec import BatchScript
from parsers.options import NO_ARG, SBATCH, SRUN, env_sources, options_for
from parsers.sbatch_input import (
    build_job,
    load_script,
    script_options,
    split_command_line,
)
from parsers.slurm_env import batch_environment
from parsers.step_layout import layout_step
from parsers.steps import parse_srun
from tests.pod_side.support import SHAPE, describe, node_names

PROPERTY = settings(max_examples=200, derandomize=True, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

# -- strategies -----------------------------------------------------------------------------------

def _misspell(name: str, draw: st.DrawFn) -> str:
    how = draw(st.sampled_from(["drop", "swap", "add", "prefix", "case", "underscore"]))
    if len(name) < 2:
        return name + "x"
    i = draw(st.integers(0, len(name) - 2))
    if how == "drop":
        return name[:i] + name[i + 1:]
    if how == "swap":
        return name[:i] + name[i + 1] + name[i] + name[i + 2:]
    if how == "add":
        return name[:i] + draw(st.sampled_from("aes-_")) + name[i:]
    if how == "prefix":
        return name[:i + 1]
    if how == "case":
        return name.upper()
    return name.replace("-", "_")


INTERESTING = [
    "", "0", "1", "2", "-1", "4", "1-4", "2-1", "abc", "1:30", "1-0", "60", "UNLIMITED",
    "4G", "0G", "12Q", "gpu:2", "gpu:a100:2", "a100:3,kepler:1", "none", "1-15:4%2", "0-2000",
    "afterok:1:2", "afterok:1?afterany:2", "singleton", "n[1-3]", "n[1-", "node[001-003],x",
    "ALL", "NONE", "ALL,A=1", "B:USR1@90", "USR1", "now+1hour", "cyclic:block", "plane=2",
    "arbitrary", "user", "append", "truncate", "expedite", "yes", "no", "END,FAIL", "+5",
    "-5", "--5", "\u00b2", "\u0661", "1_0", "cpu:4,gres/gpu:1", "/a:/b:ro", "a:b:c:d",
    "indexed-job", "jobset", "nvcr.io#nvidia/pytorch:24.01", "$HOME/%x-%j.out", "~/x",
    "%", "%%", "\\", "\\\\", "'", '"', "a b", "\t", "\u00e9\u00e8", "\u2603", "\U0001f600",
    "x" * 300,
]

_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"),
                max_size=12)
VALUES = st.one_of(st.sampled_from(INTERESTING), _TEXT,
                   st.builds("".join, st.lists(st.sampled_from(INTERESTING + ["#", " "]),
                                               max_size=3)))
BLANK = st.sampled_from(["", " ", "  ", "\t", " \t ", "\u00a0", "\x0b", "\x0c"])


@st.composite
def option_words(draw: st.DrawFn, command: str) -> str:
    """One option as it could be typed: right or misspelled, long or short, with a value."""
    rows = options_for(command)
    row = draw(st.sampled_from(rows))
    long = row.long if draw(st.integers(0, 4)) else _misspell(row.long, draw)
    value = draw(VALUES)
    form = draw(st.integers(0, 5))
    if form == 0 and row.short:
        return f"-{row.short}{value}"
    if form == 1 and row.short:
        return f"-{row.short} {value}"
    if form == 2 or row.arg == NO_ARG:
        return f"--{long}"
    if form == 3:
        return f"--{long} {value}"
    if form == 4:
        return draw(st.sampled_from(["positional", ":", "--", "-", "hetjob", value]))
    return f"--{long}={value}"


def _quote(word: str, draw: st.DrawFn) -> str:
    style = draw(st.integers(0, 3))
    if style == 1:
        return f'"{word}"'
    if style == 2:
        return f"'{word}'"
    if style == 3:
        return word.replace(" ", "\\ ")
    return word


@st.composite
def directive_lines(draw: st.DrawFn) -> List[str]:
    lines = []
    for _ in range(draw(st.integers(1, 5))):
        magic = draw(st.sampled_from(["#SBATCH", "#SBATCH", "#SBATCH", "#SLURM", "##SBATCH",
                                      " #SBATCH", "#PBS", "#SBATCH--", "# ", ""]))
        words = [_quote(w, draw) for w in draw(st.lists(option_words(SBATCH), max_size=4))]
        sep = draw(BLANK) or " "
        tail = draw(st.sampled_from(["", "", " # comment", "#", " \\", "\\"]))
        lines.append(magic + draw(BLANK) + sep.join(words) + tail)
    return lines


def _script(lines: Sequence[str]) -> str:
    return "#!/bin/bash\n" + "".join(f"{line}\n" for line in lines) + "srun hostname\n"


ENV_SOURCES = [var for var, _ in env_sources(SBATCH)]


@st.composite
def environments(draw: st.DrawFn) -> Dict[str, str]:
    names = draw(st.lists(st.sampled_from(ENV_SOURCES), max_size=3, unique=True))
    return {name: draw(VALUES) for name in names}


# -- the rendering property -----------------------------------------------------------------------

_PLAIN_GETOPT = ("unrecognized option '", "option '", "invalid option -- '",
                 "option requires an argument -- '")


def assert_renders_like_slurm(error: SlurmInputError, command: str) -> None:
    lines = error.render(command).split("\n")
    assert lines[-1] == "", "the rendering ends with a newline"
    # parse_time's own line (--begin, --deadline) is printed unprefixed, as Slurm does.
    lines = [line for line in lines[:-1] if not line.startswith("Invalid time specification")]
    assert lines, "an error prints something"
    first = lines[0]
    assert first.startswith((f"{command}: error: ", f"{command}: fatal: ")) or (
        first.startswith(f"{command}: ") and
        first[len(command) + 2:].startswith(_PLAIN_GETOPT)), first
    for line in lines[1:]:
        assert line.startswith(f"{command}: ") or \
            line == f'Try "{command} --help" for more information', line
    assert error.exit_code in (1, 255)


# -- properties -----------------------------------------------------------------------------------

@PROPERTY
@given(lines=directive_lines())
def test_random_directives_only_raise_slurm_errors(lines):
    script = BatchScript(_script(lines), "job.sh")
    try:
        script_options(script)
        job, _ = build_job(split_command_line(["job.sh"]), {}, script)
        allocate(job, SHAPE)
    except SlurmInputError as e:
        assert_renders_like_slurm(e, "sbatch")


@PROPERTY
@given(argv=st.lists(option_words(SBATCH), max_size=5).map(
           lambda ws: [p for w in ws for p in w.split(" ", 1)]),
       tail=st.lists(st.sampled_from(["job.sh", "a", "--time", "-N3"]), max_size=3),
       environ=environments(), lines=directive_lines())
def test_random_command_lines_and_environments_only_raise_slurm_errors(argv, tail, environ,
                                                                      lines):
    text = _script(lines)
    try:
        command_line = split_command_line(argv + tail)
        script = load_script(command_line, text, command_line.script_path)
    except SlurmInputError as e:
        assert_renders_like_slurm(e, "sbatch")
        return
    try:
        job, _ = build_job(command_line, environ, script)
        allocate(job, SHAPE)
    except SlurmInputError as e:
        assert_renders_like_slurm(e, "sbatch")


def _job_env(args: str):
    desc = describe(args)
    return batch_environment(desc, node_names(desc["node_count"])), desc["cpus_per_node"]


JOB_ENVS = {args: _job_env(args)
            for args in ("-N2 --ntasks-per-node=2", "-N3 -n6", "-N2", "-N1 -c4")}


@PROPERTY
@given(argv=st.lists(option_words(SRUN), max_size=5).map(
           lambda ws: [p for w in ws for p in w.split(" ", 1)]),
       command=st.lists(st.sampled_from(["hostname", "python", "-l", "--nodes", "3"]),
                        max_size=3),
       job=st.sampled_from(sorted(JOB_ENVS)))
def test_random_srun_command_lines_only_raise_slurm_errors(argv, command, job):
    environ, cpus = JOB_ENVS[job]
    try:
        request = parse_srun(argv + command, environ)
        layout = layout_step(request, node_names(len(cpus)), cpus, 29)
    except SlurmInputError as e:
        assert_renders_like_slurm(e, "srun")
        return
    ranks = sorted(r for rs in layout.ranks for r in rs)
    assert ranks == list(range(layout.ntasks)), "ranks are 0..n-1, each once"
    assert all(0 <= i < len(cpus) for i in layout.node_indices)
    assert len(set(layout.node_indices)) == len(layout.node_indices)


@PROPERTY
@given(environ=st.dictionaries(
    st.sampled_from([var for var, _ in env_sources(SRUN)]), VALUES, max_size=4))
def test_random_srun_environments_only_raise_slurm_errors(environ):
    try:
        parse_srun(["hostname"], environ)
    except SlurmInputError as e:
        assert_renders_like_slurm(e, "srun")


def test_the_renderer_check_accepts_slurms_forms():
    for error in (SlurmInputError("x"), SlurmInputError("x", "y", location="job.sh:2: l"),
                  SlurmInputError("x").after("Invalid time specification (pos=0): x"),
                  SlurmInputError("unrecognized option '--b'", plain=True,
                                  hint='Try "sbatch --help" for more information'),
                  SlurmInputError("x", fatal=True, exit_code=1)):
        assert_renders_like_slurm(error, "sbatch")


# -- inputs that once crashed ---------------------------------------------------------------------

FORMER_CRASHES = [
    # (where, input, what Slurm does: the first line it prints, or the (nice, verbose) it
    # accepts). str.isdigit()/lstrip('+-') then int() raised ValueError for each. --nice is
    # strtoll(arg, NULL, 10) (22.05 accepts all three); SBATCH_DEBUG/SLURM_DEBUG are flag
    # variables first, so a value strtol reads as 0 resets -v silently (22.05); 26.05 atoi's
    # the cpu count of --tres-per-task.
    ("sbatch", ["--nice=\u00b2", "job.sh"], {}, (0, 0)),
    ("sbatch", ["--nice=--5", "job.sh"], {}, (0, 0)),
    ("sbatch", ["--nice=+-5", "job.sh"], {}, (0, 0)),
    ("sbatch", ["--tres-per-task=cpu:\u00b2", "job.sh"], {},
     "sbatch: fatal: Invalid --tres-per-task=cpu=0"),
    ("sbatch", ["job.sh"], {"SBATCH_DEBUG": "\u00b2"}, (None, 0)),
    ("srun", ["--nice=--5", "true"], {}, (0, 0)),
    ("srun", ["--tres-per-task=cpu:\u00b2", "true"], {},
     "srun: fatal: Invalid --tres-per-task=cpu=0"),
    ("srun", ["true"], {"SLURM_DEBUG": "\u00b9"}, (None, 0)),
]


@pytest.mark.parametrize("command, argv, environ, expected", FORMER_CRASHES,
                         ids=[f"{c}:{' '.join(a)}:{e}" for c, a, e, _ in FORMER_CRASHES])
def test_former_crashes_get_slurms_outcome(command, argv, environ, expected):
    try:
        if command == "sbatch":
            command_line = split_command_line(argv)
            script = load_script(command_line, "#!/bin/sh\ntrue\n", command_line.script_path)
            job, options = build_job(command_line, environ, script)
            outcome = (job.nice, options.verbose)
        else:
            request = parse_srun(argv, environ)
            outcome = (dict(request.other_options).get("nice"), request.verbose)
    except SlurmInputError as e:
        assert (e.render(command).splitlines()[0], e.exit_code) == (expected, 1)
        return
    assert outcome == expected
