"""squeue output, byte for byte against real Slurm 22.05 (see builders.py for the records)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from parsers.formats.squeue_format import (
    DEFAULT_FORMAT,
    DEFAULT_FORMAT2,
    LONG_FORMAT,
    LONG_FORMAT2,
    START_FORMAT,
    format_squeue,
    format_squeue_fields,
    parse_format,
    parse_long_format,
)
from parsers.formats.messages import invalid_user_error
from parsers.formats.squeue_select import expand_pending_arrays, select_jobs, select_steps
from parsers.formats.squeue_sort import sort_jobs, sort_steps
from parsers.formats.squeue_steps import format_squeue_steps
from parsers.report_options.squeue_options import parse_squeue_args
from tests.pod_side.formats.builders import (
    SQUEUE_NOW,
    START,
    at,
    job,
    live_jobs,
    recorded,
    step,
)

ENVPROBE_START = at("09:04:37")


def _examples():
    running = job(3, "big1", "RUNNING", priority=4294901760, node_count=4,
                  node_list="n[1-4]", start_time=at("09:04:49"))
    pending = [job(4, "big2", "PENDING", priority=4294901759, reason="Resources",
                   node_count=4),
               job(5, "dep", "PENDING", priority=4294901758, reason="Dependency"),
               job(6, "held", "PENDING", priority=0, reason="JobHeldUser")]
    return [running, *pending]


def test_default_format_one_running_job() -> None:
    envprobe = job(1, "envprobe", "RUNNING", node_count=2, node_list="n[1-2]",
                   start_time=ENVPROBE_START)
    out = format_squeue_fields([envprobe], DEFAULT_FORMAT2, ENVPROBE_START)
    assert out == recorded("examples/squeue-default.txt")
    assert format_squeue([envprobe], DEFAULT_FORMAT, ENVPROBE_START) == out


def test_pending_reasons_sort_before_running() -> None:
    now = at("09:04:49")
    jobs = sort_jobs(_examples(), None, now)
    assert format_squeue_fields(jobs, DEFAULT_FORMAT2, now) == recorded(
        "examples/squeue-states.txt")


def test_long_listing_starts_with_the_date() -> None:
    now = at("09:04:49")
    jobs = sort_jobs(_examples(), None, now)
    out = format_squeue_fields(jobs, LONG_FORMAT2, now, date_line=True)
    assert out == recorded("examples/squeue-long.txt")
    assert format_squeue(jobs, LONG_FORMAT, now, date_line=True) == out


LIVE_CASES = [
    # (recorded file, squeue arguments)
    ("squeue-default", []),
    ("squeue-long", ["-l"]),
    ("squeue-all", ["-o", "%all"]),
    ("squeue-start", ["--start"]),
    ("squeue-O", ["-O", "jobid:6,arrayjobid:.5,arraytaskid,name:.4x,state:10|,reasonlist,"
                        "timelimit:.12,timeleft:.12,endtime,starttime,submittime,mincpus:.4,"
                        "numcpus:.4,minmemory:.6,command:.9,workdir:12,stdout:.14,"
                        "dependency:.18,comment"]),
    ("squeue-O-bogus", ["-O", "jobid,bogus:5x,name:.3|"]),
    ("squeue-o-weird", ["-o", "pre%.3i|%-5j|%5j|%.20e %.10L %m %c %C %h %n %x %Nend"]),
]


@pytest.mark.parametrize("name, argv", LIVE_CASES, ids=[c[0] for c in LIVE_CASES])
def test_live_listing(name: str, argv: list) -> None:
    query = parse_squeue_args(argv, {})
    jobs = select_jobs(live_jobs(), query, SQUEUE_NOW)
    jobs = sort_jobs(jobs, query.sort, SQUEUE_NOW)
    render = format_squeue_fields if query.format_is_long else format_squeue
    out = render(jobs, query.format, SQUEUE_NOW, date_line=query.date_line)
    assert out == recorded(f"live/{name}.txt")


def test_array_tasks_expand_in_place_with_r() -> None:
    jobs = expand_pending_arrays(sort_jobs(live_jobs(), None, SQUEUE_NOW))
    assert format_squeue_fields(jobs, DEFAULT_FORMAT2, SQUEUE_NOW) == recorded(
        "live/squeue-r.txt")


def test_selecting_one_pending_task_narrows_the_array_line() -> None:
    query = parse_squeue_args(["-j", "185_4", "-h"], {})
    jobs = select_jobs(live_jobs(), query, SQUEUE_NOW)
    assert format_squeue(jobs, "%i %K %t", SQUEUE_NOW, header=False) == "185_4 4 PD\n"
    query = parse_squeue_args(["-j185_3,185_5,185_1"], {})
    jobs = sort_jobs(select_jobs(live_jobs(), query, SQUEUE_NOW), None, SQUEUE_NOW)
    assert format_squeue(jobs, "%i", SQUEUE_NOW) == "JOBID\n185_[3,5]\n185_1\n"


@pytest.mark.parametrize("argv, ids", [
    (["-t", "R"], [183, 184, 190, 191]),
    (["-n", "LIM,dep"], [187, 184]),
    (["-p", "gpu"], []),
    (["-w", "n1"], [183, 184]),
    (["-t", "all", "-u", "nobody"], []),
])
def test_selection(argv: list, ids: list) -> None:
    query = parse_squeue_args(argv, {})
    users = None if query.users is None else set()
    jobs = sort_jobs(select_jobs(live_jobs(), query, SQUEUE_NOW, user_ids=users), None,
                     SQUEUE_NOW)
    assert [j.job_id for j in jobs] == ids


def test_finished_jobs_are_hidden_unless_asked_for() -> None:
    done = job(68, "wrap", "COMPLETED", node_list="n1", start_time=at("09:30:21"),
               end_time=at("09:30:21"))
    assert select_jobs([done], parse_squeue_args([], {}), SQUEUE_NOW) == []
    shown = select_jobs([done], parse_squeue_args(["-t", "CD"], {}), SQUEUE_NOW)
    assert format_squeue_fields(shown, DEFAULT_FORMAT2, SQUEUE_NOW, header=False) == (
        "                68     debug     wrap     root CD       0:00      1 n1\n")


def test_cancelled_jobs_print_no_reason() -> None:
    cancelled = job(72, "dep", "CANCELLED", reason="Dependency")
    assert format_squeue_fields([cancelled], DEFAULT_FORMAT2, 0, header=False) == (
        "                72     debug      dep     root CA       0:00      1 \n")


def _live_steps(cpus_batch: int = 2):
    by_id = {j.job_id: j for j in live_jobs()}
    views = []
    for record in (by_id[183], by_id[184], by_id[190], by_id[191]):
        for s in record.steps:
            cpus = 0 if s.step_id in ("batch", "extern") else s.cpus
            views.append((record, replace(s, cpus=cpus)))
    return views


def test_running_steps() -> None:
    views = sort_steps(_live_steps(), None, SQUEUE_NOW)
    assert format_squeue_steps(views, now=SQUEUE_NOW) == recorded("live/squeue-steps.txt")


@pytest.mark.parametrize("argv, shown", [
    (["-s", "-j", "184"], ["184.batch", "184.extern"]),
    (["-s", "183.0"], ["183.0"]),
    (["-s", "-w", "n4"], ["185_2.batch", "185_2.extern"]),
    (["-s", "-j", "185_1"], ["185_1.batch", "185_1.extern"]),
])
def test_step_selection(argv: list, shown: list) -> None:
    query = parse_squeue_args(argv, {})
    views = sort_steps(select_steps(_live_steps(), query), None, SQUEUE_NOW)
    out = format_squeue_steps(views, "%i", SQUEUE_NOW, header=False)
    assert out.split() == shown


def test_unknown_users_are_reported_and_select_nothing() -> None:
    error = invalid_user_error("squeue", "nosuchuser")
    assert (error.render("squeue"), error.exit_code) == (
        "squeue: error: Invalid user: nosuchuser\n\n", 0)
    error = invalid_user_error("scancel", "nosuchuser")
    assert (error.render("scancel"), error.exit_code) == (
        "scancel: error: Invalid user name: nosuchuser\n", 1)


def test_running_steps_with_field_list() -> None:
    views = sort_steps(_live_steps(), None, SQUEUE_NOW)
    spec = ("stepid:.14,stepname:.8,numtasks:.4,numcpus:.4,nodes:.10,starttime,timelimit,"
            "arrayjobid:.6,arraytaskid:.5,jobid:.5")
    assert format_squeue_steps(views, spec, SQUEUE_NOW, long_format=True) == recorded(
        "live/squeue-steps-O.txt")


def test_steps_of_the_srun_observation() -> None:
    """/work/slurm-observations/02-srun-in-alloc: ``squeue -s`` inside job 29."""
    now = at("09:22:04")
    job29 = job(29, "job1.sh", "RUNNING", node_count=2, node_list="n[1-2]",
                start_time=now - 11)
    views = [(job29, step("extern", "extern", "RUNNING", now - 11, "n[1-2]", 2, 2, 0)),
             (job29, step("batch", "batch", "RUNNING", now - 11, "n1", 1, 1, 0)),
             (job29, step("18", "sleep", "RUNNING", now - 1, "n1", 1, 1, 2))]
    out = format_squeue_steps(sort_steps(views, None, now), now=now)
    assert out == recorded("observations/squeue-steps-job29.txt")


@pytest.mark.parametrize("fmt, errors", [
    ("%.3i|%-5j|%5j|", ("Invalid job format specification: -",)),
    ("abc", ()),
    ("%all", ()),
    ("%i%", ()),
])
def test_format_errors(fmt: str, errors: tuple) -> None:
    assert parse_format(fmt).errors == errors


def test_long_format_widths_and_suffixes() -> None:
    parsed = parse_long_format("name,state:.8 ,reasonlist:0,timeused:-3,bogus")
    assert [(i.width, i.right, i.suffix) for i in parsed.items] == [
        (20, False, ""), (8, True, " "), (0, False, ""), (-3, False, ""), (20, False, "")]
    assert parsed.errors == ("Invalid job format specification: bogus",)


def test_start_format_is_squeues() -> None:
    assert parse_squeue_args(["--start"], {}).format == START_FORMAT


def test_running_time_and_limits() -> None:
    running = job(9, "t", "RUNNING", start_time=START, time_limit_min=90)
    now = START + 3723
    assert format_squeue([running], "%M|%l|%L|%.5M|%5l", now, header=False) == (
        "1:02:03|1:30:00|27:57|1:02:03|1:30:\n")


def test_array_fields_of_the_commands_observation() -> None:
    """06-commands: ``squeue -j 103 -o …`` (one id: the controller returns the array's
    pending rest, then its tasks newest first)."""
    now = at("09:38:32")
    common = dict(name="runarr", array_job_id=103, start_time=now - 2)
    rest = job(103, "runarr", "PENDING", array_job_id=103, array_pending="2-20%2",
               reason="JobArrayTaskLimit")
    jobs = [rest, job(107, state="RUNNING", array_task_id=1, node_list="n2", **common),
            job(106, state="RUNNING", array_task_id=0, node_list="n1", **common)]
    out = format_squeue(sort_jobs(jobs, None, now),
                        "%i|%F|%K|%A|%j|%t|%T|%M|%l|%L|%D|%C|%R|%P", now)
    assert out == recorded("observations/squeue-array-fields.txt")
