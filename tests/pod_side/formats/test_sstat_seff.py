"""sstat's lines and seff's report against what a real Slurm 22.05.8 printed for job 373
(2 nodes, 4 CPUs, 1 GiB as 256 MiB per CPU; step 0: 4 tasks of 200 MiB; 48 s)."""

from __future__ import annotations

from parsers.formats.sacct_format import parse_format
from parsers.formats.seff_report import kib_text, seff_report, time_text
from parsers.formats.sstat_format import DEFAULT_FIELDS, SSTAT_FIELDS, format_sstat, helpformat
from parsers.job_records import COMPLETED, RUNNING, JobRecord, StepRecord
from parsers.step_usage import StepUsage


def _usage(tasks: int, rss_kib: int, cpu: float, node: str = "n1") -> StepUsage:
    usage = StepUsage.from_tasks([
        {"node": node, "task": t, "user": cpu * 0.2, "sys": cpu * 0.8, "cpu": cpu,
         "rss": rss_kib * 1024, "vmem": 225103872, "read": 52475587, "write": 52428840}
        for t in range(tasks)])
    assert usage is not None
    return usage


def _job(state: str = COMPLETED) -> JobRecord:
    steps = (StepRecord("batch", "batch", state, usage=_usage(1, 12308, 3.046)),
             StepRecord("extern", "extern", state, usage=_usage(1, 1656, 0.003)),
             StepRecord("0", "work.py", state, node_list="n[1-2]",
                        usage=_usage(4, 214508, 2.196)),
             StepRecord("1", "true", state, usage=_usage(1, 0, 0.002)))
    return JobRecord(373, "acctprobe", "root", 0, "root", 0, "debug", state, cluster="realslurm",
                     node_count=2, cpus=4, min_memory_mb=256, memory_per_cpu=True,
                     start_time=1000, end_time=1048, steps=steps)


def test_seff_report_as_slurms() -> None:
    assert seff_report(_job(), now=2000) == (
        "Job ID: 373\nCluster: realslurm\nUser/Group: root/root\n"
        "State: COMPLETED (exit code 0)\nNodes: 2\nCores per node: 2\n"
        "CPU Utilized: 00:00:12\nCPU Efficiency: 6.25% of 00:03:12 core-walltime\n"
        "Job Wall-clock time: 00:00:48\n"
        "Memory Utilized: 837.92 MB (estimated maximum)\n"
        "Memory Efficiency: 81.83% of 1.00 GB (256.00 MB/core)\n")
    running = seff_report(_job(RUNNING), now=1048)
    assert running.startswith("Job ID: 373\n") and "State: RUNNING\n" in running
    assert running.endswith("WARNING: Efficiency statistics may be misleading for RUNNING "
                            "jobs.\n")
    assert "CPU Utilized: 00:00:00\n" in running     # running steps count nothing yet


def test_seff_units() -> None:
    assert kib_text(0) == "0.00 MB" and kib_text(1684) == "1.64 MB"
    assert kib_text(858032) == "837.92 MB" and kib_text(1048576) == "1.00 GB"
    assert kib_text(512000) == "500.00 MB" and kib_text(512) == "512.00 KB"
    assert time_text(61) == "00:01:01" and time_text(90061) == "1-01:01:01"


def test_sstat_line_as_slurms() -> None:
    job = _job(RUNNING)
    fields = parse_format("JobID,MaxRSS,AveCPU,MaxRSSNode,MaxRSSTask,NTasks,MaxDiskRead,"
                          "TRESUsageInMaxTask,ReqCPUFreqMin", SSTAT_FIELDS)
    text = format_sstat([(job, job.steps[2])], fields, parsable="P")
    assert text.splitlines()[1] == ("373.0|214508K|00:00:02|n1|0|4|52475587|"
                                    "cpu=00:00:00,fs/disk=0,mem=0,pages=0,vmem=0|Unknown")
    columns = format_sstat([(job, job.steps[2])], parse_format(DEFAULT_FIELDS, SSTAT_FIELDS))
    head, dashes, line = columns.splitlines()
    assert head.startswith("JobID         MaxVMSize  MaxVMSizeNode  MaxVMSizeTask")
    assert line.startswith("373.0           219828K             n1              0")
    assert helpformat().splitlines()[0] == ("AveCPU              AveCPUFreq          "
                                            "AveDiskRead         AveDiskWrite       ")
