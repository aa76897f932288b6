"""sbatch's option processing end to end: script text + command line + ``SBATCH_*``
environment → JobSpec (reference/slurm.md §1.1–1.7, §10; slurm-observations/SUMMARY.md §7).

Every case goes through :mod:`parsers.sbatch_input` (split_command_line, load_script, build_job) the
way the sbatch command does, without I/O. Where real Slurm 22.05 (the observations) and current
Slurm (26.05 source, the spec) disagree, the test names the version the code follows.
"""

from __future__ import annotations

import io
from typing import Any, Mapping, Optional, Sequence, Tuple

import pytest

from parsers.input_errors import SlurmInputError
from parsers.jobspec import SCRIPT_FROM_STDIN, SCRIPT_FROM_WRAP, JobSpec, SubmitOptions
from parsers.options import (
    APPROXIMATED,
    IGNORED,
    NO_ARG,
    REJECTED,
    SBATCH,
    find_option,
    options_for,
)
from parsers.script import OLD_MAGIC_ERROR
from parsers.values.array import ArrayRange, ArraySpec
from parsers.values.gres import GpuCount, GresRequest
from parsers.values.nodes import NodeRange
from tests.pod_side.support import submit

SHEBANG = "#!/bin/bash\n"


def script(*lines: str, body: str = "srun hostname") -> str:
    """A script: shebang, ``lines`` verbatim, then a command."""
    return SHEBANG + "".join(f"{line}\n" for line in lines) + body + "\n"


def error_of(text: Optional[str] = SHEBANG + "true\n", args: Any = "job.sh",
             env: Optional[Mapping[str, str]] = None) -> SlurmInputError:
    with pytest.raises(SlurmInputError) as caught:
        submit(text, args, env)
    return caught.value


def rendered(e: SlurmInputError) -> Sequence[str]:
    return e.render("sbatch").splitlines()


def value(job: JobSpec, options: SubmitOptions, field: str) -> Any:
    """A field of the job, of sbatch's own options, or of the recorded other options."""
    if hasattr(job, field):
        return getattr(job, field)
    if hasattr(options, field):
        return getattr(options, field)
    return job.other(field)


def messages(job: JobSpec) -> Sequence[str]:
    return [w.message for w in job.warnings]


# -- where directives are read (§1.2, §10.1, §10.2) -------------------------------------------

@pytest.mark.parametrize("lines, field, expected", [
    (["#SBATCH -N 2"], "nodes", NodeRange(2, 2)),
    # Inert: ##SBATCH, indented (spaces or tab), a typo'd magic word.
    (["##SBATCH -N 3"], "nodes", None),
    (["  #SBATCH -N 3"], "nodes", None),
    (["\t#SBATCH -N 3"], "nodes", None),
    (["#SBTACH -N 3"], "nodes", None),
    # Comments and blank lines between directives do not end the header.
    (["# set up", "", "#SBATCH -N 2", "   ", "#SBATCH -n 5"], "ntasks", 5),
    # No space needed after the magic word.
    (["#SBATCH--time=24:00:00"], "time_limit_min", 1440),
    # '#' ends a directive: trailing comment, and the pyxis image reference gotcha.
    (["#SBATCH --time=01:00:00   # one hour"], "time_limit_min", 60),
    (["#SBATCH --container-image=nvcr.io#nvidia/pytorch:24.01"], "container_image", "nvcr.io"),
    (["#SBATCH -J x#y"], "job_name", "x"),
    (['#SBATCH -J "x#y"'], "job_name", "x#y"),
    (["#SBATCH -J x\\#y"], "job_name", "x#y"),
    # Quotes group, backslash-space escapes.
    (["#SBATCH --job-name='my job' --comment=\"a b\""], "comment", "a b"),
    (["#SBATCH --job-name=a\\ b"], "job_name", "a b"),
    # No variable, tilde or command expansion: literal text.
    (["#SBATCH --output=$HOME/logs/%x-%j.out"], "output", "$HOME/logs/%x-%j.out"),
    (["#SBATCH -J ${USER}_run"], "job_name", "${USER}_run"),
    (["#SBATCH -D ~/work"], "chdir", "~/work"),
    (["#SBATCH --comment=$(date)"], "comment", "$(date)"),
    # The later of two directives wins.
    (["#SBATCH -N 2", "#SBATCH --nodes=3"], "nodes", NodeRange(3, 3)),
    (["#SBATCH --mail-type=END", "#SBATCH --mail-type=FAIL"], "mail_type", ("FAIL",)),
    # #SLURM is read too.
    (["#SLURM -N 4"], "nodes", NodeRange(4, 4)),
])
def test_directive_placement(lines, field, expected):
    job, options = submit(script(*lines))
    assert value(job, options, field) == expected


def test_several_options_on_one_line():
    """Megatron-LM's SRUN.sh header line."""
    job, _ = submit(script(
        "#SBATCH -t 0:30:00 --exclusive --mem=0 --overcommit --ntasks-per-node=8"))
    assert (job.time_limit_min, job.exclusive, job.mem_per_node_mb, job.overcommit,
            job.ntasks_per_node) == (30, "node", 0, True, 8)


def test_space_separated_values_in_directives_and_on_the_command_line():
    job, _ = submit(script("#SBATCH --partition gpu -N 2 --time 10"),
                    ["--account", "proj", "-n", "4", "job.sh"])
    assert (job.partition, job.nodes, job.time_limit_min, job.account, job.ntasks) == (
        "gpu", NodeRange(2, 2), 10, "proj", 4)


def test_directives_after_the_first_command_are_ignored_with_a_note():
    text = SHEBANG + "#SBATCH -N 2\necho start\n#SBATCH -n 4\n#SBATCH -c 2\n"
    job, _ = submit(text)
    assert (job.nodes, job.ntasks, job.cpus_per_task) == (NodeRange(2, 2), None, None)
    notes = [(w.message, w.location) for w in job.warnings]
    assert notes == [("#SBATCH after the first command is ignored (as by Slurm)", "job.sh:4"),
                     ("#SBATCH after the first command is ignored (as by Slurm)", "job.sh:5")]


def test_slurm_magic_word_warns_once_and_applies():
    job, _ = submit(script("#SLURM -N 2", "#SLURM -n 4"))
    assert (job.nodes, job.ntasks) == (NodeRange(2, 2), 4)
    assert messages(job) == [OLD_MAGIC_ERROR]


@pytest.mark.parametrize("lines, args, env, last", [
    # getopt over the header, values from the header and the environment, the cross-option
    # checks: all come after sbatch has read the #SLURM line (observed on 22.05). (Values
    # given on the command line are read before the script: see first_pass.)
    (["#SLURM --bogus"], "job.sh", {}, 'Try "sbatch --help" for more information'),
    (["#SLURM -N 1", "#SBATCH --time=abc"], "job.sh", {},
     "sbatch: error: Invalid --time specification"),
    (["#SLURM -N 1"], "job.sh", {"SBATCH_TIMELIMIT": "abc"},
     "sbatch: error: Invalid --time specification"),
    (["#SLURM -N 1", "#SBATCH --begin=x"], "job.sh", {},
     "sbatch: error: Invalid --begin specification"),
    (["#SLURM -N 1"], "--mem=1 --mem-per-cpu=1 job.sh", {},
     "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive."),
])
def test_slurm_magic_word_error_is_printed_before_a_later_error(lines, args, env, last):
    shown = rendered(error_of(script(*lines), args, env))
    assert shown[0] == f"sbatch: error: {OLD_MAGIC_ERROR}"
    assert shown[-1] == last
    assert shown.count(f"sbatch: error: {OLD_MAGIC_ERROR}") == 1


