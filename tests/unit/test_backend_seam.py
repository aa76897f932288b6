"""The backend seam (:mod:`sbatch_k8s.backends.base`): both backends implement every verb and
facet, and only commands print.

A backend returns values (:class:`~sbatch_k8s.backends.base.Submitted`, outcomes, records) and
writes a job's own output only to the :class:`~sbatch_k8s.backends.base.OutputSink` a command
hands in; every message line it emits is worded in :mod:`sbatch_k8s.user_messages`. The local
scheduler daemon is the one exception: its lines go to its own log file.
"""

from __future__ import annotations

import importlib
import os
import re
from pathlib import Path

import pytest

from sbatch_k8s.backends import BACKENDS
from sbatch_k8s.backends.base import (
    Backend,
    ClusterFacts,
    Identity,
    JobLookup,
    OutputSink,
    Submitted,
)
from translators.config import ClusterConfig

BACKENDS_DIR = Path(__file__).resolve().parents[2] / "sbatch_k8s" / "backends"
#: The scheduler daemon's stderr is its log file (:mod:`sbatch_k8s.backends.local.scheduler`).
LOGS_TO_ITS_FILE = {"local/scheduler.py"}
#: Lines that read the runtime's own message lines (a pod's last words), not write one.
READS_RUNTIME_LINES = {"kubernetes/read/pod_view.py": "for prefix in ("}
#: What printing or a hand-worded Slurm message line looks like in source.
PRINTING = re.compile(r"sys\.std(out|err)\.(write|buffer)|\bprint\(|"
                      r"""[fF]?["'][^"']*: (warning|error): """)


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_each_backend_has_every_verb_and_facet(name: str) -> None:
    module, class_name = BACKENDS[name]
    backend_class = getattr(importlib.import_module(module), class_name)
    backend = backend_class(ClusterConfig(), {})   # nothing contacted until asked
    assert isinstance(backend, Backend) and backend.name == name
    assert isinstance(backend.identity, Identity)
    assert isinstance(backend.cluster, ClusterFacts)
    assert isinstance(backend.lookup, JobLookup)


def test_only_commands_print() -> None:
    found = []
    for path in sorted(BACKENDS_DIR.rglob("*.py")):
        relative = path.relative_to(BACKENDS_DIR).as_posix()
        if relative in LOGS_TO_ITS_FILE:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            reads = READS_RUNTIME_LINES.get(relative)
            if reads is not None and line.strip().startswith(reads):
                continue
            if PRINTING.search(line) and not line.lstrip().startswith("#"):
                found.append(f"{relative}:{number}: {line.strip()}")
    assert found == [], "backends print only through sbatch_k8s.user_messages:\n" + \
        "\n".join(found)


def test_the_sink_writes_every_byte_to_the_descriptors_handed_in() -> None:
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    sink = OutputSink(out_write, err_write)
    sink.write_out(b"job output\n")
    sink.write_err(b"\x00\xffbinary")
    os.close(out_write)
    os.close(err_write)
    assert os.read(out_read, 100) == b"job output\n"
    assert os.read(err_read, 100) == b"\x00\xffbinary"
    os.close(out_read)
    os.close(err_read)


def test_a_submission_is_a_value() -> None:
    made = Submitted((7, 8, 9), "team-a")
    assert made.job_ids[0] == 7 and made.estimate is None
    with pytest.raises(AttributeError):
        made.job_ids = (1,)  # type: ignore[misc]
