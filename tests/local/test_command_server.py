"""The command server gives the same results as running a command in-process, forwards
signals, and steps aside when the code changed."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from tests.local.harness import LocalSlurm

IN_PROCESS = {"SBATCHK8S_SERVER": "0"}


def test_same_results_with_and_without_the_server(slurm: LocalSlurm) -> None:
    for env in (IN_PROCESS, {}, {}):
        done = slurm.run("sbatch", "--wait", "-o", "x.out", "--wrap", "echo $SLURM_JOB_NAME",
                         env=env)
        assert done.returncode == 0 and slurm.read("x.out") == "wrap\n"
        bad = slurm.run("sbatch", "--time=abc", "--wrap", "true", env=env)
        assert (bad.returncode, bad.stderr) == (255, "sbatch: error: Invalid --time "
                                                     "specification\n")
        listing = slurm.run("squeue", "-t", "all", "-h", "-o", "%j %t", env=env)
        assert listing.stdout.splitlines()[-1] == "wrap CD"
    assert (slurm.state / "server.sock").exists()


def test_signals_reach_the_command(slurm: LocalSlurm) -> None:
    slurm.run("squeue")  # starts the server
    slurm.wait_for(lambda: (slurm.state / "server.sock").exists())
    time.sleep(0.5)
    process = slurm.start("srun", "bash", "-c", "trap 'echo got TERM; exit 7' TERM; "
                          "echo ready; sleep 30 & wait")
    assert process.stdout is not None
    assert process.stdout.readline() == "ready\n"
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=30)
    assert process.returncode != 0
    assert "srun: forcing job termination" in err


def test_a_changed_source_retires_the_server(slurm: LocalSlurm) -> None:
    slurm.run("squeue")
    slurm.wait_for(lambda: (slurm.state / "server.sock").exists())
    from sbatch_k8s import server

    assert server.changed({server.__file__: 0.0})
    assert not server.changed(server.loaded_sources())


def test_a_pycache_made_beside_the_bundle_does_not_retire_the_server(tmp_path: Path) -> None:
    """A fresh checkout's first import from a folder makes its ``__pycache__``: the folder's
    time changes, its sources do not (the server went on serving; before, its commands ran
    cold, without the watch cache). A source added there does retire it."""
    from sbatch_k8s import server

    (tmp_path / "a.py").write_text("")
    sources = {str(tmp_path): server._source_names(str(tmp_path))}
    (tmp_path / "__pycache__").mkdir()
    assert not server.changed(sources)
    (tmp_path / "b.py").write_text("")
    assert server.changed(sources)


def test_a_served_command_runs_exactly_once(slurm: LocalSlurm) -> None:
    """The client must see the server's "started" before the child's "exited", however fast
    the command: otherwise it would run the command a second time itself."""
    slurm.run("squeue")
    slurm.wait_for(lambda: (slurm.state / "server.sock").exists())
    time.sleep(0.3)
    runs = [slurm.start("sbatch", "nonexistent.sh") for _ in range(40)]
    results = [process.communicate(timeout=60) for process in runs]
    assert [err for _, err in results] == ["sbatch: error: Unable to open file "
                                           "nonexistent.sh\n"] * 40
    assert all(process.returncode == 1 for process in runs)
