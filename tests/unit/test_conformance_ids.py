"""The conformance suite's job-id normalisation (tests/conformance/normalise.py) gives the
same text for both sides whatever their ids: a freshly purged real Slurm (ids 1, 2, …) next
to our counter at 101, or the other way round. Runs without real Slurm."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Dict

import pytest

from tests.conformance.normalise import Normaliser, id_pad, job_ids_in

REAL = SimpleNamespace(kind="real", node_names=("n1", "n2", "n3", "n4"), work=Path("/r"),
                       cluster="realslurm")
OURS = SimpleNamespace(kind="ours", node_names=tuple(f"127.0.0.{i}" for i in range(2, 18)),
                       work=Path("/o"), cluster="sbatch-k8s")


def both(real_text: str, our_text: str, real_ids: Dict[int, str],
         our_ids: Dict[int, str]) -> tuple:
    real = Normaliser(REAL, real_ids, ["n1", "n2"], other_jobs=our_ids)  # type: ignore[arg-type]
    ours = Normaliser(OURS, our_ids, ["127.0.0.2", "127.0.0.3"],  # type: ignore[arg-type]
                      other_jobs=real_ids)
    return real.text(real_text), ours.text(our_text)


@pytest.mark.parametrize("real_id, our_id", [(5, 105), (105, 5), (7, 12345), (99, 100),
                                             (123456, 3)])
@pytest.mark.parametrize("template", [
    "{id:>18} {name:>9} {name:>8} {user:>8}  R       0:01      2 {nodes}\n",   # squeue
    "{id:<12} {name:>10} {name:>10}\n{batch:<12} {name:>10}\n",            # sacct
    "JobId={id} JobName=x\n   NumNodes=2 NumCPUs=4 NodeList={nodes}\n",        # scontrol
    "pad10-{id:010}.out\n",                                                     # %10j
    "Submitted batch job {id}\n",
    "srun: error: Unable to create step for job {id}: More processors requested\n",
    "slurm-{id}_1.out {id}_[1-3] {id}.0 ExitCode=0:9 afterok:{id}\n",
])
def test_ids_of_any_width_normalise_alike(template: str, real_id: int, our_id: int) -> None:
    fields = dict(name="debug", user="root")
    real_text = template.format(id=real_id, batch=f"{real_id}.batch", nodes="n[1-2]",
                                **fields)
    our_text = template.format(id=our_id, batch=f"{our_id}.batch", nodes="127.0.0.[2-3]",
                               **fields)
    real, ours = both(real_text, our_text, {real_id: "<job>"}, {our_id: "<job>"})
    assert real == ours
    assert "<job" in real


@pytest.mark.parametrize("real_id, our_id", [(5, 105), (105, 5), (99, 100), (1, 999)])
def test_zero_padded_ids_keep_their_width(real_id: int, our_id: int) -> None:
    real, ours = both(f"pad-{real_id:04}.out\n", f"pad-{our_id:04}.out\n", {real_id: "<job>"},
                      {our_id: "<job>"})
    assert real == ours == "pad-<job:04>.out\n"


@pytest.mark.parametrize("real_id, our_id", [(1042, 7), (7, 1042), (12345, 3), (3, 12345),
                                             (99999, 100000)])
@pytest.mark.parametrize("pattern", ["pad-%4j.out", "pad-%5j.out", "pad-%4t-%2n-%5j-%3s.txt"])
def test_padded_names_do_not_depend_on_the_id_counter(pattern: str, real_id: int,
                                                      our_id: int) -> None:
    """``%4j`` prints 0007 for job 7 and 1042 for job 1042: both are the pattern's output,
    so a long-running Slurm's wide ids read as a fresh one's padded ones."""
    pad = id_pad(pattern)
    real = Normaliser(REAL, {real_id: "<job>"},  # type: ignore[arg-type]
                      other_jobs={our_id: "<job>"})
    ours = Normaliser(OURS, {our_id: "<job>"},  # type: ignore[arg-type]
                      other_jobs={real_id: "<job>"})
    assert real.text(f"pad-{real_id:0{pad}}.out", pad) == ours.text(
        f"pad-{our_id:0{pad}}.out", pad) == f"pad-<job:0{pad}>.out"


def test_an_id_a_pattern_left_unpadded_still_differs() -> None:
    """``pad-7.out`` for ``%4j`` is no padding at all, whatever the other side's width."""
    real = Normaliser(REAL, {1042: "<job>"}, other_jobs={7: "<job>"})  # type: ignore[arg-type]
    ours = Normaliser(OURS, {7: "<job>"}, other_jobs={1042: "<job>"})  # type: ignore[arg-type]
    assert real.text("pad-1042.out", 4) == "pad-<job:04>.out"
    assert ours.text("pad-7.out", 4) == "pad-<job>.out"
    assert ours.text("pad-00007.out", 4) == "pad-<job:05>.out"


def test_id_pad_reads_the_widest_job_field() -> None:
    assert (id_pad("-o pad-%4j.out"), id_pad("o-%j-%5t.txt"), id_pad("a-%3j-%12j")) == (4, 0, 12)


def test_node_names_and_counts_are_not_ids() -> None:
    """Job ids 1-5 of a freshly purged Slurm beside node names, counts and times."""
    text = "{all} {job} n5 NumCPUs=2 TRES=cpu=4,mem=2M 0:02 {first}\n"
    real, ours = both(text.format(all="n[1-4]", job="n[1-2]", first="n1"),
                      text.format(all="127.0.0.[2-5]", job="127.0.0.[2-3]", first="127.0.0.2"),
                      {1: "<done>", 2: "<fails>", 4: "<runner>", 5: "<killed>"},
                      {101: "<done>", 102: "<fails>", 104: "<runner>", 105: "<killed>"})
    assert real == ours == ("<host[0-3]> <node[0-1]> n5 NumCPUs=<fails> TRES=cpu=<runner>,"
                            "mem=2M 0:02 <node0>\n")


def test_columns_keep_their_width() -> None:
    real, _ = both(f"{5:>18} debug\n", "", {5: "<job>"}, {})
    assert real == f"{'<job>':>18} debug\n"


def test_job_ids_in_reads_tokens_only() -> None:
    assert job_ids_in("5|done|n[1-2]|n7|0:9|5.batch|6_1") == [5, 5, 6]
