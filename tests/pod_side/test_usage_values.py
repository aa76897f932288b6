"""sacct's and sstat's usage texts, checked against what a real Slurm 22.05.8 printed for a
2-node job (4 tasks of 200 MiB, 2 s CPU, 50 MiB written and read back)."""

from __future__ import annotations

from parsers.formats.usage_values import STEP_USAGE, UsageStyle, cpu_time_text, disk_text, \
    memory_text, whole_cpu_text
from parsers.step_usage import StepUsage

SACCT, NOCONVERT, SSTAT = UsageStyle(), UsageStyle(convert=False), UsageStyle(disk_bytes=True)


def test_cpu_time_forms() -> None:
    assert cpu_time_text(11.811) == "00:11.811"
    assert cpu_time_text(0.002) == "00:00.002"
    assert cpu_time_text(0) == "00:00:00"          # nothing, or under a millisecond
    assert cpu_time_text(0.0004) == "00:00:00"
    assert cpu_time_text(2.0) == "00:00:02"
    assert cpu_time_text(3723.9) == "01:02:03"
    assert cpu_time_text(90061) == "1-01:01:01"
    assert whole_cpu_text(2.7) == "00:00:02"


def test_memory_converts_while_exact() -> None:
    assert memory_text(12980224, SACCT) == "12676K"
    assert memory_text(219594752, SACCT) == "214448K"
    assert memory_text(1 << 30, SACCT) == "1G"
    assert memory_text(0, SACCT) == "0"
    assert memory_text(219594752, NOCONVERT) == "219594752"


def test_disk_in_mib_for_sacct_and_bytes_for_sstat() -> None:
    assert disk_text(78950, SACCT) == "0.08M"
    assert disk_text(2071, SACCT) == "0.00M"
    assert disk_text(52475587, SACCT) == "50.04M"
    assert disk_text(0, SACCT) == "0"
    assert disk_text(52475587, SSTAT) == "52475587"
    assert disk_text(1804, SSTAT) == "1804"
    assert disk_text(1, SSTAT) == "1.00M"


def _step_372_0() -> StepUsage:
    """Job 372's step 0 as its four tasks reported it (n1: tasks 0-2, n2: task 3)."""
    rss = [219500544, 219560000, 219594752, 219523000]
    tasks = [{"node": "n1" if t < 3 else "n2", "task": t, "user": 0.5, "sys": 1.69,
              "cpu": 2.19 + (0.01 if t == 3 else 0), "rss": rss[t], "vmem": 225103872,
              "pages": 0, "read": 52475587, "write": 52428840} for t in range(4)]
    usage = StepUsage.from_tasks(tasks)
    assert usage is not None
    return usage


def test_step_fields_as_sacct_prints_them() -> None:
    usage = _step_372_0()
    text = {name: STEP_USAGE[name](usage, SACCT) for name in STEP_USAGE}
    assert text["MaxRSS"] == "214448K" and text["MaxRSSNode"] == "n1"
    assert text["MaxRSSTask"] == "2"
    assert text["MaxVMSize"] == "219828K" and text["AveCPU"] == "00:00:02"
    assert text["MaxDiskRead"] == "50.04M" and text["MaxDiskWrite"] == "50.00M"
    assert text["TRESUsageInMax"] == ("cpu=00:00:02,energy=0,fs/disk=52475587,mem=214448K,"
                                      "pages=0,vmem=219828K")
    assert text["TRESUsageOutTot"] == "energy=0,fs/disk=209715360"
    assert text["TRESUsageInMaxNode"] == "cpu=n2,energy=n2,fs/disk=n1,mem=n1,pages=n1,vmem=n1"
    assert text["TRESUsageInMaxTask"] == "cpu=3,fs/disk=0,mem=2,pages=0,vmem=0"
    assert text["TRESUsageOutMaxTask"] == "fs/disk=0"
    assert text["NTasks"] == "4"


