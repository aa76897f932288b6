"""The reporting commands' filters over job records (:mod:`parsers.job_filters`).

Each filter is checked both ways: a job that matches is selected, one that does not is left
alone. Semantics follow Slurm 22.05 (``scancel -v`` lines were compared with a real one).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import pytest

from parsers.job_filters import (
    hosts_of,
    id_names,
    no_match_line,
    sacct_selects,
    scancel_selects,
)
from parsers.job_records import JobRecord
from parsers.report_options.ids import JobId
from parsers.report_options.sacct_options import parse_sacct_args
from parsers.report_options.scancel_options import parse_scancel_args
from tests.pod_side.formats.builders import at, job

NOW = at("12:00:00")
ALPHA = job(12, "alpha", "RUNNING", partition="gpu", account="proj", qos="high",
            node_list="n[1-2]", node_count=2, cpus=8, uid=1000, user="alice", group="lab",
            gid=500, features="a100&ib", reason="None", time_limit_min=60,
            submit_time=at("09:00:00"), start_time=at("09:01:00"))


def _cancels(argv: list, record: JobRecord = ALPHA, uid: Optional[int] = None,
             hosts: Optional[list] = None) -> bool:
    request = parse_scancel_args(argv, {})
    return scancel_selects(record, request, uid, None if hosts is None else set(hosts))


@pytest.mark.parametrize("matching, other", [
    (["-A", "proj"], ["-A", "other"]),
    (["-n", "alpha"], ["-n", "alph"]),
    (["-p", "gpu"], ["-p", "debug"]),
    (["-q", "high"], ["-q", "normal"]),
    (["-t", "R"], ["-t", "PD"]),
])
def test_scancel_field_filters(matching: list, other: list) -> None:
    assert _cancels(matching) and not _cancels(other)


def test_scancel_wckey_and_reservation_match_no_job() -> None:
    # sbatch-k8s jobs have neither; Slurm's filters select no job without one.
    assert not _cancels(["--wckey=key"]) and not _cancels(["--reservation=maint"])


def test_scancel_wckey_and_reservation_compare_the_jobs_fields() -> None:
    keyed = replace(ALPHA, reservation="maint", wckey="*key")
    assert _cancels(["--reservation=maint"], keyed)
    assert not _cancels(["--reservation=other"], keyed)
    assert _cancels(["--wckey=key"], keyed) and _cancels(["--wckey=*key"], keyed)
    assert not _cancels(["--wckey=other"], keyed)


def test_scancel_user_filter_compares_uids() -> None:
    assert _cancels(["-u", "alice"], uid=1000)
    assert not _cancels(["-u", "bob"], uid=1001)


def test_scancel_nodelist_selects_jobs_on_any_listed_node() -> None:
    assert _cancels(["-w", "n2,n9"], hosts=hosts_of("n2,n9"))
    assert not _cancels(["-w", "nosuchnode"], hosts=hosts_of("nosuchnode"))
    assert not _cancels(["-w", "n[1-"], hosts=hosts_of("n[1-"))  # malformed: no host


def test_scancel_filters_only_active_jobs() -> None:
    done = job(13, "alpha", "COMPLETED")
    assert not _cancels(["-n", "alpha"], record=done)
    pending = job(14, "alpha", "PENDING")
    assert _cancels(["-n", "alpha"], record=pending)


def test_scancel_request_knows_when_it_filters() -> None:
    assert not parse_scancel_args(["12"], {}).has_filters
    assert parse_scancel_args(["12", "-w", "n1"], {}).has_filters
    assert parse_scancel_args(["12", "-i"], {}).has_filters
    assert parse_scancel_args(["--me"], {}).has_filters


@pytest.mark.parametrize("selected, names", [
    (JobId(12), True), (JobId(13), False),
    (JobId(7), True),  # the array's id names every element
    (JobId(7, 3), True), (JobId(7, 4), False),
    (JobId(7, all_tasks=True), True), (JobId(8, all_tasks=True), False),
])
def test_scancel_ids_name_jobs_and_array_elements(selected: JobId, names: bool) -> None:
    element = job(12, "alpha", "RUNNING", array_job_id=7, array_task_id=3)
    assert id_names(selected, element) is names


def test_scancel_no_match_line_in_slurms_order() -> None:
    request = parse_scancel_args(["-w", "n3,n2", "-n", "nomatch", "-A", "ROOT"], {})
    assert no_match_line(request) == ("No active jobs match ALL job filters, including: "
                                      "account=root job_name=nomatch nodelist=n3,n2 ")


def _lists(argv: list, record: JobRecord = ALPHA, uids: Optional[set] = None,
           hosts: Optional[list] = None) -> bool:
    query = parse_sacct_args(argv + ["-S", "00:00"], {}, NOW)
    return sacct_selects(record, query, uids, None if hosts is None else set(hosts))


@pytest.mark.parametrize("matching, other", [
    (["-A", "proj"], ["-A", "other"]),
    (["--name", "alpha"], ["--name", "beta"]),
    (["-r", "gpu"], ["-r", "debug"]),
    (["-q", "high"], ["-q", "normal"]),
    (["-s", "R"], ["-s", "CD"]),
    (["-g", "lab"], ["-g", "other"]),
    (["-g", "500"], ["-g", "501"]),
    (["-C", "a100"], ["-C", "v100"]),
    (["--reason", "none"], ["--reason", "Resources"]),
    (["-j", "12"], ["-j", "13"]),
    (["-k", "30", "-K", "60"], ["-k", "61"]),
    (["-i", "2"], ["-i", "1"]),
    (["-I", "4-8"], ["-I", "9-16"]),
])
def test_sacct_filters(matching: list, other: list) -> None:
    assert _lists(matching) and not _lists(other)


def test_sacct_users_and_nodes() -> None:
    assert _lists([], uids={1000}) and not _lists([], uids={0})
    assert _lists(["-N", "n1"], hosts=["n1"]) and not _lists(["-N", "n3"], hosts=["n3"])


def test_sacct_wckeys_and_associations_select_nothing() -> None:
    assert not _lists(["-W", "key"]) and not _lists(["-x", "7"])


def test_sacct_wckeys_compare_the_jobs_wckey() -> None:
    keyed = replace(ALPHA, wckey="*key")
    assert _lists(["-W", "other,key"], record=keyed)
    assert not _lists(["-W", "other"], record=keyed)


@pytest.mark.parametrize("command", ["scancel", "squeue", "sacct", "sinfo", "scontrol"])
def test_every_report_option_is_applied_or_refused(command: str) -> None:
    from parsers.report_options.help import command_tables, report_help

    table, docs, _ = command_tables(command)
    assert {option.key for option in table} == set(docs)
    assert all(doc.text for doc in docs.values())
    assert report_help(command).count("\n") > len(docs)


@pytest.mark.parametrize("command, argv, line", [
    ("scancel", ["--admin-comment=x", "12"], "scancel: error: --admin-comment is not "
                                             "supported by sbatch-k8s: "),
    ("squeue", ["--json"], "squeue: error: --json is not supported by sbatch-k8s: "),
    ("sacct", ["--yaml"], "sacct: error: --yaml is not supported by sbatch-k8s: "),
    ("sinfo", ["--noconvert"], "sinfo: error: --noconvert is not supported by sbatch-k8s: "),
    ("scontrol", ["-u", "5", "show", "job"], "scontrol: error: --uid is not supported by "
                                             "sbatch-k8s: "),
])
def test_refused_options_say_so_in_one_line(command: str, argv: list, line: str) -> None:
    from parsers.input_errors import SlurmInputError
    from parsers.report_options import sacct_options as sacct, scancel_options as scancel, \
        scontrol_options as scontrol, sinfo_options as sinfo, squeue_options as squeue

    parse = {"scancel": lambda: scancel.parse_scancel_args(argv, {}),
             "squeue": lambda: squeue.parse_squeue_args(argv, {}),
             "sacct": lambda: sacct.parse_sacct_args(argv, {}, NOW),
             "sinfo": lambda: sinfo.parse_sinfo_args(argv, {}),
             "scontrol": lambda: scontrol.parse_scontrol_args(argv)}[command]
    with pytest.raises(SlurmInputError) as e:
        parse()
    rendered = e.value.render(command)
    assert rendered.startswith(line) and rendered.count("\n") == 1


def test_scontrol_cluster_option_is_kept() -> None:
    from parsers.report_options.scontrol_options import parse_scontrol_args

    assert parse_scontrol_args(["-M", "other", "show", "job"]).clusters == "other"


def test_squeue_reservation_compares_the_jobs_reservation() -> None:
    from parsers.formats.squeue_select import select_jobs
    from parsers.report_options.squeue_options import parse_squeue_args

    inside = replace(ALPHA, job_id=13, reservation="maint")
    query = parse_squeue_args(["--reservation=maint"], {})
    assert [j.job_id for j in select_jobs([ALPHA, inside], query, NOW)] == [13]
    query = parse_squeue_args(["-R", "other"], {})
    assert select_jobs([ALPHA, inside], query, NOW) == []
