"""The pure parts of inspecting a job: ``--since`` and ``JOB[.STEP]`` parsing, the runtime's
events and their merged order, the events table, and ``scontrol show job -d``'s lines —
these last against what a real Slurm 22.05 printed (``tools/real-slurm``)."""

from __future__ import annotations

import pytest

from parsers.formats.messages import BareError
from parsers.formats.scontrol_details import (
    NodeAllocation,
    NodeState,
    allocation_lines,
    described_allocation,
    node_state_lines,
)
from parsers.formats.scontrol_show import format_show_job
from parsers.job_records import JobRecord, StepRecord
from parsers.report_options.scontrol_options import parse_scontrol_args
from parsers.report_options.timespec import parse_since
from sbatch_k8s.inspection.job_events import merged, record_events, runtime_events
from sbatch_k8s.inspection.values import EventView
from sbatch_k8s.tool.events import format_events
from sbatch_k8s.tool.job_argument import CommandError, JobArgument, parse_job_argument

NOW = 1_800_000_000


@pytest.mark.parametrize("text, ago_s", [
    ("10", 600), ("1:30", 90), ("2:00:00", 7200), ("1-0", 86400), ("now-2hours", 7200),
    (f"uts{NOW - 42}", 42),
])
def test_since_is_a_duration_back_or_a_time_as_sacct_reads_it(text: str, ago_s: int) -> None:
    assert NOW - parse_since(text, NOW) == ago_s


@pytest.mark.parametrize("text", ["", "bogus", "UNLIMITED", "25:99:00x"])
def test_since_refuses_in_saccts_words(text: str) -> None:
    with pytest.raises(BareError) as e:
        parse_since(text, NOW)
    assert e.value.lines[0].startswith("Invalid time specification (pos=")


@pytest.mark.parametrize("text, steps, expected", [
    ("12", True, JobArgument("12")), ("12_3", True, JobArgument("12_3")),
    ("12.0", True, JobArgument("12", "0")), ("12.batch", True, JobArgument("12", "batch")),
    ("12_3.extern", True, JobArgument("12_3", "extern")),
    ("0", True, None), ("x", True, None), ("12.x", True, None), ("12.0", False, None),
    ("-1", True, None), ("12_", True, None),
])
def test_job_arguments(text: str, steps: bool, expected: object) -> None:
    if expected is None:
        with pytest.raises(CommandError, match="^Invalid job id specified$"):
            parse_job_argument(text, steps)
    else:
        assert parse_job_argument(text, steps) == expected


def _record(**changes: object) -> JobRecord:
    values = dict(job_id=7, name="j", user="u", uid=1, group="g", gid=1, partition="debug",
                  state="COMPLETED", submit_time=NOW, start_time=NOW + 1, end_time=NOW + 5,
                  node_count=2, node_list="j-7-[0-1]")
    values.update(changes)
    return JobRecord(**values)  # type: ignore[arg-type]


STEPS = (StepRecord("batch", "batch", "COMPLETED", start_time=NOW + 1, end_time=NOW + 5,
                    node_list="j-7-0"),
         StepRecord("0", "python", "CANCELLED", 0, 9, NOW + 2, NOW + 3, "j-7-[0-1]"),
         StepRecord("1", "bash", "FAILED", 3, 0, NOW + 3, NOW + 5, "j-7-1"))