@pytest.mark.parametrize("args", ["job.sh", "-Q job.sh", "--parsable job.sh"])
def test_slurm_magic_word_is_an_error_line_even_when_quiet(args, capsys):
    """sbatch's error() is not silenced by -Q (observed on 22.05: printed with -Q too)."""
    from sbatch_k8s.cli.sbatch import _print_warnings

    job, options = submit(script("#SLURM -N 1", "#SBATCH --mail-type=END"), args)
    _print_warnings(job, options)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == f"sbatch: error: {OLD_MAGIC_ERROR}"
    assert len(lines) == (1 if options.quiet else 2)


@pytest.mark.parametrize("magic", ["#PBS", "#BSUB"])
def test_foreign_directives_are_not_translated_and_say_so(magic):
    job, _ = submit(script(f"{magic} -l nodes=2", "#SBATCH -n 3"))
    assert (job.nodes, job.ntasks) == (None, 3)
    assert [(w.message, w.location) for w in job.warnings] == [
        (f"{magic} directives are not translated; write them as #SBATCH", "job.sh:2")]


@pytest.mark.parametrize("args, env", [("--ignore-pbs job.sh", {}),
                                       ("job.sh", {"SBATCH_IGNORE_PBS": ""})])
def test_ignore_pbs_silences_the_pbs_note(args, env):
    job, _ = submit(script("#PBS -l nodes=2"), args, env)
    assert job.ignore_pbs is True
    assert messages(job) == []


def test_trailing_backslash_on_a_directive_is_dropped():
    job, _ = submit(script("#SBATCH -N 2 \\", "#SBATCH -n 2"))
    assert (job.nodes, job.ntasks) == (NodeRange(2, 2), 2)


def test_only_ascii_whitespace_separates_directive_words():
    job, _ = submit(script("#SBATCH -J a\u00a0b"))
    assert job.job_name == "a\u00a0b"


@pytest.mark.parametrize("lines, expected", [
    # An empty word ends the line: '-n 2' is not read, -J takes the next line's word.
    # (Observed on 22.05: job name '--comment=x', 1 CPU.)
    (['#SBATCH -J "" -n 2', "#SBATCH --comment=x"], ("--comment=x", None, None)),
    # So does a backslash before a tab (22.05: -n 2 not read).
    (["#SBATCH -N 1 \\\t-n 2"], (None, NodeRange(1, 1), None)),
    # A hetjob separator after the first word is blanked, and the rest of the line with it.
    (["#SBATCH -J hj -N 1 hetjob -n 2"], ("hj", NodeRange(1, 1), None)),
    # A directive after a line starting with a NO-BREAK SPACE is after the first command.
    (["\u00a0#SBATCH -N 2", "#SBATCH -n 2"], (None, None, None)),
])
def test_directive_lines_end_where_get_argument_returns_nothing(lines, expected):
    job, _ = submit(script(*lines))
    name = None if job.job_name == "job.sh" else job.job_name
    assert (name, job.nodes, job.ntasks) == expected


@pytest.mark.parametrize("line", ["#SBATCH hetjob", "#SBATCH  HetJob -N 2", "#SBATCH packjob"])
def test_heterogeneous_jobs_are_refused_in_one_line(line):
    e = error_of(script("#SBATCH -N 1", line))
    assert rendered(e) == [f"sbatch: error: job.sh:3: {line}: heterogeneous jobs are not "
                           "supported by sbatch-k8s"]
    assert e.exit_code == 255


def test_heterogeneous_jobs_are_refused_on_the_command_line():
    e = error_of(script(), "-N 1 : -N 2 job.sh")
    assert rendered(e) == ["sbatch: error: heterogeneous jobs (':' between sets of options) "
                           "are not supported by sbatch-k8s"]
    assert e.exit_code == 255


# -- precedence: #SBATCH < SBATCH_* < command line (§1.2.10, §10.3) --------------------------

@pytest.mark.parametrize("args, env, expected", [
    ("job.sh", {}, (10, "a", "x")),
    ("job.sh", {"SBATCH_TIMELIMIT": "20", "SBATCH_JOB_NAME": "b", "SBATCH_PARTITION": "y"},
     (20, "b", "y")),
    ("-t 30 -J c -p z job.sh",
     {"SBATCH_TIMELIMIT": "20", "SBATCH_JOB_NAME": "b", "SBATCH_PARTITION": "y"},
     (30, "c", "z")),
    ("-t 30 job.sh", {"SBATCH_JOB_NAME": "b"}, (30, "b", "x")),
])
def test_command_line_beats_environment_beats_script(args, env, expected):
    job, _ = submit(script("#SBATCH -t 10 -J a -p x"), args, env)
    assert (job.time_limit_min, job.job_name, job.partition) == expected


@pytest.mark.parametrize("text, expected", [
    ("", True), ("yes", True), ("YES", True), ("1", True), ("2", True), ("-1", True),
    ("0", False), ("no", False), ("abc", False), ("1x", False), ("true", False),
])
def test_flag_variable_is_set_by_empty_yes_or_nonzero_number(text, expected):
    _, options = submit(args="job.sh", env={"SBATCH_WAIT": text})
    assert options.wait is expected


@pytest.mark.parametrize("text, expected", [
    ("1_0", False), ("1 ", False), ("\u0661", False), ("0x1", False), ("-", False),
    # strtol skips leading C blanks and takes a sign.
    (" 1", True), ("\t+1", True), ("-0", False), ("YeS", True),
])
def test_flag_variable_number_is_read_like_strtol(text, expected):
    _, options = submit(args="job.sh", env={"SBATCH_WAIT": text})
    assert options.wait is expected


def test_flag_variable_with_another_value_resets_the_scripts_flag():
    """The environment is read after the script: SBATCH_WAIT=no undoes '#SBATCH --wait'."""
    _, options = submit(script("#SBATCH --wait"), "job.sh", {"SBATCH_WAIT": "no"})
    assert options.wait is False
    _, options = submit(script(), "--wait job.sh", {"SBATCH_WAIT": "no"})
    assert options.wait is True


