"""File name patterns of ``--output``/``--error``/``--input`` (``slurm-%A_%a.out``).

Expansion follows ``expand_stdio_fields`` (``src/common/print_fields.c``): ``%%`` is ``%``;
``%A %a %b %J %j %N %n %r %S %s %t %u %x`` are replaced; a number after ``%`` zero-pads numeric
codes (at most 10; ``%N``, ``%u``, ``%x``, ``%S`` ignore it, ``%s`` of the batch step prints
``batch``); an unknown code stays as written (``%q``, ``%4q``); a lone ``%`` at the end
vanishes. A backslash anywhere turns all expansion off and every backslash is dropped
(``a\\%j`` names the file ``a%j``). Making a relative name absolute (the working directory) is
the caller's job. ``%4`` at the very end is kept as ``%4``: Slurm reads past the string there.

:func:`parse_step_io` adds srun's special values (``src/srun/fname.c``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple, Union

from parsers.values.grammar import parse_value

#: ``%a`` of a job that is not an array task (``NO_VAL``).
NO_ARRAY_TASK = 4294967294
MAX_PADDING = 10
#: Codes that expand; the others are kept literally.
FIELD_CODES = "AabJjNnrSstux"


@dataclass(frozen=True)
class FilenameContext:
    """What a pattern may refer to. ``step_id`` None is the batch step; ``array_*`` None: not
    an array task."""

    job_id: int
    step_id: Optional[int]
    array_job_id: Optional[int]
    array_task_id: Optional[int]
    user: str
    job_name: str
    node_name: str = ""
    node_index: int = 0
    task_id: int = 0
    restart_count: int = 0
    sluid: str = ""


@dataclass(frozen=True)
class FilenameField:
    """One ``%[padding]code`` replacement."""

    code: str
    padding: int

    def render(self, ctx: FilenameContext) -> str:
        """The text this field expands to for ``ctx``."""
        text_values = {
            "N": ctx.node_name,
            "u": ctx.user,
            "x": ctx.job_name,
            "S": ctx.sluid,
        }
        if self.code in text_values:
            return text_values[self.code]
        if self.code == "s" and ctx.step_id is None:
            return "batch"
        task = NO_ARRAY_TASK if ctx.array_task_id is None else ctx.array_task_id
        numbers = {
            "A": ctx.array_job_id or ctx.job_id,
            "a": task,
            "b": task % 10,
            "J": ctx.job_id,
            "j": ctx.job_id,
            "n": ctx.node_index,
            "r": ctx.restart_count,
            "s": ctx.step_id,
            "t": ctx.task_id,
        }
        text = f"{numbers[self.code]:0{self.padding}d}"
        if self.code == "J" and ctx.step_id is not None:
            text += f".{ctx.step_id}"
        return text


PatternPart = Union[str, FilenameField]


@dataclass(frozen=True)
class FilenamePattern:
    """A parsed pattern: literal text and fields, in order."""

    parts: Tuple[PatternPart, ...]

    def render(self, ctx: FilenameContext) -> str:
        """The file name for one job/step/node/task."""
        return "".join(p if isinstance(p, str) else p.render(ctx) for p in self.parts)

    def codes(self) -> str:
        """The field codes used, in order."""
        return "".join(p.code for p in self.parts if isinstance(p, FilenameField))

    @property
    def per_task(self) -> bool:
        """One file per task (uses ``%t``)."""
        return "t" in self.codes()

    @property
    def per_node(self) -> bool:
        """One file per node (uses ``%N`` or ``%n``)."""
        return any(c in self.codes() for c in "Nn")

    @property
    def opened_per_task(self) -> bool:
        """srun opens the file in each task (``IO_PER_TASK``): any of ``%N %n %t %u``."""
        return any(c in self.codes() for c in "Nntu")


class FilenameTransformer:
    """Rules of ``filename.lark``: terminals become pattern parts."""

    def TEXT(self, token: str) -> PatternPart:
        return str(token)

    def FIELD(self, token: str) -> PatternPart:
        digits, code = token[1:-1], token[-1]
        if token == "%%":
            return "%"
        if code not in FIELD_CODES:
            return str(token)
        return FilenameField(code, min(int(digits), MAX_PADDING) if digits else 0)

    def DANGLING(self, token: str) -> PatternPart:
        return str(token) if len(token) > 1 else ""

    def start(self, children: List[PatternPart]) -> FilenamePattern:
        merged: List[PatternPart] = []
        for part in children:
            if isinstance(part, str) and merged and isinstance(merged[-1], str):
                merged[-1] += part
            elif part != "":
                merged.append(part)
        return FilenamePattern(tuple(merged))


def parse_filename_pattern(text: str) -> FilenamePattern:
    """Parse an ``--output``/``--error``/``--input`` pattern."""
    if "\\" in text:
        plain = text.replace("\\", "")
        return FilenamePattern((plain,) if plain else ())
    pattern: FilenamePattern = parse_value("filename", text, FilenameTransformer)
    return pattern


@dataclass(frozen=True)
class StepIO:
    """srun ``-o/-e/-i``: ``kind`` is ``all``, ``none``, ``task`` (only task ``task_id``; it
    applies only if ``task_id`` < the step's task count, else ``pattern`` is a file name) or
    ``pattern``."""

    kind: str
    task_id: Optional[int] = None
    pattern: Optional[FilenamePattern] = None


def _task_number(text: str) -> Optional[int]:
    """``strtoul`` consuming the whole text (blanks and ``+`` first allowed; ``""`` is 0)."""
    body = text.lstrip(" \t\n\v\f\r")
    body = body[1:] if body.startswith("+") else body
    if body == "" and text == "":
        return 0
    if body.isdigit() and body.isascii():
        return int(body)
    return None


def parse_step_io(text: str) -> StepIO:
    """srun's ``-o/-e/-i`` value: ``all`` (also anything starting ``all`` or ``-``), ``none``,
    a task number, or a pattern."""
    if text[:3].lower() == "all" or text.startswith("-"):
        return StepIO("all")
    if text.lower() == "none":
        return StepIO("none")
    pattern = parse_filename_pattern(text)
    task = _task_number(text)
    if task is not None:
        return StepIO("task", task, pattern)
    return StepIO("pattern", None, pattern)
