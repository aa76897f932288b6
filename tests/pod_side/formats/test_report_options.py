"""Command lines of squeue, sacct, scancel, scontrol and sinfo.

Every error message below was checked against Slurm 22.05 (glibc getopt) on a real cluster.
"""

from __future__ import annotations

import pytest

from parsers.input_errors import SlurmInputError
from parsers.options import REQUIRED
from parsers.report_options.argv import options, parse_argv
from parsers.report_options.sacct_options import parse_sacct_args
from parsers.report_options.scancel_options import parse_scancel_args
from parsers.report_options.scontrol_options import parse_scontrol_args, show_job_id
from parsers.report_options.sinfo_options import format_error_lines, parse_sinfo_args
from parsers.report_options.squeue_options import parse_squeue_args
from tests.pod_side.formats.builders import at, ts

NOW = at("09:30:00")
STATES = ("PENDING,RUNNING,SUSPENDED,COMPLETED,CANCELLED,FAILED,TIMEOUT,NODE_FAIL,PREEMPTED,"
          "BOOT_FAIL,DEADLINE,OUT_OF_MEMORY,COMPLETING,CONFIGURING,RESIZING,RESV_DEL_HOLD,"
          "REQUEUED,REQUEUE_FED,REQUEUE_HOLD,REVOKED,SIGNALING,SPECIAL_EXIT,STAGE_OUT,STOPPED")


def _error(parse, command: str, argv: list, *extra) -> str:
    with pytest.raises(SlurmInputError) as e:
        parse(argv, *extra)
    assert e.value.exit_code == 1
    return e.value.render(command)


def test_permuting_getopt() -> None:
    table = options(("jobs/j", "?", "jobs"), ("user/u", "1", "user"), ("long/l", "0", "long"))
    given, operands = parse_argv("x", table, ["12", "-l", "-j", "-j5", "--user", "me", "a",
                                              "--jobs=7", "--", "-l"])
    assert [(g.key, g.value) for g in given] == [
        ("long", None), ("jobs", None), ("jobs", "5"), ("user", "me"), ("jobs", "7")]
    assert operands == ["12", "a", "-l"]


@pytest.mark.parametrize("argv, jobs", [
    (["-j1008"], [(1008, None)]),
    (["-j", "1008"], [(1008, None)]),
    (["--jobs=1008,1009"], [(1008, None), (1009, None)]),
    (["-j", "72x"], [(72, None)]),
    (["-j", "72_3"], [(72, 3)]),
    (["-j", "72_"], [(72, 0)]),
    (["-j", "72.batch"], [(72, None)]),
    (["-j"], None),
])
def test_squeue_jobs(argv: list, jobs) -> None:
    query = parse_squeue_args(argv, {})
    got = None if query.jobs is None else [(j.job_id, j.array_task_id) for j in query.jobs]
    assert got == jobs


def test_squeue_single_job_is_loaded_by_id() -> None:
    assert parse_squeue_args(["-j", "99999"], {}).single_job_id == 99999
    assert parse_squeue_args(["-j", "7,8"], {}).single_job_id is None


@pytest.mark.parametrize("argv, environ, check", [
    ([], {}, lambda q: q.format_is_long and q.format.startswith("jobarrayid:.18 ,")),
    (["-l"], {}, lambda q: q.date_line and "timelimit:.9" in q.format),
    (["-l", "-h"], {}, lambda q: not q.date_line),
    (["-s"], {}, lambda q: q.step_mode and q.format == "%.15i %.8j %.9P %.8u %.9M %N"),
    (["-j", "70", "-s"], {}, lambda q: q.step_mode and q.jobs[0].job_id == 70),
    (["-s", "70.0"], {}, lambda q: q.steps[0].step == "0"),
    (["-t", "pd,R,cg"], {}, lambda q: q.states == ("PENDING", "RUNNING", "COMPLETING")),
    (["-t", "ALL"], {}, lambda q: q.all_states),
    (["--start"], {}, lambda q: q.sort == "S" and q.states == ("PENDING",)),
    (["-p", "gpu"], {}, lambda q: q.partitions == ("gpu",) and q.all_partitions),
    (["--me"], {"SQUEUE_USERS": "bob"}, lambda q: q.me and q.users is None),
    ([], {"SQUEUE_USERS": "bob,carol"}, lambda q: q.users == ("bob", "carol")),
    ([], {"SQUEUE_FORMAT": "%i"}, lambda q: q.format == "%i" and not q.format_is_long),
    (["-o", "%j"], {"SQUEUE_FORMAT": "%i"}, lambda q: q.format == "%j"),
    ([], {"SQUEUE_FORMAT2": "jobid"}, lambda q: q.format == "jobid" and q.format_is_long),
    ([], {"SQUEUE_SORT": "-i"}, lambda q: q.sort == "-i"),
    (["-o", "%.3i|%-5j"], {}, lambda q: q.format_errors == (
        "Invalid job format specification: -",)),
    (["--help"], {}, lambda q: q.action == "help"),
    (["--nod", "n1"], {}, lambda q: q.nodes == ("n1",)),
])
def test_squeue_query(argv: list, environ: dict, check) -> None:
    assert check(parse_squeue_args(argv, environ))