@pytest.mark.parametrize("lines, args, env, expected", [
    ([], "job.sh", {"SBATCH_REQUEUE": ""}, True),
    ([], "job.sh", {"SBATCH_REQUEUE": "expedite"}, True),
    (["#SBATCH --requeue"], "job.sh", {"SBATCH_NO_REQUEUE": ""}, False),
    (["#SBATCH --requeue"], "job.sh", {"SBATCH_NO_REQUEUE": "1"}, False),
    (["#SBATCH --no-requeue"], "job.sh", {"SBATCH_REQUEUE": ""}, True),
    ([], "--requeue job.sh", {"SBATCH_NO_REQUEUE": "yes"}, True),
    # --no-requeue's reset is --requeue's (they share one setting): back to unset.
    (["#SBATCH --requeue"], "job.sh", {"SBATCH_NO_REQUEUE": "no"}, None),
])
def test_requeue_variables(lines, args, env, expected):
    job, _ = submit(script(*lines), args, env)
    assert job.requeue is expected


def test_requeue_variable_keeps_its_text_as_the_optional_argument():
    """--requeue takes an optional argument, so SBATCH_REQUEUE=yes is ``--requeue=yes``,
    which Slurm's arg_set_requeue refuses (only '' and 'expedite')."""
    e = error_of(args="job.sh", env={"SBATCH_REQUEUE": "yes"})
    assert rendered(e) == ["sbatch: error: Invalid --requeue specification"]
    assert (e.exit_code, e.location) == (255, "SBATCH_REQUEUE")


@pytest.mark.parametrize("env, args, expected", [
    ({"SBATCH_EXCLUSIVE": ""}, "job.sh", "node"),
    ({"SBATCH_EXCLUSIVE": "user"}, "job.sh", "user"),
    ({"SBATCH_EXCLUSIVE": "user"}, "--exclusive=mcs job.sh", "mcs"),
])
def test_optional_argument_variable(env, args, expected):
    job, _ = submit(script(), args, env)
    assert job.exclusive == expected


def test_debug_variable_counts_like_v():
    """SBATCH_DEBUG is read before the command line (26.05 ``_opt_early_env``), and the
    first ``-v`` after it starts the count over (``arg_set_verbose``). (22.05 read it after
    the command line, so there it won: -v and SBATCH_DEBUG=2 gave 2, observed.)"""
    _, options = submit(args="job.sh", env={"SBATCH_DEBUG": "2"})
    assert options.verbose == 2
    _, options = submit(args="-v job.sh", env={"SBATCH_DEBUG": "2"})
    assert options.verbose == 1


@pytest.mark.parametrize("text, verbose", [
    # A flag variable first (strtol, nothing after): otherwise it resets -v, silently.
    ("\u00b2", 0), ("2 ", 0), ("0", 0), ("abc", 0),
    # Set: then parse_int("--verbose", …) reads the count ("" reads as 0).
    ("", 0), (" 2", 2), ("+1", 1),
])
def test_debug_variable_is_read_like_slurm(text, verbose):
    """Observed on 22.05 (SBATCH_DEBUG=… sbatch --test-only): these are accepted."""
    _, options = submit(args="job.sh", env={"SBATCH_DEBUG": text})
    assert options.verbose == verbose


@pytest.mark.parametrize("text", ["yes", "-1"])
def test_debug_variable_that_sets_the_flag_must_be_a_count(text):
    """Observed on 22.05: 'sbatch: error: Invalid numeric value "yes" for --verbose.', rc 1."""
    e = error_of(args="job.sh", env={"SBATCH_DEBUG": text})
    assert rendered(e) == [f'sbatch: error: Invalid numeric value "{text}" for --verbose.']
    assert (e.exit_code, e.location) == (1, "SBATCH_DEBUG")


# -- time: --time=60 is minutes, seconds round up (§1.6, §10.9) ------------------------------

@pytest.mark.parametrize("text, minutes", [
    ("60", 60), ("2000", 2000), ("0:30", 1), ("1:01", 2), ("0:0:1", 1), ("1:00:00", 60),
    ("100:00:00", 6000), ("1-0", 1440), ("3-00:00:00", 4320), ("0-00:15:00", 15),
    ("1-2:3:4", 1564), ("0", 0), ("UNLIMITED", 0), ("infinite", 0), ("-1", 0),
])
def test_time_limit_minutes(text, minutes):
    for args, lines, env in (([f"--time={text}", "job.sh"], [], {}),
                             (["job.sh"], [f"#SBATCH -t {text}"], {}),
                             (["job.sh"], [], {"SBATCH_TIMELIMIT": text})):
        job, _ = submit(script(*lines), args, env)
        assert job.time_limit_min == minutes


# -- script, arguments, --wrap, stdin, job name (§1.1, §1.3, SUMMARY §7) ----------------------

def test_script_arguments_follow_the_script_path():
    job, _ = submit(script(), ["-N", "2", "dir/run.sh", "--time", "x", "-N", "3", "--bogus"])
    assert job.nodes == NodeRange(2, 2)
    assert job.time_limit_min is None
    assert job.script.path == "dir/run.sh"
    assert job.script.args == ("--time", "x", "-N", "3", "--bogus")
    assert job.job_name == "run.sh"


def test_quoted_name_and_arguments():
    job, _ = submit(script(), ["-J", "a b", "ok.sh", "x", "y z"])
    assert (job.job_name, job.script.args) == ("a b", ("x", "y z"))


@pytest.mark.parametrize("args, env, name", [
    ("job.sh", {}, "job.sh"),
    ("/abs/path/train.sbatch", {}, "train.sbatch"),
    ("./sub/dir/run", {}, "run"),
    ("job.sh", {"SBATCH_JOB_NAME": "fromenv"}, "fromenv"),
    ("-J cli job.sh", {"SBATCH_JOB_NAME": "fromenv"}, "cli"),
])
def test_default_job_name_is_the_script_basename(args, env, name):
    job, _ = submit(script(), args, env)
    assert job.job_name == name


def test_wrap_builds_the_script_and_names_the_job_wrap():
    job, _ = submit(None, ["--wrap", "echo hi; hostname", "-N", "2"])
    assert job.script.text == ("#!/bin/sh\n# This script was created by sbatch --wrap.\n\n"
                               "echo hi; hostname\n")
    assert job.script.origin == SCRIPT_FROM_WRAP
    assert (job.job_name, job.nodes, job.script.args) == ("wrap", NodeRange(2, 2), ())
    assert job.other("wrap") is None


def test_wrap_job_name_can_be_set():
    job, _ = submit(None, ["-J", "mine", "--wrap=true"])
    assert job.job_name == "mine"


@pytest.mark.parametrize("args", [["--wrap=echo hi", "ok.sh", "a", "b"],
                                  ["--wrap=echo hi", "ok.sh"]])
def test_wrap_refuses_script_arguments(args):
    e = error_of(None, args)
    assert rendered(e) == ["sbatch: error: Script arguments not permitted with --wrap option"]
    assert e.exit_code == 1


def test_script_from_stdin_is_named_sbatch_and_its_directives_are_read():
    job, _ = submit(script("#SBATCH -n 3"), ["-N", "2"])
    assert job.script.origin == SCRIPT_FROM_STDIN
    assert (job.job_name, job.script.display_name) == ("sbatch", "(stdin)")
    assert (job.nodes, job.ntasks) == (NodeRange(2, 2), 3)


