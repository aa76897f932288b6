"""The task sampling interval from ``--acctg-freq`` (JobAcctGatherFrequency).

Slurm accepts ``N`` (the task interval) or a comma list of ``type=N`` with types task,
energy, network, filesystem; only ``task`` matters to the sampler. 0 disables sampling.
"""

from __future__ import annotations

from typing import Optional

#: Slurm's default JobAcctGatherFrequency (seconds).
DEFAULT_TASK_INTERVAL_S = 30
#: The data types Slurm's --acctg-freq names.
KNOWN_TYPES = ("task", "energy", "network", "filesystem")


def task_interval(spec: Optional[str]) -> int:
    """Seconds between task samples for ``spec`` (None or "" gives Slurm's default).

    Raises ValueError (worded by the caller) for anything Slurm would reject.
    """
    if spec is None or spec.strip() == "":
        return DEFAULT_TASK_INTERVAL_S
    interval = DEFAULT_TASK_INTERVAL_S
    for item in spec.split(","):
        item = item.strip()
        name, sep, value = item.partition("=")
        if not sep:
            name, value = "task", item
        if name not in KNOWN_TYPES or not value.isdigit():
            raise ValueError(item)
        if name == "task":
            interval = int(value)
    return interval
