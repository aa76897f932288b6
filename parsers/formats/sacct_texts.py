"""sacct's ``--batch-script`` and ``--env-vars`` listings (``sacct/print.c``).

Each selected job prints a title line, 80 dashes, the text, and an empty line; jobs whose
text the database does not hold are skipped.
"""

from __future__ import annotations

from typing import Mapping, Sequence, Tuple

RULE = "-" * 80


def format_batch_scripts(scripts: Sequence[Tuple[str, str]]) -> str:
    """``(job id text, script)`` pairs as ``sacct -B`` prints them."""
    return "".join(f"Batch Script for {job}\n{RULE}\n{_ended(script)}\n"
                   for job, script in scripts)


def format_env_vars(environments: Sequence[Tuple[str, Mapping[str, str]]]) -> str:
    """``(job id text, environment)`` pairs as ``sacct --env-vars`` prints them."""
    return "".join(
        f"Environment used for {job} (must be batch to display)\n{RULE}\n"
        + "".join(f"{key}={value}\n" for key, value in env.items()) + "\n"
        for job, env in environments)


def _ended(text: str) -> str:
    return text if text.endswith("\n") or not text else text + "\n"