DOS_LINES = ["sbatch: error: Batch script contains DOS line breaks (\\r\\n)",
             "sbatch: error: instead of expected UNIX line breaks (\\n)."]


def _sbatch(argv: Sequence[str], capsys: Any) -> Tuple[int, str]:
    """sbatch's command as the console runs it, up to where it would submit."""
    from sbatch_k8s.cli.common import run_command
    from sbatch_k8s.cli.sbatch import _main

    code = run_command("sbatch", _main, argv)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("text", ["#!/bin/sh\r\ntrue\r\n", "#!/bin/sh\n#SBATCH --bogus\ntrue\r\n"])
def test_dos_line_breaks_in_a_script_file_are_refused(text, tmp_path, monkeypatch, capsys):
    """The file is read as bytes: its line breaks reach the check (before any directive)."""
    (tmp_path / "job.sh").write_bytes(text.encode())
    monkeypatch.chdir(tmp_path)
    assert _sbatch(["job.sh"], capsys) == (1, "\n".join(DOS_LINES) + "\n")
    assert _sbatch(["-Q", "--k8s-lint", "job.sh"], capsys)[0] == 1


def test_dos_line_breaks_on_stdin_are_refused(monkeypatch, capsys):
    stdin = io.TextIOWrapper(io.BytesIO(b"#!/bin/sh\r\ntrue\r\n"))
    monkeypatch.setattr("sys.stdin", stdin)
    assert _sbatch([], capsys) == (1, "\n".join(DOS_LINES) + "\n")


def test_a_script_file_keeps_lone_carriage_returns(tmp_path, monkeypatch):
    from sbatch_k8s.cli.sbatch import read_script
    from parsers.sbatch_input import split_command_line

    (tmp_path / "job.sh").write_bytes(b"#!/bin/sh\nprintf 'a\rb'\r\xff\n")
    monkeypatch.chdir(tmp_path)
    text, path = read_script(split_command_line(["job.sh"]), {})
    assert (text, path) == ("#!/bin/sh\nprintf 'a\rb'\r\udcff\n", "job.sh")


@pytest.mark.parametrize("args, script_text, code, err", [
    # Observed on 22.05: process_options_first_pass reads every command-line value as getopt
    # returns it, before the script is read (no #SLURM notice, no script check yet) ...
    (["--time=abc", "job.sh"], "#!/bin/sh\n#SLURM -N1\ntrue\n", 255,
     "sbatch: error: Invalid --time specification\n"),
    (["--time=abc", "job.sh"], "", 255, "sbatch: error: Invalid --time specification\n"),
    (["--time=abc", "nonexistent.sh"], None, 255,
     "sbatch: error: Invalid --time specification\n"),
    (["--begin=10:61", "job.sh"], "#!/bin/sh\n#SLURM -N1\ntrue\n", 255,
     "Invalid time specification (pos=3): 10:61\nsbatch: error: Invalid --begin specification\n"),
    (["-N", "abc", "--time=abc", "job.sh"], "", 255,
     'sbatch: error: "abc" is not a valid node count\n'),
    (["--time=abc", "--wrap=x", "job.sh"], None, 255,
     "sbatch: error: Invalid --time specification\n"),
    # ... and before a later getopt error, but after an earlier one.
    (["--time=abc", "--bogus", "job.sh"], None, 255,
     "sbatch: error: Invalid --time specification\n"),
    (["--bogus", "--time=abc", "job.sh"], None, 255,
     "sbatch: unrecognized option '--bogus'\nTry \"sbatch --help\" for more information\n"),
    # The cross-option checks wait for the whole job, after the script's checks.
    (["--mem=1", "--mem-per-cpu=1", "job.sh"], "", 1,
     "sbatch: error: Batch script is empty!\n"),
])
def test_command_line_values_are_read_before_the_script(args, script_text, code, err,
                                                         tmp_path, monkeypatch, capsys):
    if script_text is not None:
        (tmp_path / "job.sh").write_text(script_text)
    monkeypatch.chdir(tmp_path)
    assert _sbatch(args, capsys) == (code, err)


def test_help_ends_the_first_pass(capsys):
    from sbatch_k8s.cli.common import run_command
    from sbatch_k8s.cli.sbatch import _main

    assert run_command("sbatch", _main, ["--usage", "--time=abc"]) == 0
    assert capsys.readouterr().out.startswith("Usage: sbatch")
    assert _sbatch(["--time=abc", "--usage"], capsys) == (
        255, "sbatch: error: Invalid --time specification\n")


def test_wrap_is_not_checked_for_dos_line_breaks():
    """_get_script_buffer checks files and stdin; --wrap's script is built, not read."""
    job, _ = submit(None, ["--wrap", "true\r\ntrue"])
    assert job.script.text.endswith("\ntrue\r\ntrue\n")


def test_script_errors_from_stdin_name_stdin():
    """Slurm's one line is printed; the location is kept for --k8s-lint."""
    e = error_of(script("#SBATCH --time=abc"), [])
    assert rendered(e) == ["sbatch: error: Invalid --time specification"]
    assert e.location == "(stdin):2: #SBATCH --time=abc"


# -- every option kind reaches its field ------------------------------------------------------