@pytest.mark.parametrize("argv, message", [
    (["-j", "abc"], "squeue: error: Invalid job id: abc\n"),
    (["-t", "bogus"], "squeue: error: Invalid job state specified: bogus\n"
                      f"squeue: error: Valid job states include: {STATES}\n\n"),
    (["--bogus"], "squeue: unrecognized option '--bogus'\n"
                  'Try "squeue --help" for more information\n'),
    (["--bogus=3"], "squeue: unrecognized option '--bogus=3'\n"
                    'Try "squeue --help" for more information\n'),
    (["-Z"], "squeue: invalid option -- 'Z'\nTry \"squeue --help\" for more information\n"),
    (["-u"], "squeue: option requires an argument -- 'u'\n"
             'Try "squeue --help" for more information\n'),
    (["--help=x"], "squeue: option '--help' doesn't allow an argument\n"
                   'Try "squeue --help" for more information\n'),
    (["-o", "%i", "-l"], "squeue: fatal: Options -o(--format) and -l(--long) are mutually "
                         "exclusive. Please remove one and retry.\n"),
    (["-O", "jobid", "-o", "%i"], "squeue: error: -o (--format) is incompatible with -O "
                                  "(--Format)\n"),
    (["-s", "70"], "squeue: error: Invalid job_step id: 70.??\n"),
    (["-s", "abc"], "squeue: error: Invalid job_step id: abc.??\n"),
    (["-i", "0"], "squeue: error: --iterate=0\n\n"),
    (["-S", "Z"], "squeue: error: Invalid sort specification: Z\n"),
    (["-w", "a[3-1]"], "squeue: error: 'a[3-1]' invalid entry for --nodelist\n"),
    (["-j", "-s"], "squeue: error: Incompatible options --jobs and --steps\n"),
])
def test_squeue_errors(argv: list, message: str) -> None:
    assert _error(parse_squeue_args, "squeue", argv, {}) == message


def test_squeue_stray_word_prints_the_usage() -> None:
    text = _error(parse_squeue_args, "squeue", ["foo"], {})
    assert text.startswith("squeue: error: Unrecognized option: foo\n"
                           "Usage: squeue [-A account] [--clusters names]")


@pytest.mark.parametrize("argv, start, end", [
    ([], "2026-11-22T00:00:00", "2026-11-22T09:30:01"),
    (["-j", "5"], None, "2026-11-22T09:30:01"),
    (["-s", "R"], "2026-11-22T09:30:00", "2026-11-22T09:30:01"),
    (["-S", "2026-11-01", "-E", "now"], "2026-11-01T00:00:00", "2026-11-22T09:30:01"),
    (["-S", "noon", "-E", "teatime", "-s", "CD"], "2026-11-22T12:00:00",
     "2026-11-22T16:00:00"),
    (["-S", "now-1hour"], "2026-11-22T08:30:00", "2026-11-22T09:30:01"),
    (["-S", "11/20", "-E", "1121"], "2026-11-20T00:00:00", "2026-11-21T00:00:00"),
    (["-S", "12.24"], "2025-12-24T00:00:00", "2026-11-22T09:30:01"),
])
def test_sacct_window(argv: list, start, end: str) -> None:
    query = parse_sacct_args(argv, {}, NOW)
    assert query.start_time == (ts(start) if start else 0)
    assert query.end_time == ts(end)


@pytest.mark.parametrize("argv, environ, fields", [
    ([], {}, "JobID JobName Partition Account AllocCPUS State ExitCode"),
    (["-b"], {}, "JobID State ExitCode"),
    (["-b", "-o", "nodelist"], {}, "NodeList JobID State ExitCode"),
    ([], {"SACCT_FORMAT": "jobid,elapsed"}, "JobID Elapsed"),
    (["-o", "jobid", "--format=state"], {}, "JobID State"),
])
def test_sacct_fields(argv: list, environ: dict, fields: str) -> None:
    query = parse_sacct_args(argv, environ, NOW)
    assert " ".join(f.name for f in query.fields) == fields


def test_sacct_selection() -> None:
    query = parse_sacct_args(["-j", "1,2.batch,3_4,1", "-s", "pd,CA", "-X", "-P",
                              "--delimiter=::", "-n"], {}, NOW)
    assert [str(j) for j in query.jobs] == ["1", "2.batch", "3_4"]
    assert query.states == ("PENDING", "CANCELLED") and query.allocations_only
    assert (query.parsable, query.delimiter, query.header) == ("P", "::", False)
    assert query.all_users and query.users is None
    assert parse_sacct_args(["-u", "bob"], {}, NOW).users == ("bob",)
    assert parse_sacct_args(["-u", "-1"], {}, NOW).all_users