def test_runtime_events_say_nodes_steps_signals_and_requeues() -> None:
    earlier = _record(state="REQUEUED", end_time=NOW + 1, steps=())
    record = _record(steps=STEPS, requeued_runs=(earlier,))
    events = merged(runtime_events(record, {"j-7-0": NOW + 1, "j-7-1": NOW + 1}))
    assert [(e.time - NOW, e.reason, e.subject, e.message) for e in events] == [
        (1, "NodeUp", "node j-7-0", "the node's runtime started"),
        (1, "NodeUp", "node j-7-1", "the node's runtime started"),
        (1, "StepStarted", "step 7.batch", "batch on j-7-0"),
        (1, "Requeued", "job 7", "run ended REQUEUED, requeued"),
        (2, "StepStarted", "step 7.0", "python on j-7-[0-1]"),
        (3, "StepEnded", "step 7.0", "CANCELLED, exit code 0:9"),
        (3, "Signal", "step 7.0", "its tasks ended by SIGKILL"),
        (3, "StepStarted", "step 7.1", "bash on j-7-1"),
        (5, "StepEnded", "step 7.1", "FAILED, exit code 3:0"),
        (5, "StepEnded", "step 7.batch", "COMPLETED, exit code 0:0"),
    ]
    assert {e.source for e in events} == {"runtime"}


@pytest.mark.parametrize("changes, message", [
    ({"state": "CANCELLED", "cancelled_by": 1000}, "cancelled by uid 1000"),
    ({"state": "TIMEOUT"}, "time limit reached"),
    ({"state": "FAILED", "exit_signal": 15}, "batch script ended by SIGTERM"),
])
def test_the_signal_that_ended_the_job(changes: dict, message: str) -> None:
    signals = [e for e in runtime_events(_record(**changes), {}) if e.reason == "Signal"]
    assert [(e.time, e.subject, e.message) for e in signals] == [(NOW + 5, "job 7", message)]


def test_merged_puts_each_second_in_the_order_things_happen() -> None:
    """Record and runtime events of one second by what can come first; Kubernetes events
    (whose reasons are their own: a kubelet's ``Started``) as they were stored."""
    batch = StepRecord("batch", "batch", "COMPLETED", start_time=NOW, end_time=NOW)
    record = _record(steps=(batch,), start_time=NOW, end_time=NOW)
    kubelet = [EventView(NOW, "Normal", "Pulled", "image present", "Pod/j-7-0-x", "event"),
               EventView(NOW, "Normal", "Started", "Started container", "Pod/j-7-0-x",
                         "event"),
               EventView(None, "Warning", "EventsNotReadable", "forbidden", "Job/j", "event")]
    order = [(e.reason, e.source) for e in merged(
        kubelet, runtime_events(record, {"j-7-0": NOW}), record_events(record))]
    assert order == [("Submitted", "record"), ("Started", "record"), ("NodeUp", "runtime"),
                     ("StepStarted", "runtime"), ("Pulled", "event"), ("Started", "event"),
                     ("StepEnded", "runtime"), ("Ended", "record"),
                     ("EventsNotReadable", "event")]


def test_the_events_table() -> None:
    events = [EventView(None, "Warning", "BackOff", "Back-off\npulling", "Pod/p", "event", 3),
              EventView(None, "Normal", "Submitted", "to partition debug", "job 7", "record")]
    assert format_events(events) == (
        "TIME      TYPE      REASON      OBJECT   SOURCE   MESSAGE\n"
        "Unknown   Warning   BackOff     Pod/p    event    Back-off pulling (x3)\n"
        "Unknown   Normal    Submitted   job 7    record   to partition debug\n")


def test_details_group_nodes_as_slurm_does() -> None:
    """Real Slurm 22.05, ``-N3 -n5`` with ``DefMemPerCPU=256``: n1 holds 3 CPUs."""
    job = _record(state="RUNNING", cpus=5, node_count=3, min_memory_mb=256,
                  memory_per_cpu=True, node_list="n[1-3]")
    allocation = described_allocation(job, ["n1", "n2", "n3"], None)
    assert allocation_lines(job, allocation) == [
        "JOB_GRES=(null)", "  Nodes=n1 CPU_IDs=0-2 Mem=768 GRES=",
        "  Nodes=n[2-3] CPU_IDs=0 Mem=256 GRES="]