@pytest.mark.parametrize("args, field, expected", [
    ("--time=1:30:00", "time_limit_min", 90),
    ("--time-min=30", "time_min_min", 30),
    ("--mem=2G", "mem_per_node_mb", 2048),
    ("--mem=0", "mem_per_node_mb", 0),
    ("--mem-per-cpu=500", "mem_per_cpu_mb", 500),
    ("--mem-per-gpu=1T", "mem_per_gpu_mb", 1048576),
    ("--tmp=10G", "tmp_mb", 10240),
    ("-N 1-4", "nodes", NodeRange(1, 4)),
    ("--nodes=2", "nodes", NodeRange(2, 2)),
    ("-n 8", "ntasks", 8),
    ("--ntasks-per-node=2", "ntasks_per_node", 2),
    ("--tasks-per-node=3", "ntasks_per_node", 3),
    ("-c 4", "cpus_per_task", 4),
    ("--mincpus=3", "mincpus", 3),
    ("--cpus-per-gpu=2", "cpus_per_gpu", 2),
    ("--gres=gpu:a100:2,shard:1", "gres",
     (GresRequest("gpu", "a100", 2), GresRequest("shard", None, 1))),
    ("--gres=gpu", "gres", (GresRequest("gpu", None, 1),)),
    ("-G a100:3", "gpus", (GpuCount("a100", 3),)),
    ("--gpus-per-node=volta:3,kepler:1", "gpus_per_node",
     (GpuCount("volta", 3), GpuCount("kepler", 1))),
    ("--gpus-per-task=1", "gpus_per_task", (GpuCount(None, 1),)),
    ("--array=0-15:4%2", "array", ArraySpec((ArrayRange(0, 15, 4),), 2)),
    ("-a 1,3", "array", ArraySpec((ArrayRange(1, 1, 1), ArrayRange(3, 3, 1)), None)),
    ("--nodelist=n[1-3]", "nodelist", ("n1", "n2", "n3")),
    ("-w n1,n2,n1", "nodelist", ("n1", "n2", "n1")),
    ("-w ./hosts.txt", "nodelist", ("@file", "./hosts.txt")),
    ("-x n[2-3]", "exclude", ("n2", "n3")),
    ("--exclusive", "exclusive", "node"),
    ("--exclusive=user", "exclusive", "user"),
    ("--exclusive=TOPO", "exclusive", "topo"),
    ("-s", "oversubscribe", True),
    ("--overcommit", "overcommit", True),
    ("--open-mode=append", "open_mode", "append"),
    ("--open-mode=truncate", "open_mode", "truncate"),
    ("--requeue", "requeue", True),
    ("--no-requeue", "requeue", False),
    ("--mail-type=END,fail", "mail_type", ("END", "FAIL")),
    ("--nice", "nice", 100),
    ("--nice=-5", "nice", -5),
    ("--nice=+7", "nice", 7),
    # strtoll(arg, NULL, 10): the leading number, 0 without one (all accepted by 22.05).
    ("--nice=5x", "nice", 5),
    ("--nice=--5", "nice", 0),
    ("--nice=+-5", "nice", 0),
    ("--nice=\u00b2", "nice", 0),
    ("--nice=", "nice", 0),
    ("--wait-all-nodes=1", "wait_all_nodes", 1),
    ("--wait-all-nodes=0", "wait_all_nodes", 0),
    ("--kill-on-invalid-dep=yes", "kill_on_invalid_dep", True),
    ("--kill-on-invalid-dep=NO", "kill_on_invalid_dep", False),
    ("-p gpu", "partition", "gpu"),
    ("--part=gpu", "partition", "gpu"),
    ("-A acct", "account", "acct"),
    ("-q high", "qos", "high"),
    ("--comment=hi", "comment", "hi"),
    ("--priority=5", "priority", "5"),
    ("-o out-%j.txt", "output", "out-%j.txt"),
    ("-e err.txt", "error", "err.txt"),
    ("-i in.txt", "input", "in.txt"),
    ("-D /scratch", "chdir", "/scratch"),
    ("-H", "hold", True),
    ("--constraint=a&b", "constraint", "a&b"),
    ("--prefer=x", "prefer", "x"),
    ("--export-file=vars", "export_file", "vars"),
    ("--ignore-pbs", "ignore_pbs", True),
    ("--tres-per-task=cpu:4,gres/gpu:1", "tres_per_task", (("cpu", 4), ("gres/gpu", 1))),
    ("--ntasks-per-gpu=2", "ntasks_per_gpu", 2),
    ("--container-image=nvcr.io#nvidia/pytorch:24.01", "container_image",
     "nvcr.io#nvidia/pytorch:24.01"),
    ("--container-mounts=/a:/b:ro,/c", "container_mounts", (("/a", "/b", "ro"), ("/c", "/c", ""))),
    ("--container-workdir=/w", "container_workdir", "/w"),
    ("--container-name=c", "container_name", "c"),
    ("--container-writable", "container_writable", True),
    ("--container-readonly", "container_writable", False),
    ("--no-container-mount-home", "container_mount_home", False),
    ("--no-container-remap-root", "container_remap_root", False),
    ("--no-container-entrypoint", "container_entrypoint", False),
    ("-k", "no_kill", True),
    ("--no-kill=off", "no_kill", False),
    ("--wckey=x", "wckey", "x"),
    # sbatch's own settings.
    ("--k8s-target=jobset", "k8s_target", "jobset"),
    ("--k8s-target=mpijob", "k8s_target", "mpijob"),
    ("--k8s-job-id=7", "k8s_job_id", 7),
    ("--k8s-print", "k8s_print", True),
    ("--k8s-lint", "k8s_lint", True),
    ("--parsable", "parsable", True),
    ("--test-only", "test_only", True),
    ("-Q", "quiet", True),
    ("-W", "wait", True),
    ("-vv", "verbose", 2),
])
def test_option_kinds_reach_their_field(args, field, expected):
    job, options = submit(script(), args + " job.sh")
    assert value(job, options, field) == expected


@pytest.mark.parametrize("args, check", [
    ("--dependency=afterok:20:21,afterany:23",
     lambda d: (d.require_all, [(c.kind, [t.job_id for t in c.targets]) for c in d.clauses])
     == (True, [("afterok", [20, 21]), ("afterany", [23])])),
    ("-d afterok:20?afterany:23", lambda d: d.require_all is False),
])
def test_dependency_reaches_its_field(args, check):
    job, _ = submit(script(), args + " job.sh")
    assert check(job.dependency)


@pytest.mark.parametrize("args, expected", [
    ("--export=NONE", ("NONE", ())),
    ("--export=ALL,A=1", ("ALL", (("A", "1"),))),
    ("--export=EDITOR,ARG1=test", (None, (("ARG1", "test"),))),
])
def test_export_reaches_its_field(args, expected):
    job, _ = submit(script(), args + " job.sh")
    mode, assignments = expected
    if mode is not None:
        assert job.export.mode == mode
    assert job.export.assignments == assignments


def test_signal_begin_distribution_reach_their_fields():
    job, _ = submit(script("#SBATCH --signal=B:USR1@90 --begin=now+1hour -m cyclic:block"))
    assert (job.signal.signal_name, job.signal.seconds_before_end, job.signal.batch_only) == (
        "USR1", 90, True)
    assert (job.begin.date_kind, job.begin.now_offset_s) == ("now", 3600)
    assert (job.distribution.nodes, job.distribution.sockets) == ("cyclic", "block")


@pytest.mark.parametrize("env, field, expected", [
    ({"SBATCH_MEM_PER_NODE": "2G"}, "mem_per_node_mb", 2048),
    ({"SBATCH_GRES": "gpu:2"}, "gres", (GresRequest("gpu", None, 2),)),
    ({"SBATCH_GPUS_PER_NODE": "a100:8"}, "gpus_per_node", (GpuCount("a100", 8),)),
    ({"SBATCH_ARRAY_INX": "1-3%2"}, "array", ArraySpec((ArrayRange(1, 3, 1),), 2)),
    ({"SBATCH_OPEN_MODE": "append"}, "open_mode", "append"),
    ({"SBATCH_WAIT_ALL_NODES": "1"}, "wait_all_nodes", 1),
    ({"SBATCH_ACCOUNT": "proj"}, "account", "proj"),
    ({"SBATCH_QOS": "low"}, "qos", "low"),
    ({"SBATCH_OUTPUT": "o-%j"}, "output", "o-%j"),
    ({"SBATCH_OVERCOMMIT": "yes"}, "overcommit", True),
    ({"SBATCH_NO_KILL": ""}, "no_kill", True),
])
def test_input_variables_reach_their_field(env, field, expected):
    job, options = submit(script(), "job.sh", env)
    assert value(job, options, field) == expected


def test_there_is_no_sbatch_nodes_ntasks_or_cpus_variable():
    job, _ = submit(script(), "job.sh",
                    {"SBATCH_NODES": "4", "SBATCH_NTASKS": "8", "SBATCH_CPUS_PER_TASK": "2"})
    assert (job.nodes, job.ntasks, job.cpus_per_task) == (None, None, None)


