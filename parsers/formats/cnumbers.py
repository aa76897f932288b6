"""Numbers read the way Slurm's C code reads them (``strtol``, ``atoi``).

Format strings (``%.20j``, ``-O name:12``, ``--format=jobid%20``) and job ids are read with
the C library, whose rules differ from Python's ``int``: leading blanks and a sign are
accepted, reading stops at the first non-digit, and no digits at all reads as 0.
"""

from __future__ import annotations

from typing import Tuple

C_BLANKS = " \t\n\r\f\v"
LONG_MAX = 2**63 - 1


def strtol(text: str) -> Tuple[int, str]:
    """``strtol(text, &end, 10)``: the leading number and the text after it (0 and the whole
    text when there is no number; values saturate at ``LONG_MAX``)."""
    body = text.lstrip(C_BLANKS)
    sign = body[:1] if body[:1] in ("+", "-") else ""
    digits = ""
    for char in body[len(sign):]:
        if not "0" <= char <= "9":
            break
        digits += char
    if not digits:
        return 0, text
    value = min(int(digits), LONG_MAX)
    return (-value if sign == "-" else value), body[len(sign) + len(digits):]


def atoi(text: str) -> int:
    """``atoi(text)``: the leading number, 0 when there is none."""
    return strtol(text)[0]
