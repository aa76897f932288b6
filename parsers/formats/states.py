"""Job states: long names, compact codes, and which states each command accepts.

A :class:`~parsers.job_records.JobRecord` carries one long state name, as ``job_state_string``
prints it: a base state (``PENDING`` … ``OUT_OF_MEMORY``) or, when Slurm would print a state
flag instead, the flag's name (``COMPLETING``, ``REQUEUED``…). :data:`JOB_STATES` gives each
its compact code (``job_state_string_compact``) and the base state the flag sits on, which is
what squeue's ``IS_JOB_PENDING``-style tests look at.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Mapping, Optional, Tuple


@dataclass(frozen=True)
class JobState:
    """One row: ``long`` name, ``compact`` code, the ``base`` state, and Slurm's number."""

    long: str
    compact: str
    base: str
    number: int


def _row(long: str, compact: str, base: str, number: int) -> Tuple[str, JobState]:
    return long, JobState(long, compact, base or long, number)


#: Base states (``enum job_states``) then the flags ``job_state_num`` knows, in Slurm's order.
JOB_STATES: Mapping[str, JobState] = dict([
    _row("PENDING", "PD", "", 0),
    _row("RUNNING", "R", "", 1),
    _row("SUSPENDED", "S", "", 2),
    _row("COMPLETED", "CD", "", 3),
    _row("CANCELLED", "CA", "", 4),
    _row("FAILED", "F", "", 5),
    _row("TIMEOUT", "TO", "", 6),
    _row("NODE_FAIL", "NF", "", 7),
    _row("PREEMPTED", "PR", "", 8),
    _row("BOOT_FAIL", "BF", "", 9),
    _row("DEADLINE", "DL", "", 10),
    _row("OUT_OF_MEMORY", "OOM", "", 11),
    _row("COMPLETING", "CG", "RUNNING", 0x8000),
    _row("CONFIGURING", "CF", "RUNNING", 0x4000),
    _row("RESIZING", "RS", "RUNNING", 0x2000),
    _row("RESV_DEL_HOLD", "RD", "PENDING", 0x400000),
    _row("REQUEUED", "RQ", "PENDING", 0x400),
    _row("REQUEUE_FED", "RF", "PENDING", 0x100000),
    _row("REQUEUE_HOLD", "RH", "PENDING", 0x800),
    _row("REVOKED", "RV", "CANCELLED", 0x80000),
    _row("SIGNALING", "SI", "RUNNING", 0x200000),
    _row("SPECIAL_EXIT", "SE", "PENDING", 0x1000),
    _row("STAGE_OUT", "SO", "COMPLETED", 0x20000),
    _row("STOPPED", "ST", "RUNNING", 0x40000),
])

#: States sacct can select (``_supported_state``): the rest are not accounted.
SACCT_STATES: Tuple[str, ...] = (
    "PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT",
    "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "REQUEUED",
    "RESIZING", "REVOKED",
)

#: States squeue lists when no ``-t`` is given.
SQUEUE_DEFAULT_STATES: Tuple[str, ...] = (
    "PENDING", "RUNNING", "SUSPENDED", "COMPLETING", "STAGE_OUT", "CONFIGURING", "RESIZING",
    "SIGNALING", "STOPPED",
)

_BY_NAME: Dict[str, str] = {}
for _state in JOB_STATES.values():
    _BY_NAME.setdefault(_state.long.lower(), _state.long)
for _state in JOB_STATES.values():
    _BY_NAME.setdefault(_state.compact.lower(), _state.long)


def job_state(long: str) -> JobState:
    """The row of a long state name; an unknown name is kept and shown as ``?``."""
    return JOB_STATES.get(long) or JobState(long, "?", long, -1)


def state_compact(long: str) -> str:
    """``R``, ``PD``, ``CG``… (``?`` for an unknown state, as Slurm prints)."""
    return job_state(long).compact


#: Flags slurmdbd never stores (it keeps a started job's base state, ``job_state &=
#: JOB_STATE_BASE``): sacct shows and selects the base state instead.
UNSTORED_FLAGS: Mapping[str, str] = {"CONFIGURING": "RUNNING"}


def stored_state(long: str) -> str:
    """The state the accounting database holds for a job in state ``long``."""
    return UNSTORED_FLAGS.get(long, long)


def base_state(long: str) -> str:
    """The base state a state flag sits on (``COMPLETING`` → ``RUNNING``)."""
    return job_state(long).base


def job_state_num(name: str) -> Optional[str]:
    """``job_state_num``: the long state named by ``name`` (long or compact, any case)."""
    return _BY_NAME.get(name.lower())


def valid_states_text() -> str:
    """The list squeue prints after ``Invalid job state specified`` (Slurm 22.05 spelling)."""
    return ",".join(JOB_STATES)


def is_pending(long: str) -> bool:
    """``IS_JOB_PENDING``."""
    return base_state(long) == "PENDING"