@pytest.mark.parametrize("args, line", [
    ("--time=xyz", "Invalid --time specification"),
    ("--mem=12Q", "Invalid --mem specification"),
    ("--signal=FOO", "Invalid --signal specification"),
    ("--mail-type=bogus", "Invalid --mail-type specification"),
    ("--open-mode=bogus", "Invalid --open-mode specification"),
    ("--exclusive=bogus", "Invalid --exclusive specification"),
    ("--wait-all-nodes=2", "Invalid --wait-all-nodes specification"),
    ("--k8s-target=deployment", "Invalid --k8s-target specification: deployment (one of "
                                "indexed-job, jobset, pytorchjob, mpijob)"),
])
def test_invalid_values_exit_255(args, line):
    e = error_of(script(), args + " job.sh")
    assert rendered(e) == [f"sbatch: error: {line}"]
    assert e.exit_code == 255


@pytest.mark.parametrize("option", ["begin", "deadline"])
@pytest.mark.parametrize("text, pos", [("bogus", 0), ("10:00 bogus", 6), ("10:61", 3),
                                       ("now+1x", 4), ("2024-13-01", 5)])
def test_bad_times_print_parse_times_line_first(option, text, pos):
    """parse_time's own fprintf, unprefixed, then the option's error (observed on 22.05)."""
    for args, lines in (([f"--{option}={text}", "job.sh"], []),
                        (["job.sh"], [f"#SBATCH --{option}='{text}'"])):
        e = error_of(script(*lines), args)
        assert rendered(e) == [f"Invalid time specification (pos={pos}): {text}",
                               f"sbatch: error: Invalid --{option} specification"]
        assert e.exit_code == 255


@pytest.mark.parametrize("text", ["", " ", "T"])
def test_no_time_at_all_prints_only_the_options_error(text):
    e = error_of(script(), [f"--begin={text}", "job.sh"])
    assert rendered(e) == ["sbatch: error: Invalid --begin specification"]


@pytest.mark.parametrize("args, line", [
    # (MaxArraySize is the partition's, checked when the job is planned, not here.)
    ("--array=a-b", "Batch job submission failed: Invalid job array specification"),
    ("--array=SRR1,SRR2", "Batch job submission failed: Invalid job array specification"),
    ("--array=1-3:0", "Batch job submission failed: Invalid job array specification"),
    ("-d bogus", "Batch job submission failed: Job dependency problem"),
])
def test_values_the_controller_refuses_exit_1(args, line):
    e = error_of(script(), args + " job.sh")
    assert rendered(e) == [f"sbatch: error: {line}"]
    assert e.exit_code == 1


# -- support levels: rejected options fail, approximated/ignored ones warn once ----------------

SAMPLE_VALUES = {
    "string": "x", "int": "2", "int0": "0", "time": "10", "memory": "1G", "begin": "now",
    "nice": "5", "no_kill": None, "mail_type": "END", "tres": "cpu:2", "exclusive": None,
    "nodes": "1", "hostlist": "n1", "gpus": "1", "gres": "gpu:1", "mounts": "/a:/b",
    "filename": "f", "distribution": "block", "signal": "USR1", "export": "ALL",
    "yesno": "yes", "open_mode": "append", "requeue": None, "wait_all_nodes": "1",
    "array": "1-2", "dependency": "afterok:1", "k8s_target": "jobset",
}


def _argv(option) -> list:
    if option.arg == NO_ARG:
        return [f"--{option.long}"]
    sample = SAMPLE_VALUES.get(option.kind, "x")
    return [f"--{option.long}" if sample is None else f"--{option.long}={sample}"]


REJECTED_OPTIONS = [o for o in options_for(SBATCH) if o.level(SBATCH) == REJECTED]
WARNED_OPTIONS = [o for o in options_for(SBATCH) if o.level(SBATCH) in (APPROXIMATED, IGNORED)]


def test_the_table_has_rejected_and_warned_sbatch_options():
    assert {"container", "uid", "gid"} <= {o.long for o in REJECTED_OPTIONS}
    assert len(WARNED_OPTIONS) > 40


@pytest.mark.parametrize("option", REJECTED_OPTIONS, ids=lambda o: o.long)
def test_rejected_options_raise_with_the_tables_note(option):
    expected = f"--{option.long} is not supported by sbatch-k8s: {option.note}"
    e = error_of(script(), _argv(option) + ["job.sh"])
    assert rendered(e) == [f"sbatch: error: {expected}"]
    assert e.exit_code == 255
    # Our own message, so one line that names the directive.
    words = " ".join(_argv(option))
    e = error_of(script(f"#SBATCH {words}"))
    assert rendered(e) == [f"sbatch: error: job.sh:2: #SBATCH {words}: {expected}"]


def test_rejected_option_from_the_environment_names_the_variable():
    e = error_of(script(), "job.sh", {"SBATCH_CONTAINER": "/bundle"})
    assert rendered(e) == ["sbatch: error: SBATCH_CONTAINER: --container is not supported by "
                           f"sbatch-k8s: {find_option(SBATCH, 'container').note}"]


@pytest.mark.parametrize("option", WARNED_OPTIONS, ids=lambda o: o.long)
def test_approximated_and_ignored_options_warn_once(option):
    verb = "is approximated" if option.level(SBATCH) == APPROXIMATED else "has no effect"
    expected = f"--{option.long} {verb}: {option.note}"
    job, _ = submit(script(), _argv(option) + ["job.sh"])
    assert messages(job) == [expected]
    assert job.warnings[0].location is None
    # Repeated in the script and on the command line: still one warning, at the first use.
    words = " ".join(_argv(option))
    job, _ = submit(script(f"#SBATCH {words}", f"#SBATCH {words}"), _argv(option) + ["job.sh"])
    assert messages(job) == [expected]
    assert job.warnings[0].location == f"job.sh:2: #SBATCH {words}"


def test_honoured_options_do_not_warn():
    job, _ = submit(script("#SBATCH -N 2 -n 4 -c 2 --mem=1G -t 10 -J x -o o.txt --gres=gpu:1"))
    assert messages(job) == []


def test_each_warned_option_warns_once_in_order():
    job, _ = submit(script("#SBATCH --mail-type=END --mail-user=a@b --hint=nomultithread",
                           "#SBATCH --mail-type=FAIL"),
                    ["--mail-type=ALL", "job.sh"], {"SBATCH_EXCLUSIVE": ""})
    assert [m.split(":")[0] for m in messages(job)] == [
        "--mail-type has no effect", "--mail-user has no effect", "--hint has no effect",
        "--exclusive is approximated"]
    assert job.warnings[-1].location == "SBATCH_EXCLUSIVE"
    assert job.other("mail_type") == ("ALL",)


# -- Slurm's mutual-exclusion checks (slurm_opt.c validate_*; SUMMARY §7) -----------------------

MEM_FATAL = "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive."


