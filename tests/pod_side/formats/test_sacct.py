"""sacct output, byte for byte against real Slurm 22.05."""

from __future__ import annotations

from typing import List

import pytest

from parsers.input_errors import SlurmInputError
from parsers.formats.sacct_format import DEFAULT_FIELDS, format_sacct, parse_format
from parsers.job_filters import sacct_selects
from parsers.job_records import JobRecord
from parsers.report_options.sacct_options import parse_sacct_args
from tests.pod_side.formats.builders import (
    SACCT_NOW,
    at,
    job,
    live_jobs,
    recorded,
    sacct_order,
    step,
    ts,
)

T0 = at("09:04:37")


def _envprobe() -> JobRecord:
    return job(1, "envprobe", "COMPLETED", cpus=4, node_count=2, node_list="n[1-2]",
               start_time=T0, end_time=T0 + 3, steps=(
                   step("batch", "batch", "COMPLETED", T0, "n1", 1, 1, 2),
                   step("extern", "extern", "COMPLETED", T0, "n[1-2]", 2, 2, 4),
                   step("0", "env", "COMPLETED", T0, "n[1-2]", 2, 4, 4)))


def _states_jobs() -> List[JobRecord]:
    cancelled = dict(state="CANCELLED", cancelled_by=0)
    return [
        job(3, "big1", cpus=16, node_count=4, node_list="n[1-4]", start_time=T0,
            end_time=T0 + 9, steps=(
                step("batch", "batch", "CANCELLED", T0, "n1", 1, 1, 4, exit_signal=15),
                step("extern", "extern", "COMPLETED", T0, "n[1-4]", 4, 4, 16)), **cancelled),
        job(4, "big2", cpus=4, node_count=4, reason="Resources", **cancelled),
        job(5, "dep", reason="Dependency", **cancelled),
        job(6, "held", reason="JobHeldUser", **cancelled),
        job(7, "fails", "FAILED", exit_code=3, reason="NonZeroExitCode", node_list="n1",
            start_time=T0, steps=(
                step("batch", "batch", "FAILED", T0, "n1", 1, 1, 1, exit_code=3),
                step("extern", "extern", "COMPLETED", T0, "n1", 1, 1, 1))),
        job(8, "sigkill", "FAILED", exit_signal=9, reason="JobLaunchFailure", node_list="n1",
            start_time=T0, steps=(
                step("batch", "batch", "CANCELLED", T0, "n1", 1, 1, 1, exit_signal=9),
                step("extern", "extern", "COMPLETED", T0, "n1", 1, 1, 1))),
    ]


@pytest.mark.parametrize("records, fields, parsable, name", [
    (lambda: [_envprobe()], DEFAULT_FIELDS, None, "sacct-default"),
    (lambda: [_envprobe()], "JobID,State,ExitCode,NodeList", "P", "sacct-parsable2"),
    (_states_jobs, DEFAULT_FIELDS, None, "sacct-states"),
    (_states_jobs, "JobID,JobName,State,ExitCode,NodeList,Reason", "P",
     "sacct-states-parsable2"),
], ids=["default", "parsable2", "states", "states-parsable2"])
def test_examples(records, fields: str, parsable, name: str) -> None:
    out = format_sacct(records(), parse_format(fields), T0 + 60, parsable=parsable)
    assert out == recorded(f"examples/{name}.txt")


def _observed(name: str) -> JobRecord:
    """A job of /work/slurm-observations/02-srun-in-alloc rebuilt from its sacct table."""
    lines = recorded(f"observations/{name}").splitlines()[2:]
    steps = []
    record = None
    for line in lines:
        cells = line.split()
        job_id, _, step_id = cells[0].partition(".")
        times = dict(start_time=SACCT_NOW - 60)
        if len(cells) >= 8 and cells[-2].startswith("2026"):
            times = dict(start_time=ts(cells[-2]), end_time=ts(cells[-1]))
        if not step_id:
            record = job(int(job_id), cells[1], cells[2], node_list=cells[4],
                         cpus=int(cells[5]), node_count=2, **times)
            continue
        steps.append(step(step_id, cells[1], cells[2], times.get("start_time"), cells[4],
                          1, int(cells[5]), int(cells[6]), end_time=times.get("end_time")))
    assert record is not None
    return JobRecord(**{**record.__dict__, "steps": tuple(steps)})


