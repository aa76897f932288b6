"""Absolute times as sacct's ``-S``/``-E`` read them: ``parse_time`` of ``parse_time.c``.

Accepted: ``HH:MM[:SS][AM|PM]``, ``MMDD[YY]``, ``MM.DD[.YY]``, ``MM/DD[/YY]`` (a date may be
followed by ``-HH:MM[:SS]``), ``YYYY-MM-DD[THH:MM[:SS]]``, ``today``, ``tomorrow``,
``midnight``, ``noon``, ``elevenses`` (11:00), ``fika`` (15:00), ``teatime`` (16:00),
``now[{+|-}count[seconds|minutes|hours|days|weeks]]`` and ``uts<epoch>``. sacct reads them
"in the past": a time without a date is today, a date without a year is this year unless its
month lies ahead (then last year). Nothing at all (``""``, ``T``) means the epoch.

The port keeps Slurm's error positions (``Invalid time specification (pos=3): 25:00``) and
quirks (a two-digit year ``00`` is ignored). ``now`` is a parameter; local time is the
process's time zone, as for Slurm.
"""

from __future__ import annotations

import datetime
import time

from parsers.input_errors import ValueSyntaxError, fatal
from parsers.formats.messages import BareError
from parsers.values.begin import TimeSpecError, parse_begin, resolve_begin
from parsers.values.time import parse_duration_s

#: Slurm's ``INFINITE`` (``-1``, ``UNLIMITED``), as time limit options store it.
INFINITE = 0xFFFFFFFF


def parse_time(text: str, now: int) -> int:
    """Epoch seconds of a sacct ``-S``/``-E`` value (0 when it names no time at all).

    Raises :class:`~parsers.formats.messages.BareError`
    ``Invalid time specification (pos=N): <text>`` (sacct exits 1).
    """
    if text[:3].lower() == "uts":
        digits = text[3:]
        if not (digits.isascii() and digits.isdigit()) or int(digits) < 1000000:
            raise BareError(f"Invalid time specification (pos=0): {text}")
        return int(digits)
    try:
        spec = parse_begin(text)
    except TimeSpecError as e:
        raise BareError(e.slurm_line) from None
    except ValueSyntaxError:
        return 0
    moment = resolve_begin(spec, datetime.datetime.fromtimestamp(now), past=True)
    return int(time.mktime(moment.timetuple()))


def limit_seconds(text: str) -> int:
    """A time-limit option value (``--running-over``, ``--timelimit-min``) in seconds, or
    :data:`INFINITE`; zero or malformed is ``fatal: Invalid time limit specification``."""
    try:
        seconds = parse_duration_s(text)
    except ValueSyntaxError:
        seconds = 0
    if seconds is not None and seconds <= 0:
        raise fatal("Invalid time limit specification")
    return INFINITE if seconds is None else seconds


def parse_since(text: str, now: int) -> int:
    """Epoch seconds of ``sbatch-k8s logs --since``: a duration in ``--time``'s forms
    (``10`` minutes, ``1:30`` = 1 min 30 s, ``2:00:00``, ``1-0``) reaching back from ``now``,
    else a time as sacct's ``-S`` reads it (``2026-11-28T08:00``, ``now-2hours``,
    ``today``). Raises :class:`~parsers.formats.messages.BareError` in sacct's words."""
    if not text.strip():
        raise BareError(f"Invalid time specification (pos=0): {text}")
    try:
        seconds = parse_duration_s(text)
    except ValueSyntaxError:
        seconds = None
    else:
        if seconds is not None:
            return now - seconds
    return parse_time(text, now)
