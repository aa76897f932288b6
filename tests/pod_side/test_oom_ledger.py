"""Counting a node's cgroup OOM kills as Slurm's task/cgroup plugin reports them
(:mod:`sbatch_k8s.runtime.stepd.oom`): cgroup v1 and v2 files, one kill given to one step, the rest
to the batch step, slurmstepd's line."""

from __future__ import annotations

from pathlib import Path

from sbatch_k8s.runtime.stepd.oom import OOM_EXIT_SIGNAL, OomLedger, detected_line, node_ledger, \
    read_oom_kills

V1 = "oom_kill_disable 0\nunder_oom 0\noom_kill {n}\n"
V2 = "low 0\nhigh 0\nmax 3\noom 2\noom_kill {n}\noom_group_kill 0\n"


def _v1(root: Path, kills: int) -> None:
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "memory" / "memory.oom_control").write_text(V1.format(n=kills))


def test_reads_cgroup_v1_and_v2(tmp_path: Path) -> None:
    _v1(tmp_path / "v1", 3)
    (tmp_path / "v2").mkdir()
    (tmp_path / "v2" / "memory.events").write_text(V2.format(n=4))
    assert read_oom_kills(str(tmp_path / "v1")) == 3
    assert read_oom_kills(str(tmp_path / "v2")) == 4
    assert read_oom_kills(str(tmp_path / "none")) is None


def test_no_ledger_on_the_local_backend_or_without_a_count(tmp_path: Path) -> None:
    _v1(tmp_path, 0)
    assert node_ledger("local", str(tmp_path)) is None
    assert node_ledger("indexed-job", str(tmp_path / "missing")) is None
    assert isinstance(node_ledger("indexed-job", str(tmp_path)), OomLedger)


def test_each_kill_is_taken_once(tmp_path: Path) -> None:
    """Two steps running when one kill is counted: the first to look takes it; the batch
    step later takes only the kills no step took."""
    _v1(tmp_path, 0)
    ledger = OomLedger(str(tmp_path))
    batch_base = ledger.count()
    step_a, step_b = ledger.count(), ledger.count()
    _v1(tmp_path, 1)
    assert ledger.take(step_a) == 1
    assert ledger.take(step_b) == 0
    _v1(tmp_path, 3)
    assert ledger.take(batch_base) == 2


def test_slurmstepds_line_and_the_exit_signal() -> None:
    assert detected_line(1, "12.0") == (
        "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=12.0. Some of your "
        "processes may have been killed by the cgroup out-of-memory handler.\n")
    assert OOM_EXIT_SIGNAL == 125           # sacct's 0:125 for SIG_OOM (253)
