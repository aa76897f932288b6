"""How Slurm pads, truncates and spells single values, shared by the report formatters.

* :func:`squeue_cell` is squeue's (and sinfo's) ``_print_str``: ``%.N`` right-justifies and —
  when the field allows it — cuts to the first N characters; ``%N`` left-justifies and always
  cuts; width 0 prints the value as it is. A missing C string prints ``(null)``, as glibc's
  printf does.
* :func:`print_field` is sacct's ``print_fields_*``: fixed-width columns followed by a space
  (strings cut with a trailing ``+``), or delimiter-separated with ``-p``/``-P``.
* :func:`format_timestamp` is ``slurm_make_time_str`` (``SLURM_TIME_FORMAT`` included);
  :func:`convert_num_unit` is Slurm's unit scaling (``256M``, ``1G``, ``1.50G``).

Widths count characters; Slurm counts bytes (they differ only for non-ASCII text).
"""

from __future__ import annotations

import time
from typing import Optional

#: sacct ``-P``: fields are separated by the delimiter, none after the last (``-p`` ends the
#: last field with it too).
PARSABLE_NO_ENDING = "P"

#: ``print_fields`` kinds: strings are cut with ``+``, dates are cut silently, numbers and
#: durations are never cut.
STRING, DATE, NUMBER = "string", "date", "number"

STANDARD_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S"
#: Longest ``SLURM_TIME_FORMAT`` Slurm accepts (its buffer holds 32 bytes).
MAX_TIME_FORMAT_LEN = 31
UNIT_LETTERS = ("", "K", "M", "G", "T", "P")


def squeue_cell(text: Optional[str], width: int, right: bool, cut: bool = True) -> str:
    """One squeue/sinfo field (``_print_str``); ``None`` is a NULL string, printed ``(null)``."""
    value = "(null)" if text is None else text
    if width < 0:
        return value + " "
    if width == 0:
        return value
    if right:
        return value[:width].rjust(width) if cut else value.rjust(width)
    return value[:width].ljust(width)


def print_field(
    value: Optional[str],
    width: int,
    kind: str = STRING,
    parsable: Optional[str] = None,
    delimiter: Optional[str] = None,
    last: bool = False,
) -> str:
    """One sacct cell (``print_fields_str``/``_date``/``_uint``…); ``None`` is an unset value.

    ``width`` is the field's signed length: positive right-justifies, negative left-justifies.
    """
    text = value or ""
    if parsable:
        if parsable == PARSABLE_NO_ENDING and last:
            return text
        return text + (delimiter if delimiter is not None else "|")
    size = abs(width)
    if kind == STRING and len(text) > size:
        text = text[: size - 1] + "+" if size else ""
    elif kind == DATE:
        text = text[:size]
    return (text.rjust(size) if width >= 0 else text.ljust(size)) + " "


def print_header(
    name: str, width: int, parsable: Optional[str] = None, delimiter: Optional[str] = None,
    last: bool = False,
) -> str:
    """A column title (``print_fields_header``): cut to the width without ``+``."""
    if parsable:
        return print_field(name, width, STRING, parsable, delimiter, last)
    size = abs(width)
    text = name[:size]
    return (text.rjust(size) if width >= 0 else text.ljust(size)) + " "


def _relative_format(moment: time.struct_time, now: int) -> str:
    """``_relative_date_fmt``: the strftime format for ``SLURM_TIME_FORMAT=relative``."""
    today = time.localtime(now)
    distance = (1000 * moment.tm_year + moment.tm_yday) - (1000 * today.tm_year + today.tm_yday)
    if distance == -1:
        return "Ystday %H:%M"
    if distance == 0:
        return "%H:%M:%S"
    if distance == 1:
        return "Tomorr %H:%M"
    if distance < -365 or distance > 365:
        return "%-d %b %Y"
    if distance < -1 or distance > 6:
        return "%-d %b %H:%M"
    return "%a %H:%M"


def format_timestamp(
    epoch: Optional[int], time_format: Optional[str] = None, now: Optional[int] = None
) -> str:
    """``slurm_make_time_str``: ``2026-11-22T09:04:34`` in local time; unset (0) is ``Unknown``.

    ``time_format`` is ``SLURM_TIME_FORMAT``: ``standard`` (the default), ``relative`` (needs
    ``now``) or a strftime format containing ``%``; anything else falls back to the standard
    form (Slurm also logs ``invalid SLURM_TIME_FORMAT``, see :func:`time_format_error`).
    """
    if not epoch:
        return "Unknown"
    moment = time.localtime(epoch)
    fmt = STANDARD_TIME_FORMAT
    if time_format and time_format != "standard":
        if time_format == "relative":
            fmt = _relative_format(moment, epoch if now is None else now)
        elif time_format_error(time_format) is None:
            fmt = time_format
    return time.strftime(fmt, moment)


def time_format_error(time_format: str) -> Optional[str]:
    """The message Slurm logs for an unusable ``SLURM_TIME_FORMAT``, or None if it is fine."""
    if time_format in ("", "standard", "relative"):
        return None
    if "%" not in time_format or len(time_format) > MAX_TIME_FORMAT_LEN:
        return f"invalid SLURM_TIME_FORMAT = '{time_format}'"
    return None


def ctime_line(now: int) -> str:
    """The date line ``squeue -l``/``sinfo -l`` print first: ``Sun Nov 22 09:04:49 2026``."""
    return time.asctime(time.localtime(now))


def convert_num_unit(number: float, unit: str = "M", divisor: int = 1024,
                     convert: bool = True, spec: Optional[str] = None) -> str:
    """``convert_num_unit`` with ``CONVERT_NUM_UNIT_EXACT`` (what squeue, scontrol, sinfo and
    sacct use): ``256`` MiB → ``256M``, ``1024`` → ``1G``, ``0`` → ``0``, scaled only while no
    precision is lost (halves count as exact: 1536M → ``1.50G``). ``convert`` False
    (``--noconvert``) keeps ``unit``; ``spec`` (sacct ``--units``: one of ``KMGTP``) scales to
    that unit whatever the rest says (6976 bytes at ``K`` → ``6.81K``).
    """
    if int(number) == 0:
        return "0"
    index = UNIT_LETTERS.index(unit)
    value = float(number)
    if spec is not None:
        target = UNIT_LETTERS.index(spec)
        value = value * float(divisor) ** (index - target)
        index = target
    elif convert:
        while value >= divisor and int(value) % (divisor // 2) == 0:
            value /= divisor
            index += 1
    letter = UNIT_LETTERS[index] if index < len(UNIT_LETTERS) else "?"
    if value == int(value):
        return f"{int(value)}{letter}"
    return f"{value:.2f}{letter}"