@pytest.mark.parametrize("lines, args, env, first_line", [
    # Observed on 22.05: --mem=1000 --mem-per-cpu=100 → fatal, exit 1.
    ([], "--mem=1000 --mem-per-cpu=100 job.sh", {}, MEM_FATAL),
    ([], "--mem-per-gpu=1G --mem=1000 job.sh", {}, MEM_FATAL),
    # #SBATCH lines count as the command line for this check (set_by_env is false).
    (["#SBATCH --mem=4G"], "--mem-per-cpu=1G job.sh", {}, MEM_FATAL),
    # Two of them from the environment.
    ([], "job.sh", {"SBATCH_MEM_PER_NODE": "1G", "SBATCH_MEM_PER_CPU": "100"},
     "sbatch: fatal: SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are "
     "mutually exclusive."),
    # 26.05 refuses every --gres=gpu + --gpus-per-node pair; Slurm before it accepts them
    # (22.05 observed). sbatch-k8s accepts the same GPUs asked twice (tests/pod_side/
    # test_gres_gpus_per_node.py) and refuses a pair that disagrees, in 26.05's words.
    ([], "--gres=gpu:1 --gpus-per-node=2 job.sh", {},
     "sbatch: fatal: --gpus-per-node and --gres=gpu are mutually exclusive."),
    ([], "--gres=gpu:a100:2 job.sh", {"SBATCH_GPUS_PER_NODE": "2"},
     "sbatch: fatal: --gpus-per-node and --gres=gpu are mutually exclusive."),
    (["#SBATCH --gpus-per-node=2"], "--gres=gpu job.sh", {},
     "sbatch: fatal: --gpus-per-node and --gres=gpu are mutually exclusive."),
    # 26.05: fatal. Real Slurm 22.05 accepted --exclusive --oversubscribe (the last one won);
    # sbatch-k8s follows 26.05's _validate_share_options.
    ([], "--exclusive --oversubscribe job.sh", {},
     "sbatch: fatal: --exclusive and --oversubscribe options are mutually exclusive"),
    (["#SBATCH -s"], "--exclusive=user job.sh", {},
     "sbatch: fatal: --exclusive and --oversubscribe options are mutually exclusive"),
    ([], "-c 2 --cpus-per-gpu=1 job.sh", {},
     "sbatch: fatal: --cpus-per-task, --tres-per-task=cpu:#, and --cpus-per-gpu are mutually "
     "exclusive"),
    ([], "--ntasks-per-gpu=1 --gpus-per-task=1 job.sh", {},
     "sbatch: fatal: --gpus-per-task is mutually exclusive with --ntasks-per-gpu and "
     "SLURM_NTASKS_PER_GPU"),
    ([], "--ntasks-per-gpu=1 --ntasks-per-node=2 job.sh", {},
     "sbatch: fatal: --ntasks-per-node is mutually exclusive with --ntasks-per-gpu and "
     "SLURM_NTASKS_PER_GPU"),
])
def test_mutually_exclusive_options(lines, args, env, first_line):
    e = error_of(script(*lines), args, env)
    assert rendered(e) == [first_line]
    assert e.exit_code == 1


@pytest.mark.parametrize("lines, args, env, expected", [
    # A memory option on the command line clears the others set by the environment ...
    ([], "--mem=1G job.sh", {"SBATCH_MEM_PER_CPU": "100"}, (1024, None, None)),
    ([], "--mem-per-cpu=100 job.sh", {"SBATCH_MEM_PER_NODE": "1G", "SBATCH_MEM_PER_GPU": "1G"},
     (None, 100, None)),
    # ... and so does one in the script, though the environment otherwise beats the script.
    (["#SBATCH --mem=4G"], "job.sh", {"SBATCH_MEM_PER_CPU": "100"}, (4096, None, None)),
])
def test_command_line_memory_option_clears_the_environments(lines, args, env, expected):
    job, _ = submit(script(*lines), args, env)
    assert (job.mem_per_node_mb, job.mem_per_cpu_mb, job.mem_per_gpu_mb) == expected


@pytest.mark.parametrize("args, env", [
    # Only --exclusive/-s both given as options conflict; SBATCH_EXCLUSIVE does not.
    ("-s job.sh", {"SBATCH_EXCLUSIVE": ""}),
    # --gres for something other than a GPU is fine with --gpus-per-node.
    ("--gres=shard:1 --gpus-per-node=1 job.sh", {}),
])
def test_combinations_that_are_not_exclusive(args, env):
    submit(script(), args, env)


def test_gpus_per_task_from_the_environment_is_named_as_a_variable():
    e = error_of(script(), "--ntasks-per-gpu=1 job.sh", {"SBATCH_GPUS_PER_TASK": "1"})
    assert rendered(e) == ["sbatch: fatal: SLURM_GPUS_PER_TASK is mutually exclusive with "
                           "--ntasks-per-gpu and SLURM_NTASKS_PER_GPU"]


def test_tres_per_task_with_ntasks_per_gpu_is_fatal():
    e = error_of(script(), "--tres-per-task=gres/gpu:1 --ntasks-per-gpu=1 job.sh")
    assert rendered(e) == ["sbatch: fatal: --tres-per-task is mutually exclusive with "
                           "--ntasks-per-gpu and SLURM_NTASKS_PER_GPU"]


def test_tres_per_task_cpu_with_cpus_per_gpu_is_fatal():
    e = error_of(script(), "--tres-per-task=cpu:2 --cpus-per-gpu=1 job.sh")
    assert rendered(e) == ["sbatch: fatal: --cpus-per-task, --tres-per-task=cpu:#, and "
                           "--cpus-per-gpu are mutually exclusive"]


def test_command_line_cpus_per_task_clears_the_environments_cpus_per_gpu():
    job, _ = submit(script(), "-c 2 --gpus-per-node=1 job.sh", {"SBATCH_CPUS_PER_GPU": "4"})
    assert (job.cpus_per_task, job.cpus_per_gpu) == (2, None)


def test_command_line_cpus_per_gpu_clears_the_environments_tres_per_task_cpu():
    job, _ = submit(script(), "--cpus-per-gpu=2 --gpus-per-node=1 job.sh",
                    {"SBATCH_TRES_PER_TASK": "cpu=3,gres/shard:1"})
    assert (job.cpus_per_gpu, job.tres_per_task) == (2, (("gres/shard", 1),))