@pytest.mark.parametrize("state, gres", [("RUNNING", "gpu:1(IDX:0)"), ("COMPLETED", "")])
def test_details_show_gpu_indices_while_running(state: str, gres: str) -> None:
    """Real Slurm 22.05, ``-N2 --ntasks-per-node=2 --mem=500 --gres=gpu:1``."""
    job = _record(state=state, cpus=4, min_memory_mb=500, node_list="n[1-2]")
    description = {"cpus_per_node": [2, 2], "mem_per_node_mb": 500, "gpus_on_nodes": [1, 1],
                   "gpu_ids": [[], []]}
    allocation = described_allocation(job, ["n1", "n2"], description)
    assert allocation == [NodeAllocation("n1", 2, 500, (0,)), NodeAllocation("n2", 2, 500, (0,))]
    assert allocation_lines(job, allocation) == [
        "JOB_GRES=gpu:2", f"  Nodes=n[1-2] CPU_IDs=0-1 Mem=500 GRES={gres}"]


def test_details_in_the_record_as_real_slurm_prints_them() -> None:
    job = _record(state="RUNNING", node_list="n[1-2]", derived_exit_code=2)
    details = allocation_lines(job, described_allocation(job, ["n1", "n2"], None))
    shown = format_show_job(job, NOW, details=details).splitlines()
    assert shown[4:6] == ["   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0",
                          "   DerivedExitCode=2:0"]
    socks = next(i for i, line in enumerate(shown) if line.startswith("   Socks/Node="))
    assert shown[socks + 1:socks + 4] == [
        "   JOB_GRES=(null)", "     Nodes=n[1-2] CPU_IDs=0 Mem=0 GRES=", "   MinCPUsNode=1 "
        "MinMemoryNode=0 MinTmpDiskNode=0"]
    one = format_show_job(job, NOW, one_liner=True, details=details)
    assert "CoreSpec=* JOB_GRES=(null)   Nodes=n[1-2] CPU_IDs=0 Mem=0 GRES= MinCPUsNode" in one
    assert "DerivedExitCode" not in format_show_job(job, NOW)


def test_each_nodes_own_line() -> None:
    assert node_state_lines([
        NodeState("j-7-0", "j-7-0-abc", "Running", 1, "kind-worker",
                  "2026-11-28T08:00:00 Started: Started container main"),
        NodeState("j-7-1"), NodeState("127.0.0.2", log="/s/jobs/7/node-0.log")]) == [
        "  Node=j-7-0 Pod=j-7-0-abc Phase=Running Restarts=1 Host=kind-worker "
        "LastEvent=2026-11-28T08:00:00 Started: Started container main",
        "  Node=j-7-1 Pod=(null) Phase=(null) Restarts=0 Host=(null) LastEvent=(null)",
        "  Node=127.0.0.2 Log=/s/jobs/7/node-0.log"]


@pytest.mark.parametrize("argv", [["-d", "show", "job", "5"], ["show", "-d", "job", "5"],
                                  ["show", "job", "5", "--details"], ["--details", "sho", "j"]])
def test_details_anywhere_on_the_line(argv: list) -> None:
    request = parse_scontrol_args(argv)
    assert request.details and request.command == "show" and request.entity == "jobs"


@pytest.mark.parametrize("partial, lost", [(False, 13), (True, 3)])
def test_node_zeros_decoded_log_counts_what_never_came(partial: bool, lost: int) -> None:
    """A gap in a file's offsets is bytes rotated away before any read; read from a time on
    (``--since``), what comes before the first bytes is not asked for."""
    import queue

    from sbatch_k8s.inspection.pod_logs import _LogSink

    out: "queue.Queue[bytes]" = queue.Queue()
    sink = _LogSink(out, partial)
    sink.write(0, 10, b"ab")
    sink.write(0, 10, b"abc")           # a reconnect serves it again: only "c" is new
    sink.write(0, 16, b"x")
    sink.message(b"a note\n")
    assert [out.get() for _ in range(out.qsize())] == [b"ab", b"c", b"x", b"a note\n"]
    assert sink.lost == lost
