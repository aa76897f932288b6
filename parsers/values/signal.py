"""Signals: ``--signal=[{R|B}:]<sig>[@sig_time]`` and names/numbers for ``scancel --signal``.

Follows ``get_signal_opts``/``sig_name2num`` (``src/common/proc_args.c``). Names are Slurm's
own table (not the platform's), so ``WINCH`` is unknown just as in Slurm; numbers are Linux
numbering. ``sig_time`` defaults to 60 and may be 0..65535 (``USR1@`` is 0, as in Slurm).

Deviations: Slurm stores the number in 16 bits after reading it (so ``65537`` becomes
``1``), and lets blanks surround it; here numbers are 1..65535 written plainly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional

from parsers.input_errors import ValueSyntaxError
from parsers.values.grammar import parse_value

#: Slurm's signal names (``signals_mapping``) with Linux numbers.
SIGNAL_NUMBERS = {
    "HUP": 1, "INT": 2, "QUIT": 3, "ABRT": 6, "KILL": 9, "USR1": 10, "USR2": 12, "PIPE": 13,
    "ALRM": 14, "TERM": 15, "CHLD": 17, "CONT": 18, "STOP": 19, "TSTP": 20, "TTIN": 21,
    "TTOU": 22, "URG": 23, "XCPU": 24,
}
DEFAULT_WARN_TIME_S = 60
MAX_U16 = 0xFFFF


@dataclass(frozen=True)
class SignalSpec:
    """A parsed ``--signal``: what to send, how long before the time limit, and to whom."""

    signal_number: int
    signal_name: str
    seconds_before_end: int
    batch_only: bool
    reservation_overlap: bool


def signal_name(number: int) -> str:
    """``sig_num2name``: Slurm's name for a number, or the number itself (``USR1``, ``33``)."""
    return next((n for n, v in SIGNAL_NUMBERS.items() if v == number), str(number))


class SignalTransformer:
    """Rules of ``signal.lark``."""

    def INT(self, token: str) -> int:
        return int(token)

    def signal(self, children: List[Any]) -> int:
        (value,) = children
        if isinstance(value, int):
            if not 1 <= value <= MAX_U16:
                raise ValueSyntaxError("signal number out of range")
            return value
        name = str(value).upper()
        return SIGNAL_NUMBERS[name[3:] if name.startswith("SIG") else name]

    def warn_time(self, children: List[Optional[int]]) -> int:
        seconds = children[0] or 0
        if seconds > MAX_U16:
            raise ValueSyntaxError("signal time out of range")
        return seconds

    def flags(self, children: List[Any]) -> str:
        return str(children[0] or "").upper() if children else ""

    def start(self, children: List[Any]) -> SignalSpec:
        flags, number, seconds = children
        flags = flags or ""
        warn_s = DEFAULT_WARN_TIME_S if seconds is None else seconds
        return SignalSpec(number, signal_name(number), warn_s, "B" in flags, "R" in flags)


def parse_signal(text: str) -> SignalSpec:
    """Parse ``--signal``: ``USR1``, ``B:TERM@120``, ``R:10``, ``SIGUSR2@180``."""
    spec: SignalSpec = parse_value("signal", text, SignalTransformer)
    return spec


def signal_number(name_or_number: str) -> int:
    """A signal by name (``USR1``, ``SIGTERM``, any case) or number (``10``)."""
    number: int = parse_value("signal", name_or_number, SignalTransformer, start="signal")
    return number