@pytest.mark.parametrize("name, fields", [
    ("sacct-job29.txt", "jobid,jobname,state,exitcode,nodelist,ntasks,alloccpus,start,end"),
    ("sacct-job30.txt", "jobid,jobname,state,exitcode,nodelist,ntasks,alloccpus"),
])
def test_observed_step_tables(name: str, fields: str) -> None:
    out = format_sacct([_observed(name)], parse_format(fields), SACCT_NOW)
    assert out == recorded(f"observations/{name}")


#: exit status of the batch script -> sacct's ExitCode, observed on the real Slurm 22.05
#: (scontrol showed the status as it is: 143:0, 200:0)
HIGH_EXITS = [(3, "3:0"), (128, "0:0"), (129, "1:0"), (137, "9:0"), (143, "15:0"),
              (200, "72:0"), (255, "127:0")]


@pytest.mark.parametrize("status, shown", HIGH_EXITS)
def test_exit_status_of_128_or_more_is_printed_less_128(status: int, shown: str) -> None:
    """sacct (not scontrol or squeue) takes 128 off an exit status of 128 or more, for the
    job and for its steps: a shell ending on its child's SIGTERM (143) reads 15:0."""
    record = job(9, "x", "FAILED", exit_code=status, reason="NonZeroExitCode",
                 node_list="n1", start_time=T0, end_time=T0 + 1, steps=(
                     step("batch", "batch", "FAILED", T0, "n1", 1, 1, 1, exit_code=status),
                     step("0", "sh", "FAILED", T0, "n1", 1, 1, 1, exit_code=status)))
    out = format_sacct([record], parse_format("JobID,ExitCode"), T0 + 60, parsable="P")
    assert out.splitlines()[1:] == [f"9|{shown}", f"9.batch|{shown}", f"9.0|{shown}"]


def test_a_configuring_job_is_running_in_the_database() -> None:
    """squeue shows CONFIGURING while a job's nodes (pods) start; slurmdbd stores a started
    job's base state (``job_state &= JOB_STATE_BASE``), so sacct says RUNNING."""
    record = job(9, "x", "CONFIGURING", node_list="n1", start_time=T0)
    out = format_sacct([record], parse_format("JobID,State"), T0 + 60, parsable="P")
    assert out.splitlines()[1:] == ["9|RUNNING"]
    assert sacct_selects(record, parse_sacct_args(["-s", "R"], {}, SACCT_NOW))


LIVE_CASES = [
    ("sacct-default", ["-j", "183,184,185,186,187,188,189"]),
    ("sacct-wide", ["-j", "183", "-o",
                    "jobid,jobidraw,jobname%12,state,start,end,elapsed,nodelist,reason,"
                    "timelimit,ntasks,nnodes,alloccpus,reqcpus,reqmem,submit,eligible,priority,"
                    "derivedexitcode,exitcode,cluster,workdir%14,partition,user,uid,group,gid,"
                    "qos,timelimitraw,cputime,cputimeraw,elapsedraw,allocnodes,reqnodes,"
                    "constraints,layout,flags"]),
    ("sacct-p", ["-j", "183", "-p", "-o",
                 "jobid,state,exitcode,nodelist,alloctres,reqtres,submitline%30"]),
    ("sacct-X-P", ["-X", "-j", "183", "-P", "--delimiter=:", "-o",
                   "jobid,jobname,state,reason,timelimit,elapsed"]),
    ("sacct-b", ["-b", "-j", "183"]),
    ("sacct-brief-n", ["-n", "-X", "-j", "183", "-o",
                       "jobid%-20,jobname%3,state%-12,exitcode%2"]),
]


