"""``--acctg-freq`` (JobAcctGatherFrequency): the task sampling interval.

Slurm accepts ``N`` (the task interval) or a comma list of ``type=N`` with the types task,
energy, network and filesystem; only ``task`` sets the sampler's interval, and 0 disables
sampling (a task's end still records its CPU and peak memory from its rusage). Anything
else is refused naming the item, as ``sbatch: error: Invalid --acctg-freq specification:
bogus=3``.
"""

from __future__ import annotations

from typing import Optional

from parsers.input_errors import SlurmInputError

#: Slurm's default JobAcctGatherFrequency (seconds).
DEFAULT_TASK_INTERVAL_S = 30
#: The data types --acctg-freq names.
KNOWN_TYPES = ("task", "energy", "network", "filesystem")


def task_interval(spec: Optional[str]) -> int:
    """Seconds between task samples for ``spec`` (None or "" gives Slurm's default).

    Raises :class:`SlurmInputError` for anything Slurm would refuse.
    """
    if spec is None or spec.strip() == "":
        return DEFAULT_TASK_INTERVAL_S
    interval = DEFAULT_TASK_INTERVAL_S
    for item in spec.split(","):
        name, sep, value = item.strip().partition("=")
        if not sep:
            name, value = "task", item.strip()
        if name not in KNOWN_TYPES or not value.isdigit():
            raise SlurmInputError(f"Invalid --acctg-freq specification: {item}")
        if name == "task":
            interval = int(value)
    return interval


def checked_interval(*specs: Optional[str]) -> int:
    """The interval of the first of ``specs`` given (a step's, then its job's), Slurm's
    default when none is; a value that got past submission unchecked counts as not given."""
    for spec in specs:
        if spec:
            try:
                return task_interval(spec)
            except SlurmInputError:
                continue
    return DEFAULT_TASK_INTERVAL_S