def _one_task(rss: int, vmem: int, read: int, write: int) -> StepUsage:
    usage = StepUsage.from_tasks([{"node": "n1", "task": 0, "user": 1.0, "sys": 1.0,
                                   "cpu": 2.0, "rss": rss, "vmem": vmem, "pages": 0,
                                   "read": read, "write": write}])
    assert usage is not None
    return usage


#: Job 382 of a real Slurm 22.05.8 (one task of 216 MiB reading 4.6 MB and writing 3 MB; its
#: extern step), as ``sacct -P --units=X`` printed MaxRSS, MaxVMSize, MaxDiskRead,
#: MaxDiskWrite, TRESUsageInMax and TRESUsageOutMax.
UNITS_382 = {
    "K": [("221160K", "224516K", "4718.34K", "3073.67K",
           "cpu=00:00:02,energy=0,fs/disk=4718.34K,mem=221160K,pages=0,vmem=224516K",
           "energy=0,fs/disk=3073.67K"),
          ("1232K", "2500K", "0.01M", "0.00M",
           "cpu=00:00:02,energy=0,fs/disk=6.81K,mem=1232K,pages=0,vmem=2500K",
           "energy=0,fs/disk=0.00K")],
    "M": [("215.98M", "219.25M", "4.61M", "3.00M",
           "cpu=00:00:02,energy=0,fs/disk=4.61M,mem=215.98M,pages=0,vmem=219.25M",
           "energy=0,fs/disk=3.00M"),
          ("1.20M", "2.44M", "0.01M", "0.00M",
           "cpu=00:00:02,energy=0,fs/disk=0.01M,mem=1.20M,pages=0,vmem=2.44M",
           "energy=0,fs/disk=0.00M")],
    "G": [("0.21G", "0.21G", "0.00G", "0.00G",
           "cpu=00:00:02,energy=0,fs/disk=0.00G,mem=0.21G,pages=0,vmem=0.21G",
           "energy=0,fs/disk=0.00G"),
          ("0.00G", "0.00G", "0.01M", "0.00M",
           "cpu=00:00:02,energy=0,fs/disk=0.00G,mem=0.00G,pages=0,vmem=0.00G",
           "energy=0,fs/disk=0.00G")],
    "P": [("0.00P", "0.00P", "0.00P", "0.00P",
           "cpu=00:00:02,energy=0,fs/disk=0.00P,mem=0.00P,pages=0,vmem=0.00P",
           "energy=0,fs/disk=0.00P"),
          ("0.00P", "0.00P", "0.01M", "0.00M",
           "cpu=00:00:02,energy=0,fs/disk=0.00P,mem=0.00P,pages=0,vmem=0.00P",
           "energy=0,fs/disk=0.00P")],
}
FIELDS_382 = ("MaxRSS", "MaxVMSize", "MaxDiskRead", "MaxDiskWrite", "TRESUsageInMax",
              "TRESUsageOutMax")


def test_units_win_over_noconvert_in_every_amount() -> None:
    steps = [_one_task(226467840, 229904384, 4831580, 3147439),
             _one_task(1261568, 2560000, 6976, 1)]
    for unit, lines in UNITS_382.items():
        for convert in (True, False):
            style = UsageStyle(convert=convert, units=unit)
            shown = [tuple(STEP_USAGE[f](usage, style) for f in FIELDS_382) for usage in steps]
            assert shown == lines, (unit, convert)
    plain = [tuple(STEP_USAGE[f](usage, NOCONVERT) for f in FIELDS_382) for usage in steps]
    assert plain[1] == ("1261568", "2560000", "0.01M", "0.00M",
                        "cpu=00:00:02,energy=0,fs/disk=6976,mem=1261568,pages=0,vmem=2560000",
                        "energy=0,fs/disk=1")


def test_disk_counts_in_tres_strings_convert_while_exact() -> None:
    text = STEP_USAGE["TRESUsageInMax"](_one_task(1 << 20, 1 << 21, 8192, 0), SACCT)
    assert text == "cpu=00:00:02,energy=0,fs/disk=8K,mem=1M,pages=0,vmem=2M"