@pytest.mark.parametrize("name, argv", LIVE_CASES, ids=[c[0] for c in LIVE_CASES])
def test_live(name: str, argv: list) -> None:
    query = parse_sacct_args(argv, {}, SACCT_NOW)
    out = format_sacct(sacct_order(live_jobs()), query.fields, SACCT_NOW,
                       parsable=query.parsable, header=query.header,
                       delimiter=query.delimiter, allocations_only=query.allocations_only)
    assert out == recorded(f"live/{name}.txt")


@pytest.mark.parametrize("text, names", [
    ("jobid,jobname", [("JobID", -12), ("JobName", 10)]),
    ("JOBN,st,sta", [("JobName", 10), ("Start", 19), ("Start", 19)]),
    ("  state%-12, exitcode%2", [("State", -12), ("ExitCode", 2)]),
    ("jobid%20,jobid", [("JobID", 20), ("JobID", 20)]),
    ("jobid,,state", [("JobID", -12)]),
    ("jobid,", [("JobID", -12)]),
    ("nodelist%abc", [("NodeList", 0)]),
])
def test_parse_format(text: str, names: list) -> None:
    assert [(f.name, f.width) for f in parse_format(text)] == names


def test_all_selects_every_field_with_one_width() -> None:
    fields = parse_format("a%5")
    assert len(fields) > 100 and {f.width for f in fields} == {5}


@pytest.mark.parametrize("text, message", [
    ("bogus", 'sacct: error: Invalid field requested: "bogus"\n'),
    ("jobid ,state", 'sacct: error: Invalid field requested: "jobid "\n'),
    ("allocgres", "sacct: fatal: AllocGRES has been removed, please use AllocTRES\n"),
])
def test_parse_format_errors(text: str, message: str) -> None:
    with pytest.raises(SlurmInputError) as e:
        parse_format(text)
    assert e.value.render("sacct") == message and e.value.exit_code == 1


@pytest.mark.parametrize("argv, req_mem, alloc_tres", [
    # jobs 382 (--mem=1500M) and 383 (--mem=2048M) of a real Slurm 22.05.8
    ([], ("1500M", "2G"), "billing=1,cpu=1,mem=2G,node=1"),
    (["--noconvert"], ("1500M", "2048M"), "billing=1,cpu=1,mem=2048M,node=1"),
    (["--units=K"], ("1536000K", "2097152K"), "billing=1,cpu=1,mem=2097152K,node=1"),
    (["--units=g"], ("1.46G", "2G"), "billing=1,cpu=1,mem=2G,node=1"),
    (["--noconvert", "--units=M"], ("1500M", "2048M"), "billing=1,cpu=1,mem=2048M,node=1"),
    (["--units=P"], ("0.00P", "0.00P"), "billing=1,cpu=1,mem=0.00P,node=1"),
])
def test_memory_amounts_follow_noconvert_and_units(argv: list, req_mem: tuple,
                                                   alloc_tres: str) -> None:
    query = parse_sacct_args(argv + ["-X", "-P", "-n", "-o", "ReqMem,AllocTRES"], {},
                             SACCT_NOW)
    records = [job(job_id, "m", "COMPLETED", cpus=1, node_count=1, node_list="n1",
                   min_memory_mb=mem, memory_per_cpu=False, start_time=T0, end_time=T0 + 3)
               for job_id, mem in ((382, 1500), (383, 2048))]
    shown = format_sacct(records, query.fields, SACCT_NOW, parsable="P", header=False,
                         allocations_only=True, convert=not query.noconvert,
                         units=query.units).splitlines()
    assert [line.split("|")[0] for line in shown] == list(req_mem)
    assert shown[1].split("|")[1] == alloc_tres


@pytest.mark.parametrize("value, first", [
    ("x", "sacct: error: Invalid unit type 'x'. Possible options are 'KMGTP'"),
    ("", "sacct: error: Invalid unit type '"),
])
def test_bad_units_in_slurms_two_lines(value: str, first: str) -> None:
    with pytest.raises(SlurmInputError) as raised:
        parse_sacct_args([f"--units={value}"], {}, SACCT_NOW)
    assert raised.value.render("sacct") == f"{first}\nsacct: fatal: Invalid unit type\n"
    assert raised.value.exit_code == 1
    assert parse_sacct_args(["--units=KB"], {}, SACCT_NOW).units == "K"