#: A valid value for each sacct option that takes one.
SACCT_VALUES = {"format": "jobid", "delimiter": "|", "starttime": "now-1hour",
                "endtime": "now", "states": "cd", "jobs": "1", "timelimit_min": "1",
                "timelimit_max": "60", "nnodes": "1-2", "ncpus": "2", "whole_hetjob": "yes",
                "units": "M", "users": "bob", "nodelist": "n1"}


def test_every_sacct_option_is_applied_or_refused() -> None:
    """No option sacct reads is dropped on the way to its query: each either reaches a
    query field, is one of the documented no-ops, or is refused in one line."""
    from parsers.report_options.sacct_options import DOCS, SACCT_OPTIONS

    for option in SACCT_OPTIONS:
        if option.key in ("help", "usage", "version", "helpformat", "helpreason",
                          "helpstate", "autocomplete", "json", "yaml"):
            continue
        word = f"--{option.long}"
        if option.arg == REQUIRED:
            word += "=" + SACCT_VALUES.get(option.key, "x")
        argv = [word] + (["-j", "1"] if option.key in ("script", "env") else [])
        try:
            parse_sacct_args(argv, {}, NOW)
        except SlurmInputError as e:
            assert DOCS[option.key].refused, (word, str(e))


@pytest.mark.parametrize("argv, message", [
    (["-j", "abc"], "sacct: fatal: Bad job/step specified: abc\n"),
    (["-j", "1_[2-3]"], "sacct: fatal: Bad job array element specified: 1\n"),
    (["-j", "1.bogus"], "sacct: fatal: Bad step specified: 1\n"),
    (["-s", "bogus"], "sacct: fatal: unrecognized job state value 'bogus'\n"),
    (["-s", "configuring"], "sacct: fatal: job state configuring is not supported / "
                            "accounted\n"),
    (["-S", "bogus"], "Invalid time specification (pos=0): bogus\n"),
    (["-S", "12/40"], "Invalid time specification (pos=3): 12/40\n"),
    (["-S", "12:5"], "Invalid time specification (pos=4): 12:5\n"),
    (["-S", "now+"], "Invalid time specification (pos=3): now+\n"),
    (["-S", "25:00"], "Invalid time specification (pos=0): 25:00\n"),
    (["-S", "0"], "Invalid time specification (pos=-1): 0\n"),
    (["-S", "now+1x"], "Invalid time specification (pos=4): now+1x\n"),
    (["-S", "1:2"], "Invalid time specification (pos=3): 1:2\n"),
    (["foo", "bar"], "sacct: error: Unknown arguments:\nsacct: error:  foo\n"
                     "sacct: error:  bar\n"),
    (["-o", "jobid,bogus"], 'sacct: error: Invalid field requested: "bogus"\n'),
    (["--bogus"], "sacct: unrecognized option '--bogus'\n"),
    (["--no"], "sacct: option '--no' is ambiguous; possibilities: '--nodelist' "
               "'--noconvert' '--noheader'\n"),
    (["-j"], "sacct: option requires an argument -- 'j'\n"),
    (["-S", "now", "-E", "2026-01-01"], "sacct: error: Start time (2026-11-22T09:30:00) "
                                       "requested is after end time (2026-01-01T00:00:00).\n"),
])
def test_sacct_errors(argv: list, message: str) -> None:
    assert _error(parse_sacct_args, "sacct", argv, {}, NOW) == message


@pytest.mark.parametrize("argv, jobs", [
    (["1234"], ["1234"]),
    (["1234_7", "20_[1-3]", "5.1,6"], ["1234_7", "20_1", "20_2", "20_3", "5.1", "6"]),
    (["12_*"], ["12_*"]),
    (["7+1"], ["7+1"]),
])
def test_scancel_ids(argv: list, jobs: list) -> None:
    assert [str(j) for j in parse_scancel_args(argv, {}).jobs] == jobs


def test_scancel_signal_and_filters() -> None:
    request = parse_scancel_args(["-s", "usr1", "-t", "pd", "-A", "ACC", "-u", "bob", "9"],
                                 {"SCANCEL_PARTITION": "gpu", "SCANCEL_BATCH": "maybe"})
    assert (request.signal, request.signal_name) == (10, "USR1")
    assert (request.state, request.account, request.user) == ("PENDING", "acc", "bob")
    assert request.partition == "gpu"
    assert request.warnings == ("Unrecognized SCANCEL_BATCH value: maybe",)
    assert parse_scancel_args(["--me"], {}).me
    assert parse_scancel_args(["-Q", "1"], {}).verbose == -1


