"""File name patterns: print_fields.c's expand_stdio_fields and srun's fname.c."""

import pytest
from hypothesis import given, settings, strategies as st

from parsers.input_errors import ValueSyntaxError
from parsers.values.filename import (
    FilenameContext,
    FilenameField,
    FilenamePattern,
    StepIO,
    parse_filename_pattern,
    parse_step_io,
)

PROPERTY = settings.get_profile("values")

# job 128, step 0, 4 tasks (sbatch.1's examples); task 1 on the second node
STEP = FilenameContext(job_id=128, step_id=0, array_job_id=None, array_task_id=None,
                       user="alice", job_name="train", node_name="gpu-02", node_index=1,
                       task_id=1, restart_count=2, sluid="s0123456789abc")
# array task 7 of array 36, batch step
BATCH = FilenameContext(job_id=43, step_id=None, array_job_id=36, array_task_id=7,
                        user="bob", job_name="sweep", node_name="gpu-01")


@pytest.mark.parametrize(
    "pattern, step, batch",
    [
        ("job%J.out", "job128.0.out", "job43.out"),  # %J: jobid.stepid, batch: jobid
        ("job%4j.out", "job0128.out", "job0043.out"),
        ("job%2j-%2t.out", "job128-01.out", "job43-00.out"),
        ("slurm-%j.out", "slurm-128.out", "slurm-43.out"),
        ("slurm-%A_%a.out", "slurm-128_4294967294.out", "slurm-36_7.out"),  # non-array %a
        ("%3a", "4294967294", "007"),
        ("%b", "4", "7"),  # task id modulo 10
        ("%s", "0", "batch"),
        ("%4s", "0000", "batch"),
        ("%N.%n", "gpu-02.1", "gpu-01.0"),
        ("%5N", "gpu-02", "gpu-01"),  # padding ignored for text
        ("%u-%x", "alice-train", "bob-sweep"),
        ("%r", "2", "0"),
        ("%S", "s0123456789abc", ""),
        ("%12j", "0000000128", "0000000043"),  # padding at most 10
        ("%%j", "%j", "%j"),
        ("50%%", "50%", "50%"),
        ("%q", "%q", "%q"),  # unknown codes stay
        ("%4q", "%4q", "%4q"),
        ("%4%x", "%4%x", "%4%x"),
        ("abc%", "abc", "abc"),  # a lone % at the end vanishes
        ("abc%12", "abc%12", "abc%12"),
        ("a\\%j\\b", "a%jb", "a%jb"),  # a backslash: no expansion, backslashes dropped
        ("/tmp/out", "/tmp/out", "/tmp/out"),
        ("", "", ""),
        ("%j\n%t", "128\n1", "43\n0"),
    ],
)
def test_render(pattern, step, batch):
    parsed = parse_filename_pattern(pattern)
    assert parsed.render(STEP) == step
    assert parsed.render(BATCH) == batch


@pytest.mark.parametrize(
    "pattern, per_task, per_node, opened_per_task",
    [
        ("out-%t", True, False, True),
        ("out-%N", False, True, True),
        ("out-%n", False, True, True),
        ("out-%u", False, False, True),  # srun leaves %u to the node too
        ("out-%j", False, False, False),
        ("out-%%t", False, False, False),
        ("out\\-%t", False, False, False),
    ],
)
def test_per_task_and_node(pattern, per_task, per_node, opened_per_task):
    parsed = parse_filename_pattern(pattern)
    assert (parsed.per_task, parsed.per_node, parsed.opened_per_task) == (
        per_task, per_node, opened_per_task)


def test_parsed_form():
    assert parse_filename_pattern("a%4jb%%") == FilenamePattern(("a", FilenameField("j", 4), "b%"))


@pytest.mark.parametrize(
    "text, kind, task_id",
    [
        ("all", "all", None), ("ALL", "all", None), ("allfiles", "all", None),  # 3-letter prefix
        ("-", "all", None), ("-x", "all", None),
        ("none", "none", None), ("None", "none", None),
        ("3", "task", 3), (" 3", "task", 3), ("+3", "task", 3), ("", "task", 0),
        ("3 ", "pattern", None), ("out-%t.txt", "pattern", None), ("nonex", "pattern", None),
    ],
)
def test_parse_step_io(text, kind, task_id):
    io = parse_step_io(text)
    assert (io.kind, io.task_id) == (kind, task_id)
    assert (io.pattern is None) == (kind in ("all", "none"))


def test_step_io_task_keeps_the_pattern():
    assert parse_step_io("5") == StepIO("task", 5, FilenamePattern(("5",)))


@PROPERTY
@given(st.text(alphabet="%AabJjNnrSstuxq0123456789\\-._/ ", max_size=20) | st.text(max_size=10))
def test_random_patterns_render(text):
    try:
        parsed = parse_filename_pattern(text)
    except ValueSyntaxError:  # pragma: no cover - every text is a pattern
        raise AssertionError(text)
    assert isinstance(parsed.render(STEP), str)
    if "%" not in text:
        assert parsed.render(STEP) == text.replace("\\", "")