@pytest.mark.parametrize("args, env, first_line", [
    ("job.sh", {"SBATCH_TRES_PER_TASK": "cpu:2", "SBATCH_CPUS_PER_GPU": "1"},
     "sbatch: fatal: --cpus-per-task, --tres-per-task=cpu:#, and --cpus-per-gpu are mutually "
     "exclusive"),
    ("--tres-per-task=cpu:2 --ntasks-per-gpu=1 job.sh", {},
     "sbatch: fatal: --tres-per-task is mutually exclusive with --ntasks-per-gpu and "
     "SLURM_NTASKS_PER_GPU"),
    ("--ntasks-per-gpu=1 job.sh", {"SBATCH_TRES_PER_TASK": "gres/gpu:1"},
     "sbatch: fatal: SLURM_TRES_PER_TASK is mutually exclusive with --ntasks-per-gpu and "
     "SLURM_NTASKS_PER_GPU"),
    ("--ntasks-per-gpu=1 --gpus-per-socket=1 job.sh", {},
     "sbatch: fatal: --gpus-per-socket is mutually exclusive with --ntasks-per-gpu and "
     "SLURM_NTASKS_PER_GPU"),
    ("--ntasks-per-tres=2 --ntasks-per-node=1 job.sh", {},
     "sbatch: fatal: --ntasks-per-node is mutually exclusive with --ntasks-per-gpu and "
     "SLURM_NTASKS_PER_GPU"),
    ("--ntasks-per-gpu=1 --ntasks-per-tres=2 job.sh", {},
     "sbatch: fatal: Inconsistent values set to --ntasks-per-gpu=1 and --ntasks-per-tres=2 "),
])
def test_validate_options_as_26_05(args, env, first_line):
    e = error_of(script(), args, env)
    assert rendered(e) == [first_line]
    assert e.exit_code == 1


def test_cpus_in_the_environments_tres_per_task_go_with_ntasks_per_gpu():
    job, _ = submit(script(), "--ntasks-per-gpu=1 job.sh", {"SBATCH_TRES_PER_TASK": "cpu=2"})
    assert (job.ntasks_per_gpu, job.tres_per_task) == (1, (("cpu", 2),))


# -- counts (SUMMARY §7) ---------------------------------------------------------------------

@pytest.mark.parametrize("args, line, code", [
    ("-N 2-1", "Maximum node count 1 is less than minimum node count 2", 255),
    ("-N abc", '"abc" is not a valid node count', 255),
    ("--nodes=", '"" is not a valid node count', 255),
    ("-n abc", 'Invalid numeric value "abc" for --ntasks.', 1),
    ("-n 0", 'Invalid numeric value "0" for --ntasks.', 1),
    ("-n -2", 'Invalid numeric value "-2" for --ntasks.', 1),
    ("-c 0", 'Invalid numeric value "0" for --cpus-per-task.', 1),
    ("--ntasks-per-node=x", 'Invalid numeric value "x" for --ntasks-per-node.', 1),
])
def test_count_errors(args, line, code):
    e = error_of(script(), args + " job.sh")
    assert rendered(e) == [f"sbatch: error: {line}"]
    assert e.exit_code == code
    # The same from a directive: Slurm's line alone (the location is kept for --k8s-lint).
    e = error_of(script(f"#SBATCH {args}"))
    assert rendered(e) == [f"sbatch: error: {line}"]
    assert (e.exit_code, e.location) == (code, f"job.sh:2: #SBATCH {args}")


def test_zero_nodes_is_left_to_the_allocation():
    """``-N 0`` is refused by the controller (allocate), not by option parsing."""
    job, _ = submit(script(), "-N 0 job.sh")
    assert job.nodes == NodeRange(0, 0)


@pytest.mark.parametrize("text", ["\u0661", "2 ", "2_0", "0x2", "\u00b2", " ", "+"])
def test_numeric_values_are_ascii_decimal(text):
    """Observed on 22.05 for '\u0661', '2 ', '2_0', '0x2': rc 1 with this line."""
    e = error_of(script(), ["-n", text, "job.sh"])
    assert rendered(e) == [f'sbatch: error: Invalid numeric value "{text}" for --ntasks.']
    assert e.exit_code == 1


@pytest.mark.parametrize("text", ["+2", " 2", "\t2", "02"])
def test_numeric_values_take_strtols_leading_blanks_and_sign(text):
    """Observed on 22.05: '-n +2' and '-n " 2"' run with 2 processors."""
    job, _ = submit(script(), ["-n", text, "job.sh"])
    assert job.ntasks == 2


@pytest.mark.parametrize("args, line", [
    ("--tres-per-task=cpu:\u00b2", "Invalid --tres-per-task=cpu=0"),
    ("--tres-per-task=cpu=0", "Invalid --tres-per-task=cpu=0"),
    ("--tres-per-task=gres/gpu:1,cpu:-2", "Invalid --tres-per-task=cpu=-2"),
])
def test_tres_per_task_cpu_count_is_atoi_and_positive(args, line):
    """26.05's _set_tres_per_task_from_sibling_opt_internal (no --tres-per-task in 22.05)."""
    e = error_of(script(), args + " job.sh")
    assert rendered(e) == [f"sbatch: fatal: {line}"]
    assert e.exit_code == 1


def test_tres_per_task_other_counts_are_ascii_decimal():
    e = error_of(script(), "--tres-per-task=gres/gpu:\u00b9 job.sh")
    assert rendered(e) == ["sbatch: error: Invalid --tres-per-task specification"]


# -- invalid directives and getopt errors from the script ---------------------------------------

@pytest.mark.parametrize("line, word", [
    ("#SBATCH somepositional", "somepositional"),
    ("#SBATCH -N 2 somepositional", "somepositional"),
    ("#SBATCH -N 2 -- x", "x"),
    ("#SBATCHX --time=5", "X"),
    # Not a hetjob separator: Slurm compares ASCII case only (KELVIN SIGN lowers to 'k').
    ("#SBATCH pac\u212ajob", "pac\u212ajob"),
])
def test_positional_word_is_an_invalid_directive(line, word):
    e = error_of(script(line))
    assert rendered(e) == [f"sbatch: error: Invalid directive found in batch script: {word}"]
    assert (e.exit_code, e.location) == (255, f"job.sh:2: {line}")


@pytest.mark.parametrize("line, first", [
    ("#SBATCH --bogus", "sbatch: unrecognized option '--bogus'"),
    ("#SBATCH --time", "sbatch: option '--time' requires an argument"),
    ("#SBATCH --ntask=2", "sbatch: option '--ntask=2' is ambiguous; possibilities: '--ntasks' "
                          "'--ntasks-per-core' '--ntasks-per-gpu' '--ntasks-per-node' "
                          "'--ntasks-per-socket' '--ntasks-per-tres'"),
])
def test_getopt_errors_from_directives_are_slurms_alone(line, first):
    e = error_of(script(line))
    assert rendered(e) == [first, 'Try "sbatch --help" for more information']
    assert e.location == f"job.sh:2: {line}"


def test_invalid_value_from_a_variable_names_the_variable():
    e = error_of(script(), "job.sh", {"SBATCH_TIMELIMIT": "abc"})
    assert rendered(e) == ["sbatch: error: Invalid --time specification"]
    assert e.location == "SBATCH_TIMELIMIT"


def test_given_records_every_source_in_order():
    job, _ = submit(script("#SBATCH -t 10"), "-t 30 job.sh", {"SBATCH_TIMELIMIT": "20"})
    assert [(r.name, r.raw, r.source) for r in job.given] == [
        ("time", "10", "job.sh:2: #SBATCH -t 10"),
        ("time", "20", "SBATCH_TIMELIMIT"),
        ("time", "30", "command line"),
    ]
