"""sbatch's output file names: the default ``slurm-%j.out`` (arrays ``slurm-%A_%a.out``),
``-o``/``-e`` patterns (``%j %x %A %a %N %n %u %t %s %J``, zero padding ``%4j``, the
10-digit cap, ``%%``, a backslash that disables expansion, unknown letters), ``-e`` alone,
a job name with a space, and ``--chdir`` for relative names.

Every case is one small job in its own directory (the script prints ``out`` and ``err``);
the names of the files it leaves there, and their contents, are compared. ``%N`` is the
batch node's *hostname*: real Slurm's emulated nodes all have the machine's hostname, ours
are named by address, so both become ``<hostname>``.
"""

from __future__ import annotations

import socket
from typing import Dict, List, Sequence

import pytest

from tests.conformance.compare import diff_text, parallel, report, value
from tests.conformance.normalise import Normaliser, id_pad, sort_lines
from tests.conformance.sides import Job, OurSlurm, RealSlurm, Side

SCRIPT = "#!/bin/sh\necho out\necho err >&2\n"

#: case -> sbatch options (the script is job.sh in the case's directory)
CASES: Dict[str, Sequence[str]] = {
    "default": [],
    "default-array": ["--array=1-2"],
    "name-and-id": ["-o", "%x-%j.out"],
    "array-ids-outside-array": ["-o", "nonarr-%A_%a.out"],
    "array-ids": ["--array=1-2", "-o", "arr-%A_%a.out"],
    "array-own-ids": ["--array=1-2", "-o", "arrj-%j.out"],
    "padding": ["-o", "pad-%4j.out"],
    "padding-10": ["-o", "pad10-%10j.out"],
    "padding-capped": ["-o", "pad12-%12j.out"],
    "percent": ["-o", "pct-%%-%j.out"],
    "backslash": ["-o", r"back\slash-%j.out"],
    "node-and-index": ["-o", "node-%N-%n.out"],
    "user-task-step": ["-o", "u-%u-t-%t-s-%s-J-%J.out"],
    "unknown-letters": ["-o", "unk-%b-%q-%Z.out"],
    "error-only": ["-e", "err-%j.out"],
    "output-and-error": ["-o", "o-%j.out", "-e", "e-%j.out"],
    "name-with-space": ["-J", "my name", "-o", "%x.out"],
    "chdir-relative": ["-D", "wd", "-o", "rel-%j.out"],
}


def run_case(side: Side, name: str) -> Job:
    directory = side.case_dir(f"files-{name}")
    (directory / "wd").mkdir(exist_ok=True)
    return side.batch(f"files-{name}", SCRIPT, CASES[name])


@pytest.fixture(scope="module")
def jobs(real: RealSlurm, ours: OurSlurm) -> Dict[str, object]:
    calls = {}
    for name in CASES:
        calls[f"real:{name}"] = lambda n=name: run_case(real, n)
        calls[f"ours:{name}"] = lambda n=name: run_case(ours, n)
    return parallel(calls, workers=12)


def placeholders(job: Job, own_ids: bool) -> Dict[int, str]:
    """The job's id ``<job>``; array ids become ``<A>`` (the array's id), or with ``own_ids``
    ``<job_i>`` (element *i*'s own id: which element shares the array's id differs by
    intent, see differences.py)."""
    if not job.array_ids:
        return {job.job_id: "<job>"}
    if own_ids:
        return {own: f"<job_{index}>" for index, own in job.array_ids.items()}
    return {job.job_id: "<A>"}


def listing(job: Job, other: Job, own_ids: bool, pad: int = 0) -> str:
    """Every file the job left (script excepted), with its sorted contents; ids of both
    sides' jobs replaced (see :func:`placeholders`); ``pad``: the width the case's ``%Nj``
    pads ids in file names to (``pad-0042`` and ``pad-1042`` are both ``%4j``)."""
    norm = Normaliser(job.side, placeholders(job, own_ids),
                      job.nodes() if not job.array_ids else [],
                      other_jobs=placeholders(other, own_ids))
    hostnames = [socket.gethostname()] if job.side.kind == "real" else list(
        job.side.node_names)
    out: List[str] = []
    for path in (p for p in job.cwd.rglob("*") if p.is_file() and p.name != "job.sh"):
        shown = str(path.relative_to(job.cwd))
        for hostname in hostnames:
            shown = shown.replace(hostname, "<hostname>")
        out.append(f"== {norm.text(shown, pad)}\n{sort_lines(norm.text(path.read_text()))}")
    return "".join(sorted(out))


@pytest.mark.parametrize("name", list(CASES))
def test_output_files(name: str, jobs: Dict[str, object]) -> None:
    real, ours = value(jobs[f"real:{name}"]), value(jobs[f"ours:{name}"])
    options = " ".join(CASES[name])
    own = name == "array-own-ids"
    pad = id_pad(options)
    report(diff_text(f"files-{name}", f"files of sbatch {options}",
                     listing(real, ours, own, pad), listing(ours, real, own, pad)))