@pytest.mark.parametrize("argv, message", [
    (["abc"], "scancel: error: Invalid job id abc\n"),
    ([], "scancel: error: No job identification provided\n"),
    (["-t", "bogus", "1"], "Invalid job state specified: bogus\n"
                           "Valid job states are PENDING, RUNNING, and SUSPENDED\n"),
    (["-s", "BOGUS", "1"], "Unknown job signal: BOGUS\n"),
    (["-s", "0", "1"], "Unknown job signal: 0\n"),
    (["99999_[1-3"], "scancel: error: Invalid job id 99999_[1-3\n"),
    (["99999_[1-3]x"], "scancel: error: Invalid job id 99999_[1-3]x\n"),
    (["0"], "scancel: error: Invalid job id 0\n"),
    (["99999.abc"], "scancel: error: Invalid job id 99999.abc\n"),
    (["99999x"], "scancel: error: Invalid job id 99999x\n"),
    (["-5"], "scancel: invalid option -- '5'\nTry \"scancel --help\" for more information\n"),
    (["--no"], "scancel: option '--nodelist' requires an argument\n"
               'Try "scancel --help" for more information\n'),
])
def test_scancel_errors(argv: list, message: str) -> None:
    assert _error(parse_scancel_args, "scancel", argv, {}) == message


@pytest.mark.parametrize("argv, entity, value", [
    (["show", "hostnames", "n[1-3]"], "hostnames", "n[1-3]"),
    (["show", "hostn"], "hostnames", None),
    (["show", "hostl", "n1,n2"], "hostlist", "n1,n2"),
    (["show", "hostlists", "x"], "hostlistsorted", "x"),
    (["sho", "job=12"], "jobs", "12"),
    (["-o", "show", "jobs", "70"], "jobs", "70"),
])
def test_scontrol_show(argv: list, entity: str, value) -> None:
    request = parse_scontrol_args(argv)
    assert (request.command, request.entity, request.value) == ("show", entity, value)


@pytest.mark.parametrize("argv, message", [
    (["show", "host", "n1"], "invalid entity:host for keyword:show \n"),
    (["show", "bogus"], "invalid entity:bogus for keyword:show \n"),
    (["show", "hostnames", "a", "b"], "too many arguments for keyword:show\n"),
    (["bogus"], "invalid keyword: bogus\n"),
    (["--no"], "scontrol: unrecognized option '--no'\n"
               'Try "scontrol --help" for more information\n'),
])
def test_scontrol_errors(argv: list, message: str) -> None:
    assert _error(parse_scontrol_args, "scontrol", argv) == message


@pytest.mark.parametrize("value, shown", [("70", "70"), ("69_3", "69_3"), ("abc", None)])
def test_scontrol_job_ids(value: str, shown) -> None:
    selected = show_job_id(value)
    assert (None if selected is None else str(selected)) == shown


@pytest.mark.parametrize("value", ["72_x", "0", "72.1"])
def test_scontrol_bad_job_ids(value: str) -> None:
    assert _error(lambda argv: show_job_id(argv[0]), "scontrol", [value]) == (
        "scontrol_print_job error: Invalid job id specified\n")


def test_sinfo_options() -> None:
    query = parse_sinfo_args(["-N", "-l", "-t", "IDLE,alloc", "-p", "gpu"], {})
    assert (query.node_oriented, query.long, query.format) == (True, True, None)
    assert query.states == ("idle", "alloc") and query.partitions == ("gpu",)
    assert format_error_lines(parse_sinfo_args(["-o", "%P %#"], {})) == [
        "Invalid node format specification: #"]
    assert format_error_lines(parse_sinfo_args(["-O", "partition,bogus:5x"], {})) == [
        "sinfo: error: Invalid job format specification: bogus"]
    assert parse_sinfo_args([], {"SINFO_FORMAT": "%P"}).format == "%P"


@pytest.mark.parametrize("argv, message", [
    (["-i", "0"], "sinfo: error: Error: invalid entry for --iterate=0\n"),
    (["-a", "-p", "debug"], "sinfo: error: Conflicting options, -a and -p, specified. "
                            "Please choose one or the other.\n"),
    (["-n", "a[3-1]"], "sinfo: error: _parse_single_range: Invalid range: `3-1'\n"
                       "sinfo: error: 'a[3-1]' invalid entry for --nodes\n"),
    (["--no"], "sinfo: option '--no' is ambiguous; possibilities: '--nodes' '--noconvert' "
               "'--noheader'\nTry \"sinfo --help\" for more information\n"),
    (["-o"], "sinfo: option requires an argument -- 'o'\n"
             'Try "sinfo --help" for more information\n'),
])
def test_sinfo_errors(argv: list, message: str) -> None:
    assert _error(parse_sinfo_args, "sinfo", argv, {}) == message
