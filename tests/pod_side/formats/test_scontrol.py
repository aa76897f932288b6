"""scontrol show job / show hostnames, byte for byte against real Slurm 22.05."""

from __future__ import annotations

import pytest

from parsers.input_errors import SlurmInputError
from parsers.formats.messages import invalid_job_id_error
from parsers.formats.scontrol_show import (
    empty_host_list_error,
    format_show_job,
    format_show_jobs,
    show_hostlist,
    show_hostnames,
)
from parsers.job_records import JobRecord
from tests.pod_side.formats.builders import SQUEUE_NOW, at, job, live_by_id, recorded

SUBMIT, START = at("09:04:34"), at("09:04:37")


def _envprobe(**fields: object) -> JobRecord:
    base = dict(
        priority=4294901759, cpus=4, node_count=2, node_list="n[1-2]", batch_host="n1",
        ntasks=4, ntasks_per_node=2, submit_time=SUBMIT, eligible_time=SUBMIT,
        start_time=START, alloc_sid=22372, work_dir="/tmp/real-slurm-examples",
        command="/tmp/real-slurm-examples/envprobe/submitted.sh",
        stdout="/tmp/real-slurm-examples/envprobe/job.out",
        stderr="/tmp/real-slurm-examples/envprobe/job.out")
    base.update(fields)
    return job(1, "envprobe", str(base.pop("state", "RUNNING")), **base)


def test_running_job() -> None:
    assert format_show_job(_envprobe(), START) == recorded(
        "examples/scontrol-show-job-running.txt")


def test_completed_job() -> None:
    done = _envprobe(state="COMPLETED", end_time=START + 3)
    assert format_show_job(done, START + 60) == recorded("examples/scontrol-show-job.txt")


@pytest.mark.parametrize("job_id, shown", [
    (183, [183]), (184, [184]), (185, [185, 191, 190]), (186, [186]), (187, [187]),
    (189, [189]),
])
def test_live_jobs(job_id: int, shown: list) -> None:
    by_id = live_by_id()
    out = format_show_jobs([by_id[i] for i in shown], SQUEUE_NOW)
    assert out == recorded(f"live/scontrol-{job_id}.txt")


def test_one_liner() -> None:
    out = format_show_job(live_by_id()[184], SQUEUE_NOW, one_liner=True)
    assert out == recorded("live/scontrol-o-184.txt")


def test_default_output_names() -> None:
    """06-commands: ``StdOut=/tmp/obs/slurm-103_4294967294.out`` for a pending array rest."""
    rest = job(103, "runarr", "PENDING", array_job_id=103, array_pending="2-20%2",
               work_dir="/tmp/obs")
    task = job(106, "runarr", "RUNNING", array_job_id=103, array_task_id=0,
               work_dir="/tmp/obs")
    assert "   StdOut=/tmp/obs/slurm-103_4294967294.out\n" in format_show_job(rest, 0)
    assert "   StdErr=/tmp/obs/slurm-103_0.out\n" in format_show_job(task, 0)


def test_no_jobs() -> None:
    assert format_show_jobs([], 0) == "No jobs in the system\n"


def test_unknown_job_message() -> None:
    error = invalid_job_id_error()
    assert error.render("scontrol") == "slurm_load_jobs error: Invalid job id specified\n"
    assert error.exit_code == 1


@pytest.mark.parametrize("expression, out", [
    ("n[1-3]", "n1\nn2\nn3\n"),
    ("n[1-2],x", "n1\nn2\nx\n"),
    ("tux2,tux1,tux2", "tux2\ntux1\ntux2\n"),
    ("n[01-02],m1", "n01\nn02\nm1\n"),
    ("", ""),
])
def test_hostnames(expression: str, out: str) -> None:
    assert show_hostnames(expression) == out


@pytest.mark.parametrize("expression, sort, out", [
    ("n3,n1,n2,n1", False, "n[3,1-2,1]\n"),
    ("n3,n1,n2,n1", True, "n[1,1-3]\n"),
    ("n1,n2", False, "n[1-2]\n"),
])
def test_hostlist(expression: str, sort: bool, out: str) -> None:
    assert show_hostlist(expression, sort) == out


def test_invalid_range_is_reported_like_slurm() -> None:
    with pytest.raises(SlurmInputError) as e:
        show_hostnames("a[3-1]")
    assert e.value.render("scontrol") == (
        "scontrol: error: _parse_single_range: Invalid range: `3-1'\n"
        "Invalid hostlist: a[3-1]\n")
    assert e.value.exit_code == 0
    with pytest.raises(SlurmInputError) as e:
        show_hostlist("a[3-1]")
    assert e.value.exit_code == 1


def test_empty_host_list() -> None:
    error = empty_host_list_error()
    assert error.render("scontrol") == "scontrol: error: host list is empty\n"
    assert error.exit_code == 0
